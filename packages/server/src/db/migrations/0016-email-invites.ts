import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * An invite may name an e-mail address nobody has an account for yet: `project_invite.user_id` becomes nullable
 * (the account it is for, set once one with that address is created), and invites are found by address too.
 * SQLite cannot drop a NOT NULL constraint, so there the table is rebuilt with its rows and indexes.
 */
export function emailInvites(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect === 'postgres')
        await sql`alter table project_invite alter column user_id drop not null`.execute(db);
      else if (dialect === 'mysql')
        await sql`alter table project_invite modify user_id integer null`.execute(db);
      else await rebuildSqlite(db, false);
      await db.schema.createIndex('project_invite_email_idx').on('project_invite').column('email').execute();
    },
    async down(db: Kysely<unknown>) {
      // Invites of no account cannot stay in a table whose every invite names one.
      await sql`delete from project_invite where user_id is null`.execute(db);
      const drop = db.schema.dropIndex('project_invite_email_idx');
      await (dialect === 'mysql' ? drop.on('project_invite') : drop).execute();
      if (dialect === 'postgres')
        await sql`alter table project_invite alter column user_id set not null`.execute(db);
      else if (dialect === 'mysql')
        await sql`alter table project_invite modify user_id integer not null`.execute(db);
      else await rebuildSqlite(db, true);
    },
  };
}

/** The SQLite table of 0009-project-invites again, `user_id` nullable or not, with its rows and indexes. */
async function rebuildSqlite(db: Kysely<unknown>, userRequired: boolean) {
  const time = sql`varchar(40)`;
  await db.schema
    .createTable('project_invite_rebuilt')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('project_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => (userRequired ? c.notNull() : c))
    .addColumn('email', sql`varchar(255)`, (c) => c.notNull().defaultTo(''))
    .addColumn('role', sql`varchar(50)`, (c) => c.notNull())
    .addColumn('status', sql`varchar(20)`, (c) => c.notNull())
    .addColumn('token_hash', sql`varchar(64)`, (c) => c.notNull())
    .addColumn('inviter_user_id', 'integer')
    .addColumn('created', time, (c) => c.notNull())
    .addColumn('expires_at', time)
    .addColumn('accepted_at', time)
    .execute();
  const columns = sql.raw(
    'id, project_id, user_id, email, role, status, token_hash, inviter_user_id, created, expires_at, accepted_at',
  );
  await sql`insert into project_invite_rebuilt (${columns}) select ${columns} from project_invite`.execute(
    db,
  );
  await db.schema.dropTable('project_invite').execute();
  await sql`alter table project_invite_rebuilt rename to project_invite`.execute(db);
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
}
