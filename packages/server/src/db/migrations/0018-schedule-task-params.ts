import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * A schedule's default task parameters (Semaphore's `task_params`: extra variables, message, branch, inventory,
 * arguments, app parameters), given to every task it starts, as JSON object text; null reads as none.
 */
export function scheduleTaskParams(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>) {
      const text = dialect === 'mysql' ? sql`mediumtext` : sql`text`;
      await db.schema.alterTable('schedule').addColumn('task_params', text).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('schedule').dropColumn('task_params').execute();
    },
  };
}
