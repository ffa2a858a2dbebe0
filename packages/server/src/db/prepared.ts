import { createHash } from 'node:crypto';

/**
 * The SQL of the reads `compiledOnce` keeps, by text, with the name PostgreSQL prepares it under: the database then
 * plans such a read once per connection instead of on every request (a six-table page of tasks: 0.8 ms of planning
 * for 0.8 ms of execution). A name is made from the text, so it is the same on every connection and whenever the
 * text comes back; the least recently used text goes past the bound.
 */
const preparedNames = new Map<string, string>();
const MAX_NAMED_TEXTS = 1024;

/** The prepared statement name of a read's SQL when it is one `compiledOnce` keeps. */
export const preparedName = (sql: string): string | undefined => preparedNames.get(sql);

/** Names `sql` as a prepared statement (a read `compiledOnce` keeps). */
export function namePrepared(sql: string) {
  if (preparedNames.has(sql)) return;
  preparedNames.set(sql, `signalbox_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`);
  if (preparedNames.size > MAX_NAMED_TEXTS) preparedNames.delete(preparedNames.keys().next().value as string);
}

/** The most statements one connection keeps prepared: past it, the least recently used is deallocated. */
export const MAX_PREPARED_PER_CONNECTION = 32;

/**
 * The named statements one connection has prepared, least recently used first: `use(name)` answers the name to
 * deallocate first when this one is new and the connection holds its bound already.
 */
export class PreparedOnConnection {
  private readonly names = new Set<string>();

  use(name: string): string | undefined {
    if (this.names.delete(name)) {
      this.names.add(name);
      return undefined;
    }
    this.names.add(name);
    if (this.names.size <= MAX_PREPARED_PER_CONNECTION) return undefined;
    const oldest = this.names.values().next().value as string;
    this.names.delete(oldest);
    return oldest;
  }
}
