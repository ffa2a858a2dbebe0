import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * Workflows: a project's graphs of template, approval and delay nodes (`workflow.definition`: the survey, nodes and
 * edges as JSON text), their runs (`workflow_run`, with a copy of the definition it runs), each run's node states
 * (`workflow_run_node`, one row per node: the conditional updates of these rows are the claims that keep two
 * instances from starting a node twice) and the answers people gave to approval nodes (`workflow_approval`, bound to
 * the digest of the inputs they saw). A task a template node started names its run and node
 * (`task.workflow_run_id`, `task.workflow_node_id`); `task.secret_outputs` holds the secret outputs a task published,
 * sealed. Schedules and integrations may start a workflow (`workflow_id`, their template_id then 0).
 */
export function workflows(dialect: Dialect) {
  const text = dialect === 'mysql' ? sql`mediumtext` : sql`text`;
  const time = sql`varchar(40)`;
  /** A new table with an auto-increment id. */
  const withId = (db: Kysely<unknown>, name: string) => {
    const table = db.schema.createTable(name);
    return dialect === 'postgres'
      ? table.addColumn('id', 'serial', (c) => c.primaryKey())
      : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  };
  return {
    async up(db: Kysely<unknown>) {
      await withId(db, 'workflow')
        .addColumn('project_id', 'integer', (c) => c.notNull())
        .addColumn('name', sql`varchar(100)`, (c) => c.notNull())
        .addColumn('description', text, (c) => c.notNull())
        .addColumn('definition', text, (c) => c.notNull())
        .addColumn('created', time, (c) => c.notNull())
        .addColumn('updated', time, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('workflow_project_idx').on('workflow').column('project_id').execute();

      await withId(db, 'workflow_run')
        .addColumn('project_id', 'integer', (c) => c.notNull())
        .addColumn('workflow_id', 'integer', (c) => c.notNull())
        .addColumn('workflow_name', sql`varchar(100)`, (c) => c.notNull())
        .addColumn('status', sql`varchar(20)`, (c) => c.notNull())
        .addColumn('source', sql`varchar(20)`, (c) => c.notNull())
        .addColumn('message', sql`varchar(500)`, (c) => c.notNull())
        .addColumn('user_id', 'integer')
        .addColumn('source_token', sql`varchar(32)`)
        .addColumn('schedule_id', 'integer')
        .addColumn('integration_id', 'integer')
        .addColumn('parent_run_id', 'integer')
        .addColumn('created', time, (c) => c.notNull())
        .addColumn('start', time)
        .addColumn('end', time)
        .addColumn('survey', text, (c) => c.notNull())
        .addColumn('survey_secret', text)
        .addColumn('definition', text, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('workflow_run_project_idx')
        .on('workflow_run')
        .columns(['project_id', 'id'])
        .execute();
      await db.schema.createIndex('workflow_run_status_idx').on('workflow_run').column('status').execute();
      await db.schema
        .createIndex('workflow_run_workflow_idx')
        .on('workflow_run')
        .columns(['workflow_id', 'id'])
        .execute();

      await withId(db, 'workflow_run_node')
        .addColumn('run_id', 'integer', (c) => c.notNull())
        .addColumn('project_id', 'integer', (c) => c.notNull())
        .addColumn('node_id', sql`varchar(64)`, (c) => c.notNull())
        .addColumn('type', sql`varchar(20)`, (c) => c.notNull())
        .addColumn('status', sql`varchar(20)`, (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('task_id', 'integer')
        .addColumn('start', time)
        .addColumn('end', time)
        .addColumn('wait_until', time)
        .addColumn('detail', sql`varchar(1000)`)
        .addColumn('input_digest', sql`varchar(64)`)
        .execute();
      await db.schema
        .createIndex('workflow_run_node_unique')
        .on('workflow_run_node')
        .columns(['run_id', 'node_id'])
        .unique()
        .execute();
      await db.schema
        .createIndex('workflow_run_node_status_idx')
        .on('workflow_run_node')
        .columns(['status', 'wait_until'])
        .execute();

      await withId(db, 'workflow_approval')
        .addColumn('run_id', 'integer', (c) => c.notNull())
        .addColumn('project_id', 'integer', (c) => c.notNull())
        .addColumn('node_id', sql`varchar(64)`, (c) => c.notNull())
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .addColumn('decision', sql`varchar(10)`, (c) => c.notNull())
        .addColumn('reason', sql`varchar(500)`, (c) => c.notNull())
        .addColumn('digest', sql`varchar(64)`, (c) => c.notNull())
        .addColumn('created', time, (c) => c.notNull())
        .execute();
      // One answer per person per node per set of inputs: a second click (or a second instance) cannot count twice.
      await db.schema
        .createIndex('workflow_approval_unique')
        .on('workflow_approval')
        .columns(['run_id', 'node_id', 'user_id', 'digest'])
        .unique()
        .execute();

      await db.schema.alterTable('task').addColumn('workflow_run_id', 'integer').execute();
      await db.schema.alterTable('task').addColumn('workflow_node_id', sql`varchar(64)`).execute();
      await db.schema.alterTable('task').addColumn('secret_outputs', text).execute();
      await db.schema.createIndex('task_workflow_run_idx').on('task').column('workflow_run_id').execute();
      await db.schema.alterTable('schedule').addColumn('workflow_id', 'integer').execute();
      await db.schema.alterTable('integration').addColumn('workflow_id', 'integer').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('integration').dropColumn('workflow_id').execute();
      await db.schema.alterTable('schedule').dropColumn('workflow_id').execute();
      const drop = db.schema.dropIndex('task_workflow_run_idx');
      await (dialect === 'mysql' ? drop.on('task') : drop).execute();
      await db.schema.alterTable('task').dropColumn('secret_outputs').execute();
      await db.schema.alterTable('task').dropColumn('workflow_node_id').execute();
      await db.schema.alterTable('task').dropColumn('workflow_run_id').execute();
      await db.schema.dropTable('workflow_approval').execute();
      await db.schema.dropTable('workflow_run_node').execute();
      await db.schema.dropTable('workflow_run').execute();
      await db.schema.dropTable('workflow').execute();
    },
  };
}
