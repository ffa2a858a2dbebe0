import { type Kysely, sql } from 'kysely';

/**
 * What a runner's hello reports beside its version: the sandbox its tasks run in (`sandbox`: bwrap, off or
 * refused; null: never reported) with why when it is not bwrap (`sandbox_reason`), and the protocol version it
 * speaks (`protocol`; null: never connected), kept also when the server refused it as incompatible.
 */
export function runnerReports() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('remote_runner').addColumn('sandbox', sql`varchar(20)`).execute();
      await db.schema.alterTable('remote_runner').addColumn('sandbox_reason', sql`varchar(1000)`).execute();
      await db.schema.alterTable('remote_runner').addColumn('protocol', 'integer').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('remote_runner').dropColumn('protocol').execute();
      await db.schema.alterTable('remote_runner').dropColumn('sandbox_reason').execute();
      await db.schema.alterTable('remote_runner').dropColumn('sandbox').execute();
    },
  };
}
