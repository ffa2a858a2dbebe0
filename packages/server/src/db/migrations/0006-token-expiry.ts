import { type Kysely, sql } from 'kysely';

/**
 * API tokens may carry an expiry time (ISO 8601, null = never). An expired token stops authenticating at that
 * moment and is purged the next time its owner lists their tokens, so dead tokens do not pile up.
 */
export function tokenExpiry() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('api_token').addColumn('expires', sql`varchar(40)`).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('api_token').dropColumn('expires').execute();
    },
  };
}
