import { type Kysely, sql } from 'kysely';

/**
 * API tokens may be limited: `scopes` holds what the token may do as a comma-separated list of read, run, write
 * and admin (null: its owner's full rights), `project_ids` the only projects it reaches as a JSON array of ids
 * (null: every project of its owner). Tokens made before keep null in both, so they keep their owner's full rights.
 */
export function tokenScopes() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('api_token').addColumn('scopes', sql`varchar(100)`).execute();
      await db.schema.alterTable('api_token').addColumn('project_ids', sql`text`).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('api_token').dropColumn('project_ids').execute();
      await db.schema.alterTable('api_token').dropColumn('scopes').execute();
    },
  };
}
