import { coded, type TemplateInput } from '@signalbox/contracts';
import { recordProjectEvent } from '../../audit/audit.store';
import type { Db, Dialect } from '../../db';
import { fieldError } from '../../lib/errors';
import {
  assertCron,
  cronError,
  DRIFT_SCHEDULE,
  deleteSchedule,
  driftSchedule,
  insertSchedule,
  updateSchedule,
} from '../schedules';

// The check-for-drift option of a Terraform/OpenTofu/Terragrunt template, kept as a schedule of its own type whose
// tasks run with params.drift_check (a refresh-only plan and a plan, plan-only; see tasks/executors/terraform.ts).

type Actor = { id: number };

export const planningApps: readonly string[] = ['terraform', 'tofu', 'terragrunt'];

/** The task parameters a drift check task starts with. */
export const driftTaskParams = JSON.stringify({ params: { drift_check: true } });

/** Checks the drift option before anything is written: a planning app and a valid cron. */
export function checkDriftCheck(input: TemplateInput) {
  if (!input.task_params.drift_check) return;
  if (!planningApps.includes(input.app))
    throw fieldError('task_params.drift_check', coded('drift_needs_terraform'));
  assertCron(input.task_params.drift_cron ?? '', 'task_params.drift_cron');
}

/**
 * Creates, changes the cron of, or removes the template's drift check schedule as its drift option says, on the
 * template's transaction. Returns whether anything changed.
 */
export async function applyDriftCheck(
  trx: Db,
  dialect: Dialect,
  user: Actor,
  projectId: number,
  templateId: number,
  input: TemplateInput,
) {
  const current = await driftSchedule(trx, templateId);
  const cron =
    input.task_params.drift_check && planningApps.includes(input.app) ? input.task_params.drift_cron : null;
  const event = (id: number, verb: string) =>
    recordProjectEvent(
      trx,
      user,
      projectId,
      'schedule',
      id,
      `Drift check schedule of template ${input.name} ${verb}`,
    );
  if (!cron) {
    if (!current) return false;
    await deleteSchedule(trx, current.id);
    await event(current.id, 'deleted');
    return true;
  }
  if (current) {
    if (current.cron_format === cron && current.active === 1) return false;
    await updateSchedule(trx, current.id, { cron_format: cron, active: 1 });
    await event(current.id, 'updated');
    return true;
  }
  const id = await insertSchedule(trx, dialect, driftRow(projectId, templateId, cron));
  await event(id, 'created');
  return true;
}

/**
 * The drift check schedule a template's stored settings call for (a restored project's templates get theirs from
 * their settings; backups carry no drift schedule): null when drift checks are off or the cron is not valid.
 */
export function driftScheduleRow(template: {
  project_id: number;
  id: number;
  app: string;
  task_params: string;
}) {
  let params: Record<string, unknown> = {};
  try {
    params = JSON.parse(template.task_params) as Record<string, unknown>;
  } catch {
    return null;
  }
  const cron = params.drift_cron;
  if (params.drift_check !== true || typeof cron !== 'string' || !planningApps.includes(template.app))
    return null;
  if (cronError(cron)) return null;
  return driftRow(template.project_id, template.id, cron);
}

/** The row of a template's drift check schedule on `cron`. */
const driftRow = (projectId: number, templateId: number, cron: string) => ({
  project_id: projectId,
  template_id: templateId,
  type: DRIFT_SCHEDULE,
  cron_format: cron,
  repository_id: null,
  name: '',
  active: 1,
  task_params: driftTaskParams,
  last_commit_hash: null,
});
