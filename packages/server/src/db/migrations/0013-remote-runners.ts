import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * Remote runners: `signalbox runner` processes on other machines that connect out to a server and run the tasks
 * it gives them.
 *
 * - `remote_runner`: one row per registered runner. `project_id` null = a global runner (admins), else a project
 *   runner. `token_hash` is the SHA-256 of the runner's own token (shown once, at registration). `public_key` is
 *   the PEM the runner registered; job payloads are encrypted to it. `tags` is a JSON array of strings. `touched`
 *   is its last heartbeat (database clock), `started_at` the start of the runner process it last heard from, and
 *   `instance_id` the server instance holding its connection (null: not connected).
 * - `runner_registration_token`: one-time registration tokens (SHA-256 hashed) made by an admin (global) or a
 *   project owner (project runner); `used_at` is set by the registration that spends it.
 * - `template.runner_tag`, `inventory.runner_tag`: a task of such a template (or run with such an inventory) runs
 *   only on a runner carrying the tag.
 * - `task.remote_runner_id`: the runner a task was given to; `task.runner_seq`: the last output batch of that
 *   runner the server stored, so a batch resent after a reconnect is stored once.
 */
export function remoteRunners(dialect: Dialect) {
  const time = sql`varchar(40)`;
  const id = (t: ReturnType<Kysely<unknown>['schema']['createTable']>) =>
    dialect === 'postgres'
      ? t.addColumn('id', 'serial', (c) => c.primaryKey())
      : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  return {
    async up(db: Kysely<unknown>) {
      await id(db.schema.createTable('remote_runner'))
        .addColumn('project_id', 'integer')
        .addColumn('name', sql`varchar(255)`, (c) => c.notNull())
        .addColumn('tags', sql`varchar(2048)`, (c) => c.notNull().defaultTo('[]'))
        .addColumn('token_hash', sql`varchar(64)`, (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('max_parallel_tasks', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('version', sql`varchar(64)`, (c) => c.notNull().defaultTo(''))
        .addColumn('webhook', sql`varchar(1024)`, (c) => c.notNull().defaultTo(''))
        .addColumn('created', time, (c) => c.notNull())
        .addColumn('touched', time)
        .addColumn('started_at', time)
        .addColumn('instance_id', sql`varchar(64)`)
        .execute();
      await db.schema
        .createIndex('remote_runner_token_uq')
        .unique()
        .on('remote_runner')
        .column('token_hash')
        .execute();
      await db.schema
        .createIndex('remote_runner_project_idx')
        .on('remote_runner')
        .column('project_id')
        .execute();
      await id(db.schema.createTable('runner_registration_token'))
        .addColumn('project_id', 'integer')
        .addColumn('token_hash', sql`varchar(64)`, (c) => c.notNull())
        .addColumn('user_id', 'integer')
        .addColumn('created', time, (c) => c.notNull())
        .addColumn('expires_at', time, (c) => c.notNull())
        .addColumn('used_at', time)
        .execute();
      await db.schema
        .createIndex('runner_registration_token_uq')
        .unique()
        .on('runner_registration_token')
        .column('token_hash')
        .execute();
      await db.schema.alterTable('template').addColumn('runner_tag', sql`varchar(255)`).execute();
      await db.schema.alterTable('inventory').addColumn('runner_tag', sql`varchar(255)`).execute();
      await db.schema.alterTable('task').addColumn('remote_runner_id', 'integer').execute();
      await db.schema
        .alterTable('task')
        .addColumn('runner_seq', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('task').dropColumn('runner_seq').execute();
      await db.schema.alterTable('task').dropColumn('remote_runner_id').execute();
      await db.schema.alterTable('inventory').dropColumn('runner_tag').execute();
      await db.schema.alterTable('template').dropColumn('runner_tag').execute();
      await db.schema.dropTable('runner_registration_token').execute();
      await db.schema.dropTable('remote_runner').execute();
    },
  };
}
