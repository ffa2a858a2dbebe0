import { finishedStatuses } from '@signalbox/contracts';
import type { Db } from '../db';
import { toCount } from '../db/values';

/** The SQL of the retention job (tasks/retention.ts). */

const finished = [...finishedStatuses];

/** Every project with its own retention setting (0 = the server default). */
export const projectRetentions = (db: Db) =>
  db.selectFrom('project').select(['id', 'task_retention_days']).orderBy('id').execute();

/**
 * The oldest `limit` finished tasks of a project that ended (or, never started, were created) before
 * `cutoff`. Times are ISO-8601 UTC strings everywhere, so they compare as text.
 */
export async function expiredTaskIds(db: Db, projectId: number, cutoff: string, limit: number) {
  const rows = await db
    .selectFrom('task')
    .select('id')
    .where('project_id', '=', projectId)
    .where('status', 'in', finished)
    .where((eb) => eb(eb.fn.coalesce('end', 'created'), '<', cutoff))
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Output rows per task, for the tasks that have any. */
export async function outputCounts(db: Db, taskIds: number[]) {
  const rows = await db
    .selectFrom('task_output')
    .select((eb) => ['task_id', eb.fn.countAll().as('n')])
    .where('task_id', 'in', taskIds)
    .groupBy('task_id')
    .execute();
  return new Map(rows.map((r) => [r.task_id, toCount(r.n)]));
}

/**
 * Deletes up to `limit` of the oldest output rows of one task (one statement, its own transaction); returns
 * how many went. Bounded by an id found through the (task_id, id) index, which works on every dialect
 * (DELETE … LIMIT does not).
 */
export async function deleteOutputSlice(db: Db, taskId: number, limit: number) {
  const last = await db
    .selectFrom('task_output')
    .select('id')
    .where('task_id', '=', taskId)
    .orderBy('id')
    .offset(limit - 1)
    .limit(1)
    .executeTakeFirst();
  let q = db.deleteFrom('task_output').where('task_id', '=', taskId);
  if (last) q = q.where('id', '<=', last.id);
  return toCount((await q.executeTakeFirst()).numDeletedRows);
}

/**
 * Deletes finished tasks with their output in one transaction, clearing `build_task_id` references to them
 * as deleteTaskAndOutput does. A task that is (somehow) no longer finished is left alone.
 */
export async function deleteFinishedTasks(db: Db, taskIds: number[]) {
  return db.transaction().execute(async (trx) => {
    const ids = (
      await trx
        .selectFrom('task')
        .select('id')
        .where('id', 'in', taskIds)
        .where('status', 'in', finished)
        .execute()
    ).map((r) => r.id);
    if (!ids.length) return { tasks: 0, output: 0 };
    const output = await trx.deleteFrom('task_output').where('task_id', 'in', ids).executeTakeFirst();
    await trx.deleteFrom('task_plan').where('task_id', 'in', ids).execute();
    await trx.updateTable('task').set({ build_task_id: null }).where('build_task_id', 'in', ids).execute();
    const tasks = await trx.deleteFrom('task').where('id', 'in', ids).executeTakeFirst();
    return { tasks: toCount(tasks.numDeletedRows), output: toCount(output.numDeletedRows) };
  });
}

const finishedRuns = ['success', 'failed', 'stopped', 'rejected'];

/**
 * Deletes up to `limit` workflow runs of a project that ended before `cutoff`, with their node states and approvals
 * (one transaction). Returns how many runs went.
 */
export async function deleteExpiredWorkflowRuns(db: Db, projectId: number, cutoff: string, limit: number) {
  const rows = await db
    .selectFrom('workflow_run')
    .select('id')
    .where('project_id', '=', projectId)
    .where('status', 'in', finishedRuns)
    .where((eb) => eb(eb.fn.coalesce('end', 'created'), '<', cutoff))
    .orderBy('id')
    .limit(limit)
    .execute();
  const ids = rows.map((r) => r.id);
  if (!ids.length) return 0;
  return db.transaction().execute(async (trx) => {
    await trx.deleteFrom('workflow_approval').where('run_id', 'in', ids).execute();
    await trx.deleteFrom('workflow_run_node').where('run_id', 'in', ids).execute();
    const gone = await trx
      .deleteFrom('workflow_run')
      .where('id', 'in', ids)
      .where('status', 'in', finishedRuns)
      .executeTakeFirst();
    return Number(gone.numDeletedRows);
  });
}
