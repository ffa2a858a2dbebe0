import { createHash } from 'node:crypto';
import { coded } from '@signalbox/contracts';
import { recordEvent } from '../../audit/audit.store';
import { parseJsonObject } from '../../db/values';
import type { Deps } from '../../deps';
import { AppError, badRequest, conflict, forbidden, found } from '../../lib/errors';
import { findTemplate, type TaskListRow, type TaskRow } from '../../tasks/store';
import {
  findTaskPlanRow,
  pendingApplyOf,
  planRefusal,
  recordPlanApproval,
  type TaskPlanRow,
} from '../../tasks/terraform-plans.store';
import { createTask, rerunInput } from './tasks.service';

/**
 * The approved plan is the applied plan: a confirmation binds to the digest of the plan file the run made (and
 * the commit it was made from), and a plan-only task's stored plan is applied later, exactly, by another task.
 * Every approval, rejection and apply of a stored plan is an audit event.
 */

const planningApps = ['terraform', 'tofu', 'terragrunt'];

/** The template's parameters of a task (its rules of approval). */
async function templateParamsOf(deps: Pick<Deps, 'db'>, task: TaskRow) {
  const template = found(await findTemplate(deps.db, task.template_id), 'template');
  return { template, params: parseJsonObject(template.task_params) };
}

/** Refuses the user who started the run when the template says the approver must differ from the starter. */
function assertMayApprove(params: Record<string, unknown>, task: TaskRow, userId: number) {
  if (params.approver_must_differ === true && task.user_id !== null && task.user_id === userId)
    throw forbidden(coded('own_plan_approval'));
}

/** A digest the approver read that is not the plan's. */
function assertDigest(row: TaskPlanRow | undefined, digest: string | undefined) {
  if (digest && row?.plan_digest && row.plan_digest !== digest) throw conflict(coded('plan_digest_mismatch'));
}

/** Confirms a plan waiting for confirmation, bound to its digest (when the caller names the one it read). */
export async function confirmPlan(
  deps: Pick<Deps, 'db' | 'tasks'>,
  task: TaskRow,
  userId: number,
  digest: string | undefined,
) {
  if (task.status !== 'waiting_confirmation') throw badRequest(coded('not_waiting_confirmation'));
  const { params } = await templateParamsOf(deps, task);
  assertMayApprove(params, task, userId);
  const row = await findTaskPlanRow(deps.db, task.project_id, task.id);
  assertDigest(row, digest);
  await deps.tasks.confirm(task.project_id, task.id);
  if (row) await recordPlanApproval(deps.db, task.id, userId, row.plan_digest);
  await recordEvent(deps.db, {
    project_id: task.project_id,
    user_id: userId,
    object_type: 'task',
    object_id: task.id,
    description: `Task ID ${task.id} plan approved${row?.plan_digest ? ` (SHA-256 ${row.plan_digest})` : ''}`,
    kind: 'task.plan_approved',
    params: { task_id: task.id, digest: row?.plan_digest ?? null },
  });
}

/** Rejects a plan waiting for confirmation, with its audit event. */
export async function rejectPlan(deps: Pick<Deps, 'db' | 'tasks'>, task: TaskRow, userId: number) {
  await deps.tasks.reject(task.project_id, task.id);
  const row = await findTaskPlanRow(deps.db, task.project_id, task.id);
  await recordEvent(deps.db, {
    project_id: task.project_id,
    user_id: userId,
    object_type: 'task',
    object_id: task.id,
    description: `Task ID ${task.id} plan rejected`,
    kind: 'task.plan_rejected',
    params: { task_id: task.id, digest: row?.plan_digest ?? null },
  });
}

/**
 * Approves a plan-only task's stored plan and starts the task that applies it: refused when the task kept no
 * plan, when it expired, when a newer apply on its workspace happened since, when its file's digest is not the
 * plan's (or not the one the approver read), when it is applied already (or being applied), and, when the
 * template says so, for whoever started the plan.
 */
export async function applyStoredPlan(
  deps: Parameters<typeof createTask>[0],
  task: TaskRow,
  user: { id: number; canEditTemplates: boolean; source: 'ui' | 'api' },
  digest: string | undefined,
): Promise<TaskListRow> {
  const { template, params } = await templateParamsOf(deps, task);
  const row = await findTaskPlanRow(deps.db, task.project_id, task.id);
  if (row?.applied_by_task)
    throw conflict(coded('plan_already_applied', { id: task.id, by: row.applied_by_task }));
  if (
    !planningApps.includes(template.app) ||
    task.status !== 'success' ||
    !row?.plan_file ||
    !row.plan_digest
  )
    throw new AppError(409, coded('plan_not_stored', { id: task.id }));
  assertMayApprove(params, task, user.id);
  const pending = await pendingApplyOf(deps.db, task.id);
  if (pending) throw conflict(coded('plan_already_applied', { id: task.id, by: pending.id }));
  const refusal = await planRefusal(deps.db, template, params, row);
  if (refusal) {
    const { code, ...rest } = refusal;
    throw conflict({ code, params: { id: task.id, ...rest } } as never);
  }
  assertDigest(row, digest);
  // The file as stored must still be the plan made: a file altered at rest is never applied.
  let file: Buffer;
  try {
    file = Buffer.from(deps.box.open(row.plan_file), 'base64');
  } catch {
    throw conflict(coded('plan_digest_mismatch'));
  }
  if (createHash('sha256').update(file).digest('hex') !== row.plan_digest)
    throw conflict(coded('plan_digest_mismatch'));

  const rerun = found(await rerunInput(deps, task.project_id, task.id), 'task');
  const { plan: _plan, drift_check: _drift, dry_run: _dry, ...rest } = rerun.input.params ?? {};
  await recordPlanApproval(deps.db, task.id, user.id, row.plan_digest);
  const created = await createTask(
    deps,
    task.project_id,
    { ...rerun.input, dry_run: false, params: rest },
    {
      userId: user.id,
      commitHash: row.commit_hash ?? rerun.commitHash,
      canEditTemplates: user.canEditTemplates,
      rerunOf: task.id,
      planOf: task.id,
      // The plan holds its variables: nothing is asked again, and no survey answer is needed to apply it.
      interactive: false,
      source: user.source,
    },
  );
  await recordEvent(deps.db, {
    project_id: task.project_id,
    user_id: user.id,
    object_type: 'task',
    object_id: task.id,
    description: `Task ID ${task.id} plan approved and applied by task ${created.id} (SHA-256 ${row.plan_digest})`,
    kind: 'task.plan_applied',
    params: { task_id: task.id, apply_task_id: created.id, digest: row.plan_digest },
  });
  return created;
}
