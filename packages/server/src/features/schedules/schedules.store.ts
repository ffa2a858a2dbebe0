import type { Schedule } from '@signalbox/contracts';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db, Dialect } from '../../db';
import { compiledOnce } from '../../db/compiled-once';
import type { ScheduleTable } from '../../db/tables';
import { insertReturningId, toBool } from '../../db/values';
import { answeredDefaultParams } from '../../tasks/run/default-params';

export type ScheduleRow = Selectable<ScheduleTable>;

function baseQuery(db: Db, projectId: number) {
  return (
    db
      .selectFrom('schedule')
      .leftJoin('template', 'template.id', 'schedule.template_id')
      .leftJoin('workflow', 'workflow.id', 'schedule.workflow_id')
      .selectAll('schedule')
      .select((eb) => eb.fn.coalesce('template.name', 'workflow.name').as('tpl_name'))
      .where('schedule.project_id', '=', projectId)
      // A template's drift check schedule is the template's (its form edits it), not one of the schedule API.
      .where('schedule.type', '<>', DRIFT_SCHEDULE)
      .orderBy('schedule.id')
  );
}

/** The type of the schedule that runs a template's drift checks (see features/templates/drift-check.ts). */
export const DRIFT_SCHEDULE = 'drift';

/** The drift check schedule of a template, if it has one. */
export function driftSchedule(db: Db, templateId: number) {
  return db
    .selectFrom('schedule')
    .selectAll()
    .where('template_id', '=', templateId)
    .where('type', '=', DRIFT_SCHEDULE)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

export function toSchedule(row: ScheduleRow & { tpl_name: string | null }): Schedule {
  return {
    id: row.id,
    project_id: row.project_id,
    template_id: row.template_id,
    workflow_id: row.workflow_id ?? null,
    type: row.type === 'run_at' ? 'run_at' : '',
    cron_format: row.cron_format,
    run_at: row.run_at,
    delete_after_run: toBool(row.delete_after_run),
    last_run_at: row.last_run_at,
    run_missed: toBool(row.run_missed),
    repository_id: row.repository_id,
    name: row.name,
    active: toBool(row.active),
    tpl_name: row.tpl_name ?? '',
    task_params: answeredDefaultParams(row.task_params),
  };
}

export async function listSchedules(db: Db, projectId: number, templateId?: number): Promise<Schedule[]> {
  let q = baseQuery(db, projectId);
  if (templateId !== undefined) q = q.where('schedule.template_id', '=', templateId);
  return (await q.execute()).map(toSchedule);
}

export async function findSchedule(db: Db, projectId: number, id: number): Promise<Schedule | undefined> {
  const row = await baseQuery(db, projectId).where('schedule.id', '=', id).executeTakeFirst();
  return row ? toSchedule(row) : undefined;
}

/** The schedules of a template that check a repository for new commits. */
export function commitCheckSchedules(db: Db, templateId: number) {
  return db
    .selectFrom('schedule')
    .selectAll()
    .where('template_id', '=', templateId)
    .where('repository_id', 'is not', null)
    .where('type', '<>', DRIFT_SCHEDULE)
    .orderBy('id')
    .execute();
}

/**
 * The project's schedules that check a repository for new commits, to select from: its values are the project's id
 * then DRIFT_SCHEDULE (a drift check names a repository too, but is not one).
 */
export const projectCommitChecks = (db: Db, projectId: number) =>
  db
    .selectFrom('schedule')
    .where('schedule.project_id', '=', projectId)
    .where('schedule.repository_id', 'is not', null)
    .where('schedule.type', '<>', DRIFT_SCHEDULE);

/** Commit-check schedules of many templates at once (for template lists). */
export async function commitCheckSchedulesOf(db: Db, projectId: number) {
  // Read on templates lists: built once, run with the project's id.
  const query = compiledOnce(db, 'commit-check schedules', [projectId, DRIFT_SCHEDULE], () =>
    projectCommitChecks(db, projectId).selectAll().orderBy('schedule.id'),
  );
  return (await db.executeQuery<Selectable<ScheduleTable>>(query)).rows;
}

/**
 * The template's own cron schedule, the one the template form edits: its first (lowest id) cron schedule that
 * checks no repository. Schedules that check a repository belong to the check-new-commits option.
 */
export function formSchedule(db: Db, templateId: number) {
  return db
    .selectFrom('schedule')
    .selectAll()
    .where('template_id', '=', templateId)
    .where('type', '=', '')
    .where('repository_id', 'is', null)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

export function insertSchedule(db: Db, dialect: Dialect, values: Insertable<ScheduleTable>) {
  return insertReturningId(db, dialect, 'schedule', values);
}

export async function updateSchedule(db: Db, id: number, values: Updateable<ScheduleTable>) {
  await db.updateTable('schedule').set(values).where('id', '=', id).execute();
}

export async function deleteSchedule(db: Db, id: number) {
  await db.deleteFrom('schedule').where('id', '=', id).execute();
}
