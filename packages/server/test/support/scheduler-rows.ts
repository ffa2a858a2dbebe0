import type { Insertable } from 'kysely';
import type { Db, Dialect } from '../../src/db';
import type { ScheduleTable, TaskTable, TemplateTable } from '../../src/db/tables';
import { insertReturningId, now } from '../../src/db/values';
import type { NewTask, StartTask, TaskOrigin } from '../../src/ports';
import { taskRow, templateRow } from './task-fixtures';

/** Row factories for scheduler and alert tests (both drive their code from rows, not from other features' routes). */
export function rows(db: Db, dialect: Dialect) {
  return {
    project: (values: { name?: string; alert?: number; alert_chat?: string | null } = {}) =>
      insertReturningId(db, dialect, 'project', {
        created: now(),
        name: values.name ?? 'Scheduled project',
        alert: values.alert ?? 0,
        alert_chat: values.alert_chat ?? null,
        max_parallel_tasks: 0,
        type: '',
      }),
    template: (projectId: number, values: Partial<Insertable<TemplateTable>> = {}) =>
      insertReturningId(
        db,
        dialect,
        'template',
        templateRow(projectId, { name: 'Nightly deploy', ...values }),
      ),
    repository: (projectId: number, gitUrl: string, branch = 'main') =>
      insertReturningId(db, dialect, 'repository', {
        project_id: projectId,
        name: 'repo',
        git_url: gitUrl,
        git_branch: branch,
        ssh_key_id: null,
      }),
    schedule: (projectId: number, templateId: number, values: Partial<Insertable<ScheduleTable>> = {}) =>
      insertReturningId(db, dialect, 'schedule', {
        project_id: projectId,
        template_id: templateId,
        cron_format: '*/5 * * * *',
        name: '',
        active: 1,
        ...values,
      }),
    task: (projectId: number, templateId: number, values: Partial<Insertable<TaskTable>> = {}) =>
      insertReturningId(
        db,
        dialect,
        'task',
        taskRow(projectId, templateId, {
          status: 'waiting',
          ...values,
        }),
      ),
  };
}

export type RecordedCall = { projectId: number; input: NewTask; origin: TaskOrigin; taskId: number };

/** A task starter that only stores the task row (with the given status) and records the call. */
export function recordingStarter(db: Db, dialect: Dialect, status = 'success') {
  const calls: RecordedCall[] = [];
  const starter: { start: StartTask; calls: RecordedCall[]; status: string; fail?: Error } = {
    calls,
    status,
    async start(projectId, input, origin) {
      if (starter.fail) throw starter.fail;
      const taskId = await rows(db, dialect).task(projectId, input.template_id, {
        status: starter.status,
        schedule_id: origin.scheduleId ?? null,
        user_id: origin.userId,
        commit_hash: origin.commitHash ?? null,
      });
      calls.push({ projectId, input, origin, taskId });
      return taskId;
    },
  };
  return starter;
}
