import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * The built-in Terraform state backend (Terraform's `http` backend protocol):
 * - `terraform_state`: one row per named state of a project, with its lock (Terraform's LockInfo as JSON text, who
 *   took it: a user or a task, and since when) and the version that is current;
 * - `terraform_state_version`: every version written (the state sealed at rest, gzip inside), with its serial,
 *   lineage, size and writer; the sealed state is in `secret`, as in every table the key rotation re-encrypts (user and/or task); `source` says whether Terraform wrote it or a rollback did;
 * - `task_state_credential`: the short-lived credential a running task uses against the backend (a SHA-256 of the
 *   secret only; valid while its task runs).
 */
export function terraformStates(dialect: Dialect) {
  const body = dialect === 'mysql' ? sql`longtext` : sql`text`;
  const text = dialect === 'mysql' ? sql`mediumtext` : sql`text`;
  const id = (table: CreateTableBuilder<string, never>) =>
    dialect === 'postgres'
      ? table.addColumn('id', 'serial', (c) => c.primaryKey())
      : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  return {
    async up(db: Kysely<unknown>) {
      await id(db.schema.createTable('terraform_state'))
        .addColumn('project_id', 'integer', (c) => c.notNull())
        .addColumn('name', sql`varchar(128)`, (c) => c.notNull())
        .addColumn('created', sql`varchar(40)`, (c) => c.notNull())
        .addColumn('current_version_id', 'integer')
        .addColumn('lock_id', sql`varchar(200)`)
        .addColumn('lock_info', text)
        .addColumn('locked_at', sql`varchar(40)`)
        .addColumn('locked_by_user_id', 'integer')
        .addColumn('locked_by_task_id', 'integer')
        .execute();
      await db.schema
        .createIndex('terraform_state_name_idx')
        .on('terraform_state')
        .columns(['project_id', 'name'])
        .unique()
        .execute();
      await id(db.schema.createTable('terraform_state_version'))
        .addColumn('state_id', 'integer', (c) => c.notNull())
        .addColumn('project_id', 'integer', (c) => c.notNull())
        .addColumn('serial', 'integer', (c) => c.notNull())
        .addColumn('lineage', sql`varchar(200)`, (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('secret', body, (c) => c.notNull())
        .addColumn('created', sql`varchar(40)`, (c) => c.notNull())
        .addColumn('user_id', 'integer')
        .addColumn('task_id', 'integer')
        .addColumn('source', sql`varchar(20)`, (c) => c.notNull())
        .addColumn('rolled_back_from', 'integer')
        .execute();
      await db.schema
        .createIndex('terraform_state_version_state_idx')
        .on('terraform_state_version')
        .columns(['state_id', 'id'])
        .execute();
      await db.schema
        .createTable('task_state_credential')
        .addColumn('task_id', 'integer', (c) => c.primaryKey())
        .addColumn('project_id', 'integer', (c) => c.notNull())
        .addColumn('secret_hash', sql`varchar(64)`, (c) => c.notNull())
        .addColumn('created', sql`varchar(40)`, (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('task_state_credential').execute();
      await db.schema.dropTable('terraform_state_version').execute();
      await db.schema.dropTable('terraform_state').execute();
    },
  };
}
