import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * Several server instances on one database: each running instance keeps a row in `task_runner` with its last
 * heartbeat; `task.runner` names the instance that claimed a task (set in the same conditional UPDATE that
 * moves it to `starting`) and `task.control` carries a stop/confirm/reject request to that instance. The one
 * row of `task_queue_lock` is a short lease that makes claiming waiting tasks one instance at a time, so the
 * project and template limits hold across instances.
 */
export function taskRunners(dialect: Dialect) {
  void dialect;
  const instanceId = sql`varchar(64)`;
  const time = sql`varchar(40)`;
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('task_runner')
        .addColumn('id', instanceId, (c) => c.primaryKey())
        .addColumn('heartbeat', time, (c) => c.notNull())
        .execute();
      await db.schema.alterTable('task').addColumn('runner', instanceId).execute();
      await db.schema.alterTable('task').addColumn('control', sql`varchar(16)`).execute();
      await db.schema
        .createTable('task_queue_lock')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('holder', instanceId)
        .addColumn('expires', time, (c) => c.notNull().defaultTo(''))
        .execute();
      await db
        .insertInto('task_queue_lock' as never)
        .values({ id: 1, holder: null, expires: '' } as never)
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('task_queue_lock').execute();
      await db.schema.alterTable('task').dropColumn('control').execute();
      await db.schema.alterTable('task').dropColumn('runner').execute();
      await db.schema.dropTable('task_runner').execute();
    },
  };
}
