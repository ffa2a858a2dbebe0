import type { ScheduleInput } from '@signalbox/contracts';
import { recordProjectEvent } from '../../audit/audit.store';
import { fromBool } from '../../db/values';
import type { Deps } from '../../deps';
import { badRequest, found, notFound } from '../../lib/errors';
import { assertInProject } from '../refs/refs.store';
import { cronError } from './cron';
import { deleteSchedule, findSchedule, insertSchedule, updateSchedule } from './schedules.store';

type Actor = { id: number };

/** 400 with the reason when the cron text is not a valid 5-field cron or nickname. */
export function assertCron(cron: string, field = 'cron_format') {
  const error = cronError(cron);
  if (error) throw badRequest(error, { [field]: error });
}

export function assertSameProject(bodyProjectId: number | null | undefined, projectId: number) {
  if (bodyProjectId && bodyProjectId !== projectId)
    throw badRequest('Project ID in body and URL must be the same', { project_id: 'Wrong project' });
}

/** Rebuilds the cron table after a schedule change; a failure there is logged, the change stays stored. */
export async function refreshScheduler(deps: Pick<Deps, 'log' | 'scheduler'>) {
  try {
    await deps.scheduler.refresh();
  } catch (err) {
    deps.log.error({ err }, 'scheduler refresh failed');
  }
}

async function checkInput(deps: Pick<Deps, 'db'>, projectId: number, input: ScheduleInput) {
  assertSameProject(input.project_id, projectId);
  assertCron(input.cron_format);
  await assertInProject(deps.db, 'template', input.template_id, projectId, 'Template');
  await assertInProject(deps.db, 'repository', input.repository_id, projectId, 'Repository');
}

export async function getSchedule(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  const schedule = await findSchedule(deps.db, projectId, id);
  if (!schedule) throw notFound('Schedule');
  return schedule;
}

const describe = (s: { cron_format: string; name: string }, tplName: string) =>
  `Schedule ${s.name ? `${s.name} ` : ''}(${s.cron_format}) of template ${tplName}`;

/** The columns a schedule takes from its input. */
const scheduleValues = (input: ScheduleInput) => ({
  template_id: input.template_id,
  cron_format: input.cron_format,
  repository_id: input.repository_id,
  name: input.name,
  active: fromBool(input.active),
});

/** Logs that a schedule (with its template's name) was created, updated or deleted. */
const recordScheduleEvent = (
  db: Deps['db'],
  user: Actor,
  schedule: { id: number; project_id: number; cron_format: string; name: string; tpl_name: string },
  action: 'created' | 'updated' | 'deleted',
) =>
  recordProjectEvent(
    db,
    user,
    schedule.project_id,
    'schedule',
    schedule.id,
    `${describe(schedule, schedule.tpl_name)} ${action}`,
  );

export async function createSchedule(
  deps: Pick<Deps, 'db' | 'dialect' | 'log' | 'scheduler'>,
  user: Actor,
  projectId: number,
  input: ScheduleInput,
) {
  await checkInput(deps, projectId, input);
  const id = await insertSchedule(deps.db, deps.dialect, {
    project_id: projectId,
    ...scheduleValues(input),
    last_commit_hash: null,
  });
  const schedule = found(await findSchedule(deps.db, projectId, id), 'Schedule');
  await recordScheduleEvent(deps.db, user, schedule, 'created');
  await refreshScheduler(deps);
  return schedule;
}

export async function changeSchedule(
  deps: Pick<Deps, 'db' | 'log' | 'scheduler'>,
  user: Actor,
  projectId: number,
  id: number,
  input: ScheduleInput,
) {
  const existing = await getSchedule(deps, projectId, id);
  await checkInput(deps, projectId, input);
  await updateSchedule(deps.db, id, {
    ...scheduleValues(input),
    // A different repository has a different history: the next tick compares against nothing.
    ...(existing.repository_id !== input.repository_id ? { last_commit_hash: null } : {}),
  });
  const schedule = found(await findSchedule(deps.db, projectId, id), 'Schedule');
  await recordScheduleEvent(deps.db, user, schedule, 'updated');
  await refreshScheduler(deps);
}

export async function removeSchedule(
  deps: Pick<Deps, 'db' | 'log' | 'scheduler'>,
  user: Actor,
  projectId: number,
  id: number,
) {
  const existing = await getSchedule(deps, projectId, id);
  await deleteSchedule(deps.db, id);
  await recordScheduleEvent(deps.db, user, existing, 'deleted');
  await refreshScheduler(deps);
}
