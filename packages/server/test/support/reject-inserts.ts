import { sql } from 'kysely';
import type { Harness } from './harness';

/** The message the database gives for an insert `rejectInserts` refused. */
export const REJECTED_INSERT = 'insert refused by a test trigger';

/**
 * Makes the test database itself refuse every insert into `table` (a trigger, in each dialect's syntax) until the
 * returned function is called: a write failing halfway through a request, without touching the app's code.
 */
export async function rejectInserts(h: Harness, table: 'event' | 'schedule' | 'task' | 'template') {
  const { db, dialect } = h.deps;
  const name = sql.raw(`reject_${table}_insert`);
  const target = sql.table(table);
  if (dialect === 'sqlite') {
    await sql`CREATE TRIGGER ${name} BEFORE INSERT ON ${target} BEGIN SELECT RAISE(ABORT, ${sql.lit(REJECTED_INSERT)}); END`.execute(
      db,
    );
    return async () => void (await sql`DROP TRIGGER ${name}`.execute(db));
  }
  if (dialect === 'postgres') {
    await sql`CREATE FUNCTION ${name}() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION ${sql.lit(REJECTED_INSERT)}; END $$ LANGUAGE plpgsql`.execute(
      db,
    );
    await sql`CREATE TRIGGER ${name} BEFORE INSERT ON ${target} FOR EACH ROW EXECUTE FUNCTION ${name}()`.execute(
      db,
    );
    return async () => {
      await sql`DROP TRIGGER ${name} ON ${target}`.execute(db);
      await sql`DROP FUNCTION ${name}()`.execute(db);
    };
  }
  await sql`CREATE TRIGGER ${name} BEFORE INSERT ON ${target} FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = ${sql.lit(REJECTED_INSERT)}`.execute(
    db,
  );
  return async () => void (await sql`DROP TRIGGER ${name}`.execute(db));
}
