import { type Kysely, sql } from 'kysely';

/**
 * Run-once schedules and keys whose secret lives on the server.
 *
 * `schedule.type` is '' for a cron schedule (as the peer) or 'run_at' for one that starts its task once at
 * `run_at` (ISO 8601, UTC) and is then disabled, or deleted with `delete_after_run`. `last_run_at` is when the
 * scheduler last started a task of the schedule; `run_missed` marks a run-once schedule whose time passed while
 * no server was running (longer ago than the catch-up grace), disabled without running.
 *
 * `access_key.source_storage_type` is null for a secret stored (encrypted) in the database, 'env' or 'file' for
 * one read at task time from the server's environment variable or file named by `source_storage_key`.
 */
export function runOnceAndKeySources() {
  const time = sql`varchar(40)`;
  return {
    async up(db: Kysely<unknown>) {
      // One column per statement: SQLite's ALTER TABLE adds one column at a time.
      const schedule = () => db.schema.alterTable('schedule');
      await schedule()
        .addColumn('type', sql`varchar(20)`, (c) => c.notNull().defaultTo(''))
        .execute();
      await schedule().addColumn('run_at', time).execute();
      await schedule()
        .addColumn('delete_after_run', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await schedule().addColumn('last_run_at', time).execute();
      await schedule()
        .addColumn('run_missed', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('access_key').addColumn('source_storage_type', sql`varchar(20)`).execute();
      await db.schema.alterTable('access_key').addColumn('source_storage_key', sql`varchar(1024)`).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('access_key').dropColumn('source_storage_key').execute();
      await db.schema.alterTable('access_key').dropColumn('source_storage_type').execute();
      for (const column of ['run_missed', 'last_run_at', 'delete_after_run', 'run_at', 'type'])
        await db.schema.alterTable('schedule').dropColumn(column).execute();
    },
  };
}
