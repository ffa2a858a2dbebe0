import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * Project invites: an owner (or anyone holding the manage-team bit) invites an existing user with a role; the
 * user accepts (and joins with that role) or declines. `token_hash` is the SHA-256 of the invite's token, which
 * is shown once, when the invite is made. `status` is pending, accepted or declined; a pending invite whose
 * `expires_at` has passed reads as expired.
 */
export function projectInvites(dialect: Dialect) {
  const time = sql`varchar(40)`;
  return {
    async up(db: Kysely<unknown>) {
      const table = db.schema.createTable('project_invite');
      await (dialect === 'postgres'
        ? table.addColumn('id', 'serial', (c) => c.primaryKey())
        : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      )
        .addColumn('project_id', 'integer', (c) => c.notNull())
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .addColumn('email', sql`varchar(255)`, (c) => c.notNull().defaultTo(''))
        .addColumn('role', sql`varchar(50)`, (c) => c.notNull())
        .addColumn('status', sql`varchar(20)`, (c) => c.notNull())
        .addColumn('token_hash', sql`varchar(64)`, (c) => c.notNull())
        .addColumn('inviter_user_id', 'integer')
        .addColumn('created', time, (c) => c.notNull())
        .addColumn('expires_at', time)
        .addColumn('accepted_at', time)
        .execute();
      await db.schema
        .createIndex('project_invite_token_uq')
        .unique()
        .on('project_invite')
        .column('token_hash')
        .execute();
      await db.schema
        .createIndex('project_invite_project_idx')
        .on('project_invite')
        .columns(['project_id', 'user_id'])
        .execute();
      await db.schema.createIndex('project_invite_user_idx').on('project_invite').column('user_id').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('project_invite').execute();
    },
  };
}
