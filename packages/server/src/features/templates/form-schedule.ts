import type { TemplateInput } from '@signalbox/contracts';
import type { Db, Dialect } from '../../db';
import { fieldError, found } from '../../lib/errors';
import { storedDefaultParams } from '../../tasks/run/default-params';
import {
  assertCron,
  deleteSchedule,
  findSchedule,
  formSchedule,
  insertSchedule,
  recordScheduleEvent,
  unanswerableSurvey,
  updateSchedule,
} from '../schedules';

// The template's own cron schedule (`schedule` of the template body), saved in the template's transaction.

type Actor = { id: number };

/**
 * Checks the body's schedule before anything is written: a valid cron, and a survey the schedule can answer
 * (a schedule starts its tasks with no one to fill in required variables that have no default). The schedule of
 * a saved template keeps its extra variables; a new one has none.
 */
export async function checkFormSchedule(db: Db, input: TemplateInput, templateId?: number) {
  if (!input.schedule) return;
  assertCron(input.schedule.cron_format, 'schedule.cron_format');
  const current = templateId ? await formSchedule(db, templateId) : undefined;
  // An unchanged schedule is not written, so the template's other changes do not depend on it.
  if (current?.cron_format === input.schedule.cron_format) return;
  const environment = current ? storedDefaultParams(current.task_params).environment : undefined;
  const error = unanswerableSurvey(JSON.stringify(input.survey_vars), environment);
  if (error) throw fieldError('schedule', error);
}

/**
 * Creates, changes the cron of, or removes (`schedule: null`) the template's own schedule, with its event, on the
 * template's transaction `trx`; a body without `schedule` leaves it alone. Returns whether anything changed.
 */
export async function applyFormSchedule(
  trx: Db,
  dialect: Dialect,
  user: Actor,
  projectId: number,
  templateId: number,
  input: TemplateInput,
) {
  if (input.schedule === undefined) return false;
  const current = await formSchedule(trx, templateId);
  const cron = input.schedule?.cron_format ?? null;
  if (cron === null) {
    if (!current) return false;
    const removed = found(await findSchedule(trx, projectId, current.id), 'schedule');
    await deleteSchedule(trx, current.id);
    await recordScheduleEvent(trx, user, removed, 'deleted');
    return true;
  }
  if (current?.cron_format === cron) return false;
  let id: number;
  if (current) {
    id = current.id;
    await updateSchedule(trx, id, { cron_format: cron });
  } else {
    id = await insertSchedule(trx, dialect, {
      project_id: projectId,
      template_id: templateId,
      type: '',
      cron_format: cron,
      repository_id: null,
      name: '',
      active: 1,
      task_params: '{}',
      last_commit_hash: null,
    });
  }
  const schedule = found(await findSchedule(trx, projectId, id), 'schedule');
  await recordScheduleEvent(trx, user, schedule, current ? 'updated' : 'created');
  return true;
}
