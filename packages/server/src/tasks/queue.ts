import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db';
import type { Dialect } from '../db/dialect';
import { logFailure } from '../db/retry';
import { toBool } from '../db/values';
import { admission, holdBehind, type Occupancy, occupancy, occupy } from './admission';
import { iso, type RunnerTimings } from './instances';
import { releaseQueueLease, takeQueueLease } from './instances.store';
import type { RunHandle } from './runner';
import type { StatusUpdates } from './status';
import { activeTasks, findProjects, findTask, findTemplates, waitingTasks } from './store';

type Waiting = { id: number; project_id: number; template_id: number };

/**
 * The queue pump: on wake() it walks the waiting tasks (again if woken meanwhile) and claims each one no limit
 * blocks for this instance, handing it to `launch`. Why a task still waits is kept in `details`.
 */
export function createQueue(ctx: {
  db: Db;
  dialect: Dialect;
  log: FastifyBaseLogger;
  /** This instance's cap (SIGNALBOX_MAX_PARALLEL_TASKS). */
  maxParallelTasks: number;
  instanceId: string;
  timings: RunnerTimings;
  runs: ReadonlyMap<number, RunHandle>;
  /** Tasks being claimed (status set to starting, run not registered yet): the sweep leaves them alone. */
  claiming: Set<number>;
  details: Map<number, string>;
  status: Pick<StatusUpdates, 'setStatus' | 'publishTask'>;
  launch(task: Waiting): void;
  /** False before start and after close: wake() does nothing. */
  running(): boolean;
}) {
  const { db, instanceId, details } = ctx;
  let pumping = false;
  let again = false;
  let retry: NodeJS.Timeout | null = null;

  const retrySoon = (ms: number) => {
    retry ??= setTimeout(() => {
      retry = null;
      wake();
    }, ms);
  };

  function wake() {
    if (!ctx.running()) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    void (async () => {
      try {
        do {
          again = false;
          await pass();
        } while (again && ctx.running());
      } catch (err) {
        logFailure(ctx.log, err, 'task queue pass failed');
        // Look again soon rather than at the next safety poll: the database may be back by then.
        retrySoon(1000);
      } finally {
        pumping = false;
      }
    })();
  }

  /**
   * One walk over the waiting tasks under the queue lock: one instance claims at a time, so the counts it reads
   * include every other instance's claims and the project/template limits hold across instances. On PostgreSQL
   * and MySQL the lock is the lock row, locked in a transaction held for the pass: the database frees it the
   * moment the holder's connection ends, so a crashed instance never holds up the others, and no clock is
   * involved. SQLite serves the instances of one machine (one clock) through one file: there a lease row does.
   */
  async function pass() {
    const waiting = await waitingTasks(db);
    if (!waiting.length) return;
    if (ctx.dialect === 'sqlite') {
      const t = Date.now();
      // Another instance is claiming right now: look again shortly.
      if (!(await takeQueueLease(db, instanceId, iso(t), iso(t + ctx.timings.leaseMs))))
        return retrySoon(200);
      try {
        await claim(waiting);
      } finally {
        await releaseQueueLease(db, instanceId);
      }
      return;
    }
    const held = await db.transaction().execute(async (trx) => {
      const lock = await trx
        .selectFrom('task_queue_lock')
        .select('id')
        .where('id', '=', 1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!lock) return false;
      await claim(waiting);
      return true;
    });
    // Another instance is claiming right now: look again shortly.
    if (!held) retrySoon(200);
  }

  /** Starts every waiting task (in creation order) no limit blocks. */
  async function claim(waiting: Waiting[]) {
    const active = await activeTasks(db);
    const ids = new Set(active.map((a) => a.id));
    const slots = [...active];
    for (const [id, run] of ctx.runs)
      if (!ids.has(id)) slots.push({ id, ...run.where, status: 'running', runner: instanceId });
    const projects = new Map(
      (await findProjects(db, [...new Set(waiting.map((w) => w.project_id))])).map((p) => [p.id, p]),
    );
    const templates = new Map(
      (await findTemplates(db, [...new Set(waiting.map((w) => w.template_id))])).map((tp) => [tp.id, tp]),
    );
    let taken: Occupancy = occupancy(slots, instanceId);
    for (const w of waiting) {
      if (!ctx.running()) return;
      const limits = {
        server: ctx.maxParallelTasks,
        project: projects.get(w.project_id)?.max_parallel_tasks ?? 0,
        allowParallel: toBool(templates.get(w.template_id)?.allow_parallel_tasks),
      };
      const decision = admission(taken, w, limits);
      if (!decision.admit) {
        if (details.get(w.id) !== decision.reason) {
          details.set(w.id, decision.reason);
          const row = await findTask(db, w.id);
          if (row?.status === 'waiting') ctx.status.publishTask(row);
        }
        taken = holdBehind(taken, w, limits);
        continue;
      }
      details.delete(w.id);
      // Until launch() registers the run, the sweep must not take the task for abandoned. (If the database drops
      // the answer to this change, the task may be starting with no run: the sweep ends it.)
      ctx.claiming.add(w.id);
      try {
        if (!(await ctx.status.setStatus(w.id, 'starting', { runner: instanceId, control: null }))) continue;
        taken = occupy(taken, w);
        ctx.launch(w);
      } finally {
        ctx.claiming.delete(w.id);
      }
    }
  }

  return {
    wake,
    /** Cancels a pending retry (the engine is closing). */
    close() {
      if (retry) clearTimeout(retry);
      retry = null;
    },
  };
}
