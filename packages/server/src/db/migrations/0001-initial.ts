import { type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/** The first schema: every product entity plus sessions, API tokens, task output, events and options. */
export function initial(dialect: Dialect) {
  // MySQL's TEXT holds 64 KB; documents and log lines need more there.
  const longText = dialect === 'mysql' ? sql`mediumtext` : sql`text`;
  const idCol = <T extends string>(t: CreateTableBuilder<T>) =>
    dialect === 'postgres'
      ? t.addColumn('id', 'serial', (c) => c.primaryKey())
      : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  const notNull = (c: ColumnDefinitionBuilder) => c.notNull();
  const bool = (c: ColumnDefinitionBuilder) => c.notNull().defaultTo(0);
  const name = sql`varchar(255)`;
  const time = sql`varchar(40)`;

  return {
    async up(db: Kysely<unknown>) {
      await idCol(db.schema.createTable('user'))
        .addColumn('created', time, notNull)
        .addColumn('username', name, notNull)
        .addColumn('name', name, notNull)
        .addColumn('email', name, notNull)
        .addColumn('password', name, notNull)
        .addColumn('admin', 'integer', bool)
        .addColumn('alert', 'integer', bool)
        .addColumn('external', 'integer', bool)
        .addColumn('can_create_project', 'integer', bool)
        .execute();
      await db.schema.createIndex('user_username_uq').unique().on('user').column('username').execute();
      await db.schema.createIndex('user_email_uq').unique().on('user').column('email').execute();

      await idCol(db.schema.createTable('session'))
        .addColumn('token_hash', sql`varchar(64)`, notNull)
        .addColumn('user_id', 'integer', notNull)
        .addColumn('created', time, notNull)
        .addColumn('last_active', time, notNull)
        .addColumn('expired', 'integer', bool)
        .addColumn('ip', sql`varchar(64)`, (c) => c.notNull().defaultTo(''))
        .addColumn('user_agent', sql`varchar(512)`, (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema.createIndex('session_token_uq').unique().on('session').column('token_hash').execute();

      await db.schema
        .createTable('api_token')
        .addColumn('id', sql`varchar(32)`, (c) => c.primaryKey())
        .addColumn('token_hash', sql`varchar(64)`, notNull)
        .addColumn('name', name, (c) => c.notNull().defaultTo(''))
        .addColumn('user_id', 'integer', notNull)
        .addColumn('created', time, notNull)
        .addColumn('expired', 'integer', bool)
        .execute();
      await db.schema
        .createIndex('api_token_hash_uq')
        .unique()
        .on('api_token')
        .column('token_hash')
        .execute();

      await idCol(db.schema.createTable('project'))
        .addColumn('created', time, notNull)
        .addColumn('name', name, notNull)
        .addColumn('alert', 'integer', bool)
        .addColumn('alert_chat', sql`varchar(30)`)
        .addColumn('max_parallel_tasks', 'integer', bool)
        .addColumn('type', sql`varchar(20)`, (c) => c.notNull().defaultTo(''))
        .execute();

      await idCol(db.schema.createTable('project_user'))
        .addColumn('project_id', 'integer', notNull)
        .addColumn('user_id', 'integer', notNull)
        .addColumn('role', sql`varchar(50)`, notNull)
        .addColumn('created', time, notNull)
        .execute();
      await db.schema
        .createIndex('project_user_uq')
        .unique()
        .on('project_user')
        .columns(['project_id', 'user_id'])
        .execute();
      await db.schema.createIndex('project_user_user_idx').on('project_user').column('user_id').execute();

      await idCol(db.schema.createTable('access_key'))
        .addColumn('project_id', 'integer', notNull)
        .addColumn('name', name, notNull)
        .addColumn('type', sql`varchar(30)`, notNull)
        .addColumn('secret', longText)
        .addColumn('owner', sql`varchar(20)`, (c) => c.notNull().defaultTo(''))
        .addColumn('environment_id', 'integer')
        .execute();
      await db.schema.createIndex('access_key_project_idx').on('access_key').column('project_id').execute();

      await idCol(db.schema.createTable('repository'))
        .addColumn('project_id', 'integer', notNull)
        .addColumn('name', name, notNull)
        .addColumn('git_url', sql`varchar(2048)`, notNull)
        .addColumn('git_branch', name, (c) => c.notNull().defaultTo(''))
        .addColumn('ssh_key_id', 'integer')
        .execute();
      await db.schema.createIndex('repository_project_idx').on('repository').column('project_id').execute();

      await idCol(db.schema.createTable('inventory'))
        .addColumn('project_id', 'integer', notNull)
        .addColumn('name', name, notNull)
        .addColumn('type', sql`varchar(30)`, notNull)
        .addColumn('inventory', longText, notNull)
        .addColumn('ssh_key_id', 'integer')
        .addColumn('become_key_id', 'integer')
        .addColumn('repository_id', 'integer')
        .execute();
      await db.schema.createIndex('inventory_project_idx').on('inventory').column('project_id').execute();

      await idCol(db.schema.createTable('environment'))
        .addColumn('project_id', 'integer', notNull)
        .addColumn('name', name, notNull)
        .addColumn('json', longText, notNull)
        .addColumn('env', longText, notNull)
        .execute();
      await db.schema.createIndex('environment_project_idx').on('environment').column('project_id').execute();

      await idCol(db.schema.createTable('view'))
        .addColumn('project_id', 'integer', notNull)
        .addColumn('title', name, notNull)
        .addColumn('position', 'integer', bool)
        .execute();
      await db.schema.createIndex('view_project_idx').on('view').column('project_id').execute();

      await idCol(db.schema.createTable('template'))
        .addColumn('project_id', 'integer', notNull)
        .addColumn('name', name, notNull)
        .addColumn('description', longText, notNull)
        .addColumn('type', sql`varchar(10)`, (c) => c.notNull().defaultTo(''))
        .addColumn('app', sql`varchar(50)`, (c) => c.notNull().defaultTo(''))
        .addColumn('playbook', name, (c) => c.notNull().defaultTo(''))
        .addColumn('inventory_id', 'integer')
        .addColumn('repository_id', 'integer')
        .addColumn('environment_id', 'integer')
        .addColumn('vault_key_id', 'integer')
        .addColumn('view_id', 'integer')
        .addColumn('build_template_id', 'integer')
        .addColumn('start_version', sql`varchar(50)`)
        .addColumn('autorun', 'integer', bool)
        .addColumn('suppress_success_alerts', 'integer', bool)
        .addColumn('arguments', longText)
        .addColumn('allow_override_args_in_task', 'integer', bool)
        .addColumn('allow_override_branch_in_task', 'integer', bool)
        .addColumn('allow_parallel_tasks', 'integer', bool)
        .addColumn('git_branch', name)
        .addColumn('survey_vars', longText, notNull)
        .addColumn('task_params', longText, notNull)
        .execute();
      await db.schema.createIndex('template_project_idx').on('template').column('project_id').execute();

      await idCol(db.schema.createTable('schedule'))
        .addColumn('project_id', 'integer', notNull)
        .addColumn('template_id', 'integer', notNull)
        .addColumn('cron_format', sql`varchar(100)`, notNull)
        .addColumn('repository_id', 'integer')
        .addColumn('name', name, (c) => c.notNull().defaultTo(''))
        .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('last_commit_hash', sql`varchar(64)`)
        .execute();
      await db.schema.createIndex('schedule_project_idx').on('schedule').column('project_id').execute();
      await db.schema.createIndex('schedule_template_idx').on('schedule').column('template_id').execute();

      await idCol(db.schema.createTable('task'))
        .addColumn('project_id', 'integer', notNull)
        .addColumn('template_id', 'integer', notNull)
        .addColumn('status', sql`varchar(30)`, notNull)
        .addColumn('message', sql`varchar(500)`, (c) => c.notNull().defaultTo(''))
        .addColumn('user_id', 'integer')
        .addColumn('integration_id', 'integer')
        .addColumn('schedule_id', 'integer')
        .addColumn('created', time, notNull)
        .addColumn('start', time)
        .addColumn('end', time)
        .addColumn('version', sql`varchar(50)`)
        .addColumn('build_task_id', 'integer')
        .addColumn('commit_hash', sql`varchar(64)`)
        .addColumn('commit_message', sql`varchar(255)`)
        .addColumn('playbook', name, (c) => c.notNull().defaultTo(''))
        .addColumn('environment', longText, notNull)
        .addColumn('secret', longText)
        .addColumn('arguments', longText)
        .addColumn('git_branch', name)
        .addColumn('inventory_id', 'integer')
        .addColumn('params', longText, notNull)
        .addColumn('debug', 'integer', bool)
        .addColumn('dry_run', 'integer', bool)
        .addColumn('diff', 'integer', bool)
        .execute();
      await db.schema.createIndex('task_project_idx').on('task').columns(['project_id', 'id']).execute();
      await db.schema.createIndex('task_template_idx').on('task').columns(['template_id', 'id']).execute();
      await db.schema.createIndex('task_status_idx').on('task').column('status').execute();

      await (dialect === 'postgres'
        ? db.schema.createTable('task_output').addColumn('id', 'bigserial', (c) => c.primaryKey())
        : dialect === 'mysql'
          ? db.schema
              .createTable('task_output')
              .addColumn('id', 'bigint', (c) => c.primaryKey().autoIncrement())
          : db.schema
              .createTable('task_output')
              .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      )
        .addColumn('task_id', 'integer', notNull)
        .addColumn('time', time, notNull)
        .addColumn('output', dialect === 'mysql' ? sql`longtext` : sql`text`, notNull)
        .execute();
      await db.schema
        .createIndex('task_output_task_idx')
        .on('task_output')
        .columns(['task_id', 'id'])
        .execute();

      await idCol(db.schema.createTable('event'))
        .addColumn('project_id', 'integer')
        .addColumn('user_id', 'integer')
        .addColumn('object_id', 'integer')
        .addColumn('object_type', sql`varchar(50)`, (c) => c.notNull().defaultTo(''))
        .addColumn('description', sql`varchar(1000)`, notNull)
        .addColumn('created', time, notNull)
        .execute();
      await db.schema.createIndex('event_project_idx').on('event').columns(['project_id', 'id']).execute();

      await db.schema
        .createTable('option')
        .addColumn('key', sql`varchar(255)`, (c) => c.primaryKey())
        .addColumn('value', sql`varchar(4000)`, notNull)
        .execute();

      await idCol(db.schema.createTable('integration'))
        .addColumn('project_id', 'integer', notNull)
        .addColumn('name', name, notNull)
        .addColumn('template_id', 'integer', notNull)
        .addColumn('auth_method', sql`varchar(20)`, (c) => c.notNull().defaultTo(''))
        .addColumn('auth_header', name, (c) => c.notNull().defaultTo(''))
        .addColumn('auth_secret_id', 'integer')
        .addColumn('searchable', 'integer', bool)
        .addColumn('task_params', longText, notNull)
        .execute();
      await db.schema.createIndex('integration_project_idx').on('integration').column('project_id').execute();

      await idCol(db.schema.createTable('integration_alias'))
        .addColumn('project_id', 'integer', notNull)
        .addColumn('integration_id', 'integer')
        .addColumn('alias', sql`varchar(64)`, notNull)
        .execute();
      await db.schema
        .createIndex('integration_alias_uq')
        .unique()
        .on('integration_alias')
        .column('alias')
        .execute();

      await idCol(db.schema.createTable('integration_matcher'))
        .addColumn('integration_id', 'integer', notNull)
        .addColumn('name', name, notNull)
        .addColumn('match_type', sql`varchar(20)`, notNull)
        .addColumn('body_data_type', sql`varchar(20)`, notNull)
        .addColumn('key', name, notNull)
        .addColumn('method', sql`varchar(20)`, notNull)
        .addColumn('value', sql`varchar(1000)`, notNull)
        .execute();
      await db.schema
        .createIndex('integration_matcher_idx')
        .on('integration_matcher')
        .column('integration_id')
        .execute();

      await idCol(db.schema.createTable('integration_extract_value'))
        .addColumn('integration_id', 'integer', notNull)
        .addColumn('name', name, notNull)
        .addColumn('value_source', sql`varchar(20)`, notNull)
        .addColumn('body_data_type', sql`varchar(20)`, notNull)
        .addColumn('key', name, notNull)
        .addColumn('variable', name, notNull)
        .addColumn('variable_type', sql`varchar(20)`, (c) => c.notNull().defaultTo('environment'))
        .execute();
      await db.schema
        .createIndex('integration_extract_value_idx')
        .on('integration_extract_value')
        .column('integration_id')
        .execute();
    },
  };
}
