import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * Age-based retention: `project.task_retention_days` (0 = the server default SIGNALBOX_TASK_RETENTION_DAYS)
 * says how long finished tasks and their output are kept. The retention job clears `build_task_id` references
 * to the tasks it deletes; the index keeps that update from scanning the whole task table once per chunk.
 */
export function retention(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('project')
        .addColumn('task_retention_days', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('task_build_task_idx').on('task').column('build_task_id').execute();
    },
    async down(db: Kysely<unknown>) {
      const drop = db.schema.dropIndex('task_build_task_idx');
      // Only MySQL names the table of the index it drops.
      await (dialect === 'mysql' ? drop.on('task') : drop).execute();
      await db.schema.alterTable('project').dropColumn('task_retention_days').execute();
    },
  };
}
