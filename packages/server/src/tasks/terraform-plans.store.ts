import { createHash } from 'node:crypto';
import {
  coded,
  DEFAULT_PLAN_TTL_HOURS,
  type DriftReport,
  type PlanFile,
  type PlanSummary,
  type TemplateDrift,
  templateDriftSchema,
} from '@signalbox/contracts';
import type { Selectable } from 'kysely';
import type { Db } from '../db';
import type { Dialect } from '../db/dialect';
import type { TaskPlanTable } from '../db/tables';
import { now, parseJsonObject } from '../db/values';
import type { SecretBox } from '../lib/crypto';
import { conflict } from '../lib/errors';

/**
 * Saved Terraform/OpenTofu plans (the summary, and for a plan-only task the plan file sealed at rest), the last
 * apply of each template's workspace, and the outcome of drift checks.
 */

/** What a run says about its saved plan beside the summary (see the executor's keepPlanSummary). */
export type PlanFacts = {
  /** SHA-256 (hex) of the plan file's bytes. */
  digest: string;
  workspace: string;
  state_lineage: string | null;
  state_serial: number | null;
  /** The plan file's bytes as base64, for a plan-only task (applied later by another task); null: not kept. */
  file: string | null;
};

export type TaskPlanRow = Selectable<TaskPlanTable>;

export const sha256Hex = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * Keeps the summary of a task's saved plan (in place of one kept before; safe to repeat), with the plan's facts
 * when the run gave them: the plan file is sealed with the server's key before it is stored.
 */
export async function saveTaskPlan(
  db: Db,
  box: SecretBox | null,
  task: { id: number; project_id: number; commit_hash?: string | null },
  summary: PlanSummary,
  facts?: PlanFacts | null,
) {
  const file = facts?.file && box ? box.seal(facts.file) : null;
  await db.transaction().execute(async (trx) => {
    const commit =
      task.commit_hash !== undefined
        ? task.commit_hash
        : ((await trx.selectFrom('task').select('commit_hash').where('id', '=', task.id).executeTakeFirst())
            ?.commit_hash ?? null);
    await trx.deleteFrom('task_plan').where('task_id', '=', task.id).execute();
    await trx
      .insertInto('task_plan')
      .values({
        task_id: task.id,
        project_id: task.project_id,
        summary: JSON.stringify(summary),
        plan_file: file,
        plan_digest: facts?.digest ?? null,
        commit_hash: facts ? commit : null,
        workspace: facts?.workspace ?? null,
        state_lineage: facts?.state_lineage ?? null,
        state_serial: facts?.state_serial ?? null,
        created: facts ? now() : null,
      })
      .execute();
  });
}

/** The stored plan row of a project's task (the sealed file included), or undefined. */
export const findTaskPlanRow = (db: Db, projectId: number, taskId: number) =>
  db
    .selectFrom('task_plan')
    .selectAll()
    .where('task_id', '=', taskId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();

/** The hours a template keeps its plans applicable (its plan_ttl_hours, else the default). */
export function planTtlHours(templateParams: Record<string, unknown>): number {
  const v = templateParams.plan_ttl_hours;
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : DEFAULT_PLAN_TTL_HOURS;
}

/** Until when a stored plan may be applied; null when it does not say when it was made. */
export function planExpiry(row: Pick<TaskPlanRow, 'created'>, ttlHours: number): string | null {
  if (!row.created) return null;
  const made = Date.parse(row.created);
  return Number.isNaN(made) ? null : new Date(made + ttlHours * 3_600_000).toISOString();
}

/** The plan file's facts as the API answers them (never the file). */
export async function planFileView(
  db: Db,
  row: TaskPlanRow,
  templateParams: Record<string, unknown>,
): Promise<PlanFile | null> {
  if (!row.plan_digest) return null;
  const approver = row.approved_by
    ? await db.selectFrom('user').select('name').where('id', '=', row.approved_by).executeTakeFirst()
    : undefined;
  return {
    digest: row.plan_digest,
    commit_hash: row.commit_hash,
    workspace: row.workspace,
    state_serial: row.state_serial,
    state_lineage: row.state_lineage,
    created: row.created,
    stored: row.plan_file !== null,
    expires_at: row.plan_file !== null ? planExpiry(row, planTtlHours(templateParams)) : null,
    approved_by: row.approved_by,
    approved_by_name: approver?.name ?? null,
    approved_at: row.approved_at,
    applied_by_task: row.applied_by_task,
  };
}

/**
 * Locks the stored plan a new task is about to apply, in the transaction that creates that task and before the
 * task's row is written (PostgreSQL, MariaDB; SQLite runs one writing transaction at a time): of two applies
 * requested at once, the second waits here for the first, then finds its task and answers `plan_already_applied`,
 * and its own task is never made. Locked after the insert instead, the two transactions each held what the other
 * wanted (MariaDB's locks on the task index take in the other's new row) and one died of a deadlock.
 * Returns the plan's row, to copy with copyPlanForApply once the task exists; undefined when there is none.
 */
export async function lockPlanForApply(db: Db, dialect: Dialect, fromTaskId: number) {
  const read = db.selectFrom('task_plan').selectAll().where('task_id', '=', fromTaskId);
  const from = await (dialect === 'sqlite' ? read : read.forUpdate()).executeTakeFirst();
  if (!from) return undefined;
  const other = db
    .selectFrom('task')
    .select('id')
    .where('plan_of', '=', fromTaskId)
    .where('status', 'not in', ['success', 'error', 'stopped', 'rejected'])
    .orderBy('id')
    .limit(1);
  // A locking read sees the latest committed rows (an apply that finished creating while this one waited).
  const pending = await (dialect === 'sqlite' ? other : other.forUpdate()).executeTakeFirst();
  const by = pending?.id ?? from.applied_by_task;
  if (by) throw conflict(coded('plan_already_applied', { id: fromTaskId, by }));
  return from;
}

/** The plan a task applies, kept as that task's own (its summary and facts; never the file again). */
export async function copyPlanForApply(
  db: Db,
  from: NonNullable<Awaited<ReturnType<typeof lockPlanForApply>>>,
  toTaskId: number,
) {
  await db
    .insertInto('task_plan')
    .values({ ...from, task_id: toTaskId, plan_file: null, applied_by_task: null })
    .execute();
}

/** The unfinished task that applies a task's stored plan, if any. */
export const pendingApplyOf = (db: Db, planTaskId: number) =>
  db
    .selectFrom('task')
    .select('id')
    .where('plan_of', '=', planTaskId)
    .where('status', 'not in', ['success', 'error', 'stopped', 'rejected'])
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();

/** Records who approved a task's plan, and the digest approved. */
export async function recordPlanApproval(db: Db, taskId: number, userId: number, digest: string | null) {
  await db
    .updateTable('task_plan')
    .set({ approved_by: userId, approved_at: now(), approved_digest: digest })
    .where('task_id', '=', taskId)
    .execute();
}

/** The last apply a task made on a template's workspace. */
export const lastApply = (db: Db, templateId: number, workspace: string) =>
  db
    .selectFrom('terraform_apply')
    .selectAll()
    .where('template_id', '=', templateId)
    .where('workspace', '=', workspace)
    .executeTakeFirst();

/**
 * Why a stored plan can no longer be applied, or null when it can: expired, or made before the last apply on its
 * workspace (another lineage; an apply from the same or a later state serial; without serials, an apply after
 * it was made).
 */
export async function planRefusal(
  db: Db,
  template: { id: number },
  templateParams: Record<string, unknown>,
  row: TaskPlanRow,
  at = Date.now(),
): Promise<
  | { code: 'plan_expired'; at: string; hours: number }
  | { code: 'plan_stale'; workspace: string; applied: number }
  | null
> {
  const hours = planTtlHours(templateParams);
  const expires = planExpiry(row, hours);
  if (!expires || Date.parse(expires) <= at) return { code: 'plan_expired', at: expires ?? '—', hours };
  const workspace = row.workspace ?? 'default';
  const last = await lastApply(db, template.id, workspace);
  if (!last) return null;
  const stale = { code: 'plan_stale' as const, workspace, applied: last.task_id };
  if (row.state_lineage && last.state_lineage && row.state_lineage !== last.state_lineage) return stale;
  if (row.state_serial !== null && last.state_serial !== null)
    return last.state_serial >= row.state_serial ? stale : null;
  return row.created && last.applied_at > row.created ? stale : null;
}

/**
 * A run about to end as success that applied a plan: recorded as the last apply on its template's workspace (with
 * the prior state of the plan it applied), and a stored plan it applied marked as applied by it. Nothing for a
 * run that planned only or had nothing to apply. Called before its success is saved, so that no later request
 * sees the success without the apply.
 */
export async function recordApplyOf(db: Db, taskId: number) {
  const task = await db
    .selectFrom('task')
    .select(['id', 'project_id', 'template_id', 'params', 'dry_run', 'plan_of'])
    .where('id', '=', taskId)
    .executeTakeFirst();
  if (!task) return;
  const params = parseJsonObject(task.params);
  if (!task.plan_of && (params.plan || params.drift_check || task.dry_run)) return;
  const plan = await db
    .selectFrom('task_plan')
    .select(['workspace', 'state_lineage', 'state_serial', 'plan_digest'])
    .where('task_id', '=', taskId)
    .executeTakeFirst();
  if (!plan?.plan_digest) return;
  const workspace = plan.workspace ?? 'default';
  const row = {
    project_id: task.project_id,
    task_id: task.id,
    state_lineage: plan.state_lineage,
    state_serial: plan.state_serial,
    applied_at: now(),
  };
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('terraform_apply')
      .where('template_id', '=', task.template_id)
      .where('workspace', '=', workspace)
      .execute();
    await trx
      .insertInto('terraform_apply')
      .values({ template_id: task.template_id, workspace, ...row })
      .execute();
    // An applied plan is never applied again: its file (which may hold secrets of the state) goes.
    if (task.plan_of)
      await trx
        .updateTable('task_plan')
        .set({ applied_by_task: task.id, plan_file: null })
        .where('task_id', '=', task.plan_of)
        .execute();
  });
}

/** What a task that applies a stored plan needs: the plan file (opened), its approved digest, where it was made. */
export type StoredPlan = {
  task_id: number;
  /** The plan file's bytes as base64. */
  file: string;
  digest: string;
  commit_hash: string | null;
  workspace: string;
};

/** Opens the stored plan a task applies; null when there is none to open. */
export function openStoredPlan(box: SecretBox, row: TaskPlanRow): StoredPlan | null {
  if (!row.plan_file || !row.plan_digest) return null;
  return {
    task_id: row.task_id,
    file: box.open(row.plan_file),
    digest: row.approved_digest ?? row.plan_digest,
    commit_hash: row.commit_hash,
    workspace: row.workspace ?? 'default',
  };
}

/**
 * Keeps a template's drift check outcome: since when it has drifted carries over from a check that found drift
 * before; the alert is due when the template starts drifting or drifts in other resources than before.
 */
export async function saveDrift(
  db: Db,
  task: { id: number; project_id: number; template_id: number },
  report: DriftReport,
) {
  await db.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom('template_drift')
      .selectAll()
      .where('template_id', '=', task.template_id)
      .executeTakeFirst();
    const addresses = (r: DriftReport) =>
      r.resources
        .map((x) => `${x.kind} ${x.address}`)
        .sort()
        .join('\n');
    const previous = before ? (parseJsonObject(before.report) as DriftReport) : null;
    const wasDrifted = before?.status === 'drifted';
    const at = now();
    const changed = !wasDrifted || !previous || addresses(previous) !== addresses(report);
    await trx.deleteFrom('template_drift').where('template_id', '=', task.template_id).execute();
    await trx
      .insertInto('template_drift')
      .values({
        template_id: task.template_id,
        project_id: task.project_id,
        status: report.drifted ? 'drifted' : 'in_sync',
        since: report.drifted ? (wasDrifted ? (before?.since ?? at) : at) : null,
        checked_at: at,
        task_id: task.id,
        report: JSON.stringify(report),
        alert_pending: report.drifted && changed ? 1 : 0,
      })
      .execute();
  });
}

/** The last drift check of a project's template, as the API answers it. */
export async function findDrift(
  db: Db,
  projectId: number,
  templateId: number,
): Promise<TemplateDrift | null> {
  const row = await db
    .selectFrom('template_drift')
    .selectAll()
    .where('template_id', '=', templateId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (!row) return null;
  const report = parseJsonObject(row.report) as Partial<DriftReport>;
  return templateDriftSchema.parse({
    template_id: row.template_id,
    status: row.status,
    since: row.since,
    checked_at: row.checked_at,
    task_id: row.task_id,
    drifted: row.status === 'drifted',
    resources: report.resources ?? [],
    ignored: report.ignored ?? 0,
    omitted: report.omitted ?? 0,
  });
}

/** The drift status of one template of a project, when it has been checked. */
export async function driftStatusOf(
  db: Db,
  projectId: number,
  templateId: number,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('template_drift')
    .select('status')
    .where('template_id', '=', templateId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return row?.status;
}

/** Takes the drift alert a task's check left due (once: a second caller gets null). */
export async function takeDriftAlert(db: Db, taskId: number) {
  const row = await db
    .selectFrom('template_drift')
    .selectAll()
    .where('task_id', '=', taskId)
    .where('alert_pending', '=', 1)
    .executeTakeFirst();
  if (!row) return null;
  const taken = await db
    .updateTable('template_drift')
    .set({ alert_pending: 0 })
    .where('template_id', '=', row.template_id)
    .where('task_id', '=', taskId)
    .where('alert_pending', '=', 1)
    .executeTakeFirst();
  if (Number(taken.numUpdatedRows) !== 1) return null;
  return { ...row, report: parseJsonObject(row.report) as DriftReport };
}

/** Removes the drift and apply rows of templates (deleted with them). */
export async function deleteTerraformRowsOfTemplates(db: Db, templateIds: number[]) {
  if (!templateIds.length) return;
  await db.deleteFrom('template_drift').where('template_id', 'in', templateIds).execute();
  await db.deleteFrom('terraform_apply').where('template_id', 'in', templateIds).execute();
}

/** Removes the drift and apply rows of a project (deleted with it). */
export async function deleteTerraformRowsOfProject(db: Db, projectId: number) {
  await db.deleteFrom('template_drift').where('project_id', '=', projectId).execute();
  await db.deleteFrom('terraform_apply').where('project_id', '=', projectId).execute();
}
