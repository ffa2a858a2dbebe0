import type { ScheduleInput } from '@signalbox/contracts';
import { coded } from '@signalbox/contracts';
import { assertInProject } from '../../access/refs.store';
import { recordProjectEvent } from '../../audit/audit.store';
import { transaction } from '../../db/transaction';
import { fromBool, parseJsonObject } from '../../db/values';
import type { Deps } from '../../deps';
import { fieldError, found, notFound } from '../../lib/errors';
import { type Described, describeSchedule } from '../../scheduler/describe';
import { defaultParamsText } from '../../tasks/run/default-params';
import { surveyVarsOf, unanswerableSurveyVars } from '../../tasks/run/survey-answers';
import { findTemplate } from '../../tasks/store';
import { cronError } from './cron';
import { deleteSchedule, findSchedule, insertSchedule, updateSchedule } from './schedules.store';

type Actor = { id: number };

/** 400 with the reason when the cron text is not a valid 5-field cron or nickname. */
export function assertCron(cron: string, field = 'cron_format') {
  const error = cronError(cron, field);
  if (error) throw fieldError(field, error);
}

export function assertSameProject(bodyProjectId: number | null | undefined, projectId: number) {
  if (bodyProjectId && bodyProjectId !== projectId)
    throw fieldError('project_id', coded('project_id_mismatch'));
}

/** Rebuilds the cron table after a schedule change; a failure there is logged, the change stays stored. */
export async function refreshScheduler(deps: Pick<Deps, 'log' | 'scheduler'>) {
  try {
    await deps.scheduler.refresh();
  } catch (err) {
    deps.log.error({ err }, 'scheduler refresh failed');
  }
}

/**
 * A run-once schedule that is saved active must have a time still to come; an inactive one may keep a past time
 * (it is a record of a run, or of a missed one).
 */
function assertRunAtAhead(input: ScheduleInput, now: Date) {
  if (input.type !== 'run_at' || !input.active || !input.run_at) return;
  if (new Date(input.run_at).getTime() <= now.getTime()) throw fieldError('run_at', coded('run_at_past'));
}

async function checkInput(deps: Pick<Deps, 'db'>, projectId: number, input: ScheduleInput) {
  assertSameProject(input.project_id, projectId);
  if (input.type === 'run_at') assertRunAtAhead(input, new Date());
  else assertCron(input.cron_format);
  if (input.workflow_id)
    await assertInProject(deps.db, 'workflow', input.workflow_id, projectId, 'workflow', 'workflow_id');
  else await assertInProject(deps.db, 'template', input.template_id, projectId, 'template', 'template_id');
  await assertInProject(deps.db, 'repository', input.repository_id, projectId, 'repository', 'repository_id');
  await assertInProject(
    deps.db,
    'inventory',
    input.task_params?.inventory_id,
    projectId,
    'inventory',
    'task_params.inventory_id',
  );
  if (!input.workflow_id) await assertAnswerable(deps, input.template_id, input.task_params?.environment);
}

/**
 * A schedule answers its template's survey only through the extra variables of its task parameters (never a
 * secret one: those are not kept with a schedule): every other required survey variable must have a default, else
 * every run would start without a value the template requires.
 */
async function assertAnswerable(deps: Pick<Deps, 'db'>, templateId: number, environment: string | undefined) {
  const template = await findTemplate(deps.db, templateId);
  if (!template) return;
  const error = unanswerableSurvey(template.survey_vars, environment);
  if (error) throw fieldError('template_id', error);
}

/**
 * Why a schedule with the extra variables `environment` cannot answer the survey `storedSurveyVars` (the
 * template's survey variables as JSON text), or null when it can.
 */
export function unanswerableSurvey(storedSurveyVars: string | null, environment: string | undefined) {
  const surveyVars = surveyVarsOf(storedSurveyVars);
  const values = parseJsonObject(environment);
  for (const v of surveyVars) if (v.type === 'secret') delete values[v.name];
  const missing = unanswerableSurveyVars(surveyVars, values);
  if (missing.length === 0) return null;
  const names = missing.map((v) => `"${v.title}"`).join(', ');
  return coded(missing.length > 1 ? 'survey_unanswerable' : 'survey_unanswerable_one', { names });
}

export async function getSchedule(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  const schedule = await findSchedule(deps.db, projectId, id);
  if (!schedule) throw notFound('schedule');
  return schedule;
}

/**
 * The columns a schedule takes from its input. A run-once schedule keeps no cron and no repository; a cron
 * schedule keeps no time. Saving a run-once schedule active arms it afresh: the claim of an earlier time and a
 * missed mark are cleared (its time is in the future, so no tick of it can have been claimed yet).
 */
const scheduleValues = (input: ScheduleInput) => {
  const once = input.type === 'run_at';
  return {
    template_id: input.workflow_id ? 0 : input.template_id,
    workflow_id: input.workflow_id ?? null,
    type: input.type,
    cron_format: once ? '' : input.cron_format,
    run_at: once ? input.run_at : null,
    delete_after_run: fromBool(once && input.delete_after_run),
    repository_id: once ? null : input.repository_id,
    name: input.name,
    active: fromBool(input.active),
    task_params: defaultParamsText(input.task_params),
    ...(once && input.active ? { last_tick: null, run_missed: 0 } : {}),
  };
};

/** Logs that a schedule (with its template's name) was created, updated or deleted. */
export const recordScheduleEvent = (
  db: Deps['db'],
  user: Actor,
  schedule: Described & { id: number; project_id: number; tpl_name: string },
  action: 'created' | 'updated' | 'deleted',
) =>
  recordProjectEvent(
    db,
    user,
    schedule.project_id,
    'schedule',
    schedule.id,
    `${describeSchedule(schedule, schedule.tpl_name)} ${action}`,
    // An unnamed schedule goes by its template's name.
    {
      kind: `schedule.${action}`,
      params: { name: schedule.name || schedule.tpl_name, template: schedule.tpl_name },
    },
  );

/** Stores a schedule and its event in one transaction. */
export async function createSchedule(
  deps: Pick<Deps, 'db' | 'dialect' | 'log' | 'scheduler'>,
  user: Actor,
  projectId: number,
  input: ScheduleInput,
) {
  await checkInput(deps, projectId, input);
  const schedule = await transaction(deps.db, async (trx) => {
    const id = await insertSchedule(trx, deps.dialect, {
      project_id: projectId,
      ...scheduleValues(input),
      last_commit_hash: null,
    });
    const schedule = found(await findSchedule(trx, projectId, id), 'schedule');
    await recordScheduleEvent(trx, user, schedule, 'created');
    return schedule;
  });
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
  const values = scheduleValues(input);
  await transaction(deps.db, async (trx) => {
    await updateSchedule(trx, id, {
      ...values,
      // A different repository has a different history: the next tick compares against nothing.
      ...(existing.repository_id !== values.repository_id ? { last_commit_hash: null } : {}),
    });
    const schedule = found(await findSchedule(trx, projectId, id), 'schedule');
    await recordScheduleEvent(trx, user, schedule, 'updated');
  });
  await refreshScheduler(deps);
}

export async function removeSchedule(
  deps: Pick<Deps, 'db' | 'log' | 'scheduler'>,
  user: Actor,
  projectId: number,
  id: number,
) {
  const existing = await getSchedule(deps, projectId, id);
  await transaction(deps.db, async (trx) => {
    await deleteSchedule(trx, id);
    await recordScheduleEvent(trx, user, existing, 'deleted');
  });
  await refreshScheduler(deps);
}
