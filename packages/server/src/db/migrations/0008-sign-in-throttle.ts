import { type Kysely, sql } from 'kysely';

/**
 * Failed password sign-ins, shared by every server instance: one row per login+address pair (its failures and
 * the time it must wait until) and one per address (its failures in the current window). `id` is a SHA-256 of
 * the row's key, so logins of any length and character set make a fixed, ASCII key on every dialect. Rows
 * whose last failure is a day old are pruned by the sign-in route.
 */
export function signInThrottle() {
  const time = sql`varchar(40)`;
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('sign_in_throttle')
        .addColumn('id', sql`varchar(64)`, (c) => c.primaryKey())
        .addColumn('user_id', 'integer')
        .addColumn('login', sql`varchar(255)`, (c) => c.notNull().defaultTo(''))
        .addColumn('address', sql`varchar(64)`, (c) => c.notNull())
        .addColumn('failures', 'integer', (c) => c.notNull())
        .addColumn('first_failure', time, (c) => c.notNull())
        .addColumn('last_failure', time, (c) => c.notNull())
        .addColumn('blocked_until', time)
        .execute();
      await db.schema
        .createIndex('sign_in_throttle_user_idx')
        .on('sign_in_throttle')
        .column('user_id')
        .execute();
      await db.schema
        .createIndex('sign_in_throttle_last_idx')
        .on('sign_in_throttle')
        .column('last_failure')
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('sign_in_throttle').execute();
    },
  };
}
