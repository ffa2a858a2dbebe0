import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * Two-factor sign-in with time-based one-time passwords (TOTP).
 * - `user_totp`: at most one per user. `secret` is the base32 secret sealed with the server's secret key
 *   (AES-256-GCM); `confirmed` turns 1 once the user entered a first code (until then sign-in does not ask for
 *   one); `last_step` is the time step of the last code accepted, so a code is never accepted twice.
 * - `user_totp_recovery`: the one-time recovery codes of a TOTP, each a bcrypt hash; a used code's row is deleted.
 * - `session.verified`: 0 while a session signed in with a password still waits for its second factor; such a
 *   session reaches nothing but the routes that complete or end it.
 */
export function totp(dialect: Dialect) {
  const time = sql`varchar(40)`;
  const withId = (table: CreateTableBuilder<string>) =>
    dialect === 'postgres'
      ? table.addColumn('id', 'serial', (c) => c.primaryKey())
      : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());

  return {
    async up(db: Kysely<unknown>) {
      await withId(db.schema.createTable('user_totp'))
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .addColumn('created', time, (c) => c.notNull())
        .addColumn('secret', sql`varchar(255)`, (c) => c.notNull())
        .addColumn('confirmed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('confirmed_at', time)
        .addColumn('last_step', 'integer')
        .execute();
      await db.schema.createIndex('user_totp_user_uq').unique().on('user_totp').column('user_id').execute();

      await withId(db.schema.createTable('user_totp_recovery'))
        .addColumn('totp_id', 'integer', (c) => c.notNull())
        .addColumn('code_hash', sql`varchar(255)`, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('user_totp_recovery_totp_idx')
        .on('user_totp_recovery')
        .column('totp_id')
        .execute();

      await db.schema
        .alterTable('session')
        .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('session').dropColumn('verified').execute();
      await db.schema.dropTable('user_totp_recovery').execute();
      await db.schema.dropTable('user_totp').execute();
    },
  };
}
