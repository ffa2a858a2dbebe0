import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * Saved Terraform/OpenTofu plans that can be applied later, the last apply of each workspace, and drift checks.
 *
 * - `task_plan` gains the plan file of a plan-only task (`plan_file`: the file's bytes as base64, sealed with the
 *   server's secret key; null: not kept), its SHA-256 (`plan_digest`), the commit, workspace and prior state
 *   (lineage, serial) it was made from, when it was made, who approved it and when (with the digest approved),
 *   and the task that applied it.
 * - `task.plan_of`: the plan-only task whose stored plan this task applies (null: an ordinary run).
 * - `terraform_apply`: per template and workspace, the last apply a task made (the prior state's lineage and
 *   serial of the plan it applied): a stored plan made before it is stale.
 * - `template_drift`: per template, the outcome of its last drift check (status, since when it has drifted, the
 *   drifted resources as JSON names and paths, never values) and whether its alert is still to be sent.
 */
export function planFilesAndDrift(dialect: Dialect) {
  const text = dialect === 'mysql' ? sql`mediumtext` : sql`text`;
  const time = sql`varchar(40)`;
  return {
    async up(db: Kysely<unknown>) {
      const planColumns: [string, unknown][] = [
        ['plan_file', text],
        ['plan_digest', sql`varchar(64)`],
        ['commit_hash', sql`varchar(64)`],
        ['workspace', sql`varchar(255)`],
        ['state_lineage', sql`varchar(64)`],
        ['state_serial', sql`integer`],
        ['created', time],
        ['approved_by', sql`integer`],
        ['approved_at', time],
        ['approved_digest', sql`varchar(64)`],
        ['applied_by_task', sql`integer`],
      ];
      for (const [name, type] of planColumns)
        await db.schema
          .alterTable('task_plan')
          .addColumn(name, type as never)
          .execute();
      await db.schema.alterTable('task').addColumn('plan_of', 'integer').execute();
      await db.schema
        .createTable('terraform_apply')
        .addColumn('template_id', 'integer', (c) => c.notNull())
        .addColumn('workspace', sql`varchar(255)`, (c) => c.notNull())
        .addColumn('project_id', 'integer', (c) => c.notNull())
        .addColumn('task_id', 'integer', (c) => c.notNull())
        .addColumn('state_lineage', sql`varchar(64)`)
        .addColumn('state_serial', 'integer')
        .addColumn('applied_at', time, (c) => c.notNull())
        .addPrimaryKeyConstraint('terraform_apply_pk', ['template_id', 'workspace'])
        .execute();
      await db.schema
        .createTable('template_drift')
        .addColumn('template_id', 'integer', (c) => c.primaryKey())
        .addColumn('project_id', 'integer', (c) => c.notNull())
        .addColumn('status', sql`varchar(20)`, (c) => c.notNull())
        .addColumn('since', time)
        .addColumn('checked_at', time, (c) => c.notNull())
        .addColumn('task_id', 'integer', (c) => c.notNull())
        .addColumn('report', text, (c) => c.notNull())
        .addColumn('alert_pending', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex('template_drift_project_idx')
        .on('template_drift')
        .column('project_id')
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('template_drift').execute();
      await db.schema.dropTable('terraform_apply').execute();
      await db.schema.alterTable('task').dropColumn('plan_of').execute();
      for (const name of [
        'applied_by_task',
        'approved_digest',
        'approved_at',
        'approved_by',
        'created',
        'state_serial',
        'state_lineage',
        'workspace',
        'commit_hash',
        'plan_digest',
        'plan_file',
      ])
        await db.schema.alterTable('task_plan').dropColumn(name).execute();
    },
  };
}
