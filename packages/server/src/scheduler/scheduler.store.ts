import type { Db } from '../db';

export type ScheduleEntry = {
  id: number;
  project_id: number;
  template_id: number;
  /** '' = cron, 'run_at' = once at `run_at`. */
  type: string;
  cron_format: string;
  run_at: string | null;
  repository_id: number | null;
};

/** Active schedules whose template still exists (in the schedule's project). */
export async function activeSchedules(db: Db): Promise<ScheduleEntry[]> {
  return db
    .selectFrom('schedule')
    .leftJoin('template', (j) =>
      j
        .onRef('template.id', '=', 'schedule.template_id')
        .onRef('template.project_id', '=', 'schedule.project_id'),
    )
    .leftJoin('workflow', (j) =>
      j
        .onRef('workflow.id', '=', 'schedule.workflow_id')
        .onRef('workflow.project_id', '=', 'schedule.project_id'),
    )
    .where((eb) => eb.or([eb('template.id', 'is not', null), eb('workflow.id', 'is not', null)]))
    .select([
      'schedule.id',
      'schedule.project_id',
      'schedule.template_id',
      'schedule.type',
      'schedule.cron_format',
      'schedule.run_at',
      'schedule.repository_id',
    ])
    .where('schedule.active', '=', 1)
    .orderBy('schedule.id')
    .execute();
}

/**
 * Claims one tick of one schedule: moves last_tick forward only if no scheduler (this process or another one
 * sharing the database) has claimed this tick or a later one. True when this caller won.
 */
export async function claimTick(db: Db, scheduleId: number, tick: string): Promise<boolean> {
  const result = await db
    .updateTable('schedule')
    .set({ last_tick: tick })
    .where('id', '=', scheduleId)
    .where('active', '=', 1)
    .where('type', '<>', 'run_at')
    .where((eb) => eb.or([eb('last_tick', 'is', null), eb('last_tick', '<', tick)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Claims the one run of a run-once schedule and disables it in the same conditional UPDATE: only while it is
 * active, still set to run at `tick` (an edit since it was armed moves it) and not claimed at `tick` or later.
 * True when this caller won; the run is then the caller's, even if the task cannot start.
 */
export async function claimRunOnce(db: Db, scheduleId: number, tick: string): Promise<boolean> {
  const result = await db
    .updateTable('schedule')
    .set({ last_tick: tick, active: 0 })
    .where('id', '=', scheduleId)
    .where('active', '=', 1)
    .where('type', '=', 'run_at')
    .where('run_at', '=', tick)
    .where((eb) => eb.or([eb('last_tick', 'is', null), eb('last_tick', '<', tick)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Marks a run-once schedule whose time passed too long ago as missed and disables it, under the same conditions
 * as its claim, so that of a late run and a missed mark by two servers only one happens. True when this caller
 * marked it.
 */
export async function markRunOnceMissed(db: Db, scheduleId: number, tick: string): Promise<boolean> {
  const result = await db
    .updateTable('schedule')
    .set({ active: 0, run_missed: 1 })
    .where('id', '=', scheduleId)
    .where('active', '=', 1)
    .where('type', '=', 'run_at')
    .where('run_at', '=', tick)
    .where((eb) => eb.or([eb('last_tick', 'is', null), eb('last_tick', '<', tick)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Notes when a schedule last started a task. */
export async function saveLastRun(db: Db, scheduleId: number, at: string) {
  await db.updateTable('schedule').set({ last_run_at: at }).where('id', '=', scheduleId).execute();
}

/** Removes a run-once schedule with `delete_after_run` once it has started its task. */
export async function deleteRanSchedule(db: Db, scheduleId: number) {
  await db
    .deleteFrom('schedule')
    .where('id', '=', scheduleId)
    .where('type', '=', 'run_at')
    .where('active', '=', 0)
    .execute();
}

/** The schedule as it is now, with what a new-commit check needs. */
export async function scheduleForRun(db: Db, scheduleId: number) {
  return db
    .selectFrom('schedule')
    .leftJoin('template', (j) =>
      j
        .onRef('template.id', '=', 'schedule.template_id')
        .onRef('template.project_id', '=', 'schedule.project_id'),
    )
    .leftJoin('workflow', (j) =>
      j
        .onRef('workflow.id', '=', 'schedule.workflow_id')
        .onRef('workflow.project_id', '=', 'schedule.project_id'),
    )
    .where((eb) => eb.or([eb('template.id', 'is not', null), eb('workflow.id', 'is not', null)]))
    .leftJoin('repository', (j) =>
      j
        .onRef('repository.id', '=', 'schedule.repository_id')
        .onRef('repository.project_id', '=', 'schedule.project_id'),
    )
    .leftJoin('access_key', 'access_key.id', 'repository.ssh_key_id')
    .select([
      'schedule.id',
      'schedule.project_id',
      'schedule.template_id',
      'schedule.repository_id',
      'schedule.last_commit_hash',
      'schedule.active',
      'schedule.type',
      'schedule.cron_format',
      'schedule.run_at',
      'schedule.name',
      'schedule.delete_after_run',
      'schedule.task_params',
      'schedule.workflow_id',
      (eb) => eb.fn.coalesce('template.name', 'workflow.name', eb.val('')).as('template_name'),
      'template.git_branch as template_branch',
      'repository.id as repo_id',
      'repository.git_url',
      'repository.git_branch as repository_branch',
      'access_key.id as key_id',
      'access_key.name as key_name',
      'access_key.type as key_type',
      'access_key.secret as key_secret',
      'access_key.source_storage_type as key_source_type',
      'access_key.source_storage_key as key_source_key',
    ])
    .where('schedule.id', '=', scheduleId)
    .executeTakeFirst();
}

/** True while a task this schedule created for the template is still waiting in the queue. */
export async function hasWaitingTask(db: Db, scheduleId: number, templateId: number): Promise<boolean> {
  const row = await db
    .selectFrom('task')
    .select('id')
    .where('schedule_id', '=', scheduleId)
    .where('template_id', '=', templateId)
    .where('status', '=', 'waiting')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function saveCommitHash(db: Db, scheduleId: number, hash: string) {
  await db.updateTable('schedule').set({ last_commit_hash: hash }).where('id', '=', scheduleId).execute();
}
