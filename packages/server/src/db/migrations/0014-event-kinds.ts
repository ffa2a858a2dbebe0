import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * What an activity event says, as data the console renders in the reader's language: `kind` names it (e.g.
 * `task.finished`, `template.created`) and `params` holds its values as a JSON object (e.g. `{"task_id":7,
 * "status":"success"}`). The English `description` stays (the API keeps it); events written before this
 * migration, and those of kinds the console does not know, have a null kind and show their description.
 */
export function eventKinds() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('event').addColumn('kind', sql`varchar(64)`).execute();
      await db.schema.alterTable('event').addColumn('params', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('event').dropColumn('params').execute();
      await db.schema.alterTable('event').dropColumn('kind').execute();
    },
  };
}
