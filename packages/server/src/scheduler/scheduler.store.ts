import type { Db } from '../db';

export type ScheduleEntry = {
  id: number;
  project_id: number;
  template_id: number;
  cron_format: string;
  repository_id: number | null;
};

/** Active schedules whose template still exists (in the schedule's project). */
export async function activeSchedules(db: Db): Promise<ScheduleEntry[]> {
  return db
    .selectFrom('schedule')
    .innerJoin('template', (j) =>
      j
        .onRef('template.id', '=', 'schedule.template_id')
        .onRef('template.project_id', '=', 'schedule.project_id'),
    )
    .select([
      'schedule.id',
      'schedule.project_id',
      'schedule.template_id',
      'schedule.cron_format',
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
    .where((eb) => eb.or([eb('last_tick', 'is', null), eb('last_tick', '<', tick)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The schedule as it is now, with what a new-commit check needs. */
export async function scheduleForRun(db: Db, scheduleId: number) {
  return db
    .selectFrom('schedule')
    .innerJoin('template', (j) =>
      j
        .onRef('template.id', '=', 'schedule.template_id')
        .onRef('template.project_id', '=', 'schedule.project_id'),
    )
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
      'template.git_branch as template_branch',
      'repository.id as repo_id',
      'repository.git_url',
      'repository.git_branch as repository_branch',
      'access_key.type as key_type',
      'access_key.secret as key_secret',
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
