/**
 * The SQL of the first shapes compiled, by text, with the name PostgreSQL prepares it under on each connection
 * (`preparedName`): the database then plans such a read once per connection instead of on every request (a
 * six-table page of tasks: 0.8 ms of planning for 0.8 ms of execution). Bounded, so the statements each connection
 * keeps stay few whatever values clients send.
 */
const preparedNames = new Map<string, string>();
const MAX_PREPARED = 64;

/** The prepared statement name of a read's SQL when it is one `compiledOnce` keeps. */
export const preparedName = (sql: string): string | undefined => preparedNames.get(sql);

/** Names `sql` as a prepared statement, unless the names are all given. */
export function namePrepared(sql: string) {
  if (preparedNames.size < MAX_PREPARED && !preparedNames.has(sql))
    preparedNames.set(sql, `signalbox_read_${preparedNames.size + 1}`);
}
