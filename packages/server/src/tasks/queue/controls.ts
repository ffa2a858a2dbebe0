import { coded, isFinished } from '@signalbox/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db';
import type { Dialect } from '../../db/dialect';
import { logFailure } from '../../db/retry';
import { badRequest, notFound } from '../../lib/errors';
import type { EventBus, TaskControlAction } from '../../live/bus';
import type { RunHandle } from '../run/runner';
import type { StatusUpdates } from '../status';
import { controlsOf, findProjectTask, requestControl, type TaskRow, takeControl } from '../store';
import type { RunnerTimings } from './instances';
import { liveRunners } from './instances.store';

/**
 * Stop, force-stop, confirm and reject. A task this instance runs is acted on at once; one another live instance
 * runs gets a request in `task.control` that its owner reads (on the `taskControl` bus event or its poll).
 */
export function createControls(ctx: {
  db: Db;
  dialect: Dialect;
  bus: EventBus;
  log: FastifyBaseLogger;
  instanceId: string;
  timings: RunnerTimings;
  /** This instance's runs. */
  runs: ReadonlyMap<number, RunHandle>;
  setStatus: StatusUpdates['setStatus'];
  wake(): void;
  closing(): boolean;
}) {
  const { db, runs } = ctx;
  /** Runs here whose task another instance ended (their process is being killed). */
  const ended = new Set<number>();

  /** Stops a task this instance runs (a local request, or one another instance left in task.control). */
  async function stopRun(taskId: number, status: string, force: boolean, run: RunHandle) {
    const hard = force || status === 'stopping';
    await ctx.setStatus(taskId, hard ? 'stopped' : 'stopping');
    run.stop(hard);
  }

  /** Acts on the control requests of the given running tasks; a task ended elsewhere has its process killed. */
  async function applyControls(taskIds: number[]) {
    for (const row of await controlsOf(db, taskIds)) {
      const run = runs.get(row.id);
      if (!run) continue;
      if (isFinished(row.status)) {
        // Ended by another instance (it took this one for dead, or stopped it while it was being claimed).
        if (!ended.has(row.id)) {
          ended.add(row.id);
          run.stop(true);
        }
        continue;
      }
      const action = row.control as TaskControlAction | null;
      if (!action || !(await takeControl(db, row.id, action))) continue;
      if (action === 'stop' || action === 'force') await stopRun(row.id, row.status, action === 'force', run);
      else if (row.status === 'waiting_confirmation')
        run.decide(action === 'confirm' ? 'confirmed' : 'rejected');
    }
  }

  async function pollControls(taskIds = [...runs.keys()]) {
    if (!taskIds.length || ctx.closing()) return;
    try {
      await applyControls(taskIds);
    } catch (err) {
      logFailure(ctx.log, err, 'reading task control requests failed');
    }
  }

  /**
   * Leaves a request for the instance that claimed the task when that instance is alive (this one included:
   * claimed but not yet registered); false when no live instance holds it.
   */
  async function sendControl(task: TaskRow, action: TaskControlAction) {
    if (!task.runner) return false;
    if (task.runner !== ctx.instanceId) {
      const live = await liveRunners(ctx, ctx.timings.staleMs);
      if (!live.has(task.runner)) return false;
    }
    if (!(await requestControl(db, task.id, task.runner, action))) return false;
    ctx.bus.emit('taskControl', { taskId: task.id, action });
    return true;
  }

  async function decide(projectId: number, taskId: number, decision: 'confirmed' | 'rejected') {
    const task = await findProjectTask(db, projectId, taskId);
    if (!task) throw notFound('task');
    if (task.status === 'waiting_confirmation') {
      const run = runs.get(taskId);
      if (
        run ? run.decide(decision) : await sendControl(task, decision === 'confirmed' ? 'confirm' : 'reject')
      )
        return;
    }
    throw badRequest(coded('not_waiting_confirmation'));
  }

  async function stop(projectId: number, taskId: number, force: boolean) {
    let task = await findProjectTask(db, projectId, taskId);
    if (!task) throw notFound('task');
    if (isFinished(task.status)) return;
    const run = runs.get(taskId);
    if (run) return stopRun(taskId, task.status, force, run);
    if (task.status === 'waiting' || task.status === 'waiting_approval') {
      // Not claimed: no instance runs it.
      if (await ctx.setStatus(taskId, 'stopped', {}, [task.status])) return ctx.wake();
      task = await findProjectTask(db, projectId, taskId);
      if (!task || isFinished(task.status)) return;
    }
    if (await sendControl(task, force ? 'force' : 'stop')) return;
    // Left behind by an instance that is gone (not reconciled yet): nothing runs it.
    await ctx.setStatus(taskId, 'stopped');
    ctx.wake();
  }

  /**
   * A run waiting for a person's approval: approved, it joins the queue (`waiting`); declined, it ends `rejected`
   * with the reason as its message. False when the task was not waiting for approval (any more).
   */
  async function approve(taskId: number) {
    const ok = await ctx.setStatus(taskId, 'waiting', {}, ['waiting_approval']);
    if (ok) ctx.wake();
    return ok;
  }
  const decline = (taskId: number, reason: string) =>
    ctx.setStatus(taskId, 'rejected', reason ? { message: reason.slice(0, 500) } : {}, ['waiting_approval']);

  return {
    stop,
    approve,
    decline,
    confirm: (projectId: number, taskId: number) => decide(projectId, taskId, 'confirmed'),
    reject: (projectId: number, taskId: number) => decide(projectId, taskId, 'rejected'),
    pollControls,
    /** The `taskControl` bus listener: a request for a task this instance runs is read at once. */
    onControl: ({ taskId }: { taskId: number }) => {
      if (runs.has(taskId)) void pollControls([taskId]);
    },
    /** Forgets a run that ended. */
    runEnded: (taskId: number) => ended.delete(taskId),
  };
}
