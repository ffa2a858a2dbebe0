import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * The scheduler claims each cron tick by moving `schedule.last_tick` forward in one conditional UPDATE, so a
 * tick fires once even when several server processes share the database.
 */
export function scheduler(dialect: Dialect) {
  void dialect;
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('schedule').addColumn('last_tick', sql`varchar(40)`).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('schedule').dropColumn('last_tick').execute();
    },
  };
}
