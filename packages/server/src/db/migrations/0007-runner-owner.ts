import { type Kysely, sql } from 'kysely';

/**
 * Which process holds an instance id: `task_runner.host` and `.pid`, written with every heartbeat. A server
 * starting under an id that a live process on the same host (or a still-beating one elsewhere) holds refuses
 * to start, instead of ending that process's running tasks as interrupted.
 */
export function runnerOwner() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('task_runner').addColumn('host', sql`varchar(255)`).execute();
      await db.schema.alterTable('task_runner').addColumn('pid', 'integer').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('task_runner').dropColumn('pid').execute();
      await db.schema.alterTable('task_runner').dropColumn('host').execute();
    },
  };
}
