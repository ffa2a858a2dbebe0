import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db';
import type { Dialect } from '../../db/dialect';
import { logFailure } from '../../db/retry';
import { toBool } from '../../db/values';
import { inventoryTags, templateTags } from '../../runners/server/runners.store';
import type { RunHandle } from '../run/runner';
import type { StatusUpdates } from '../status';
import { activeTasks, findProjects, findTask, findTemplates, waitingTasks } from '../store';
import { admission, holdBehind, type Occupancy, occupancy, occupy } from './admission';
import { iso, type RunnerTimings } from './instances';
import { releaseQueueLease, takeQueueLease } from './instances.store';
import { placeTask, type RunnerSlots, requiredTag, runsRemotely } from './placement';

type Waiting = { id: number; project_id: number; template_id: number; inventory_id?: number | null };

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
  /** Remote runners: which are connected (and their load), and giving a claimed task to one held here. */
  remote: {
    useRemoteRunner: boolean;
    slots(): Promise<RunnerSlots[]>;
    launch(task: Waiting, runnerId: number): void;
  };
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
      if (!ids.has(id))
        slots.push({ id, ...run.where, status: 'running', runner: instanceId, remote_runner_id: null });
    const projects = new Map(
      (await findProjects(db, [...new Set(waiting.map((w) => w.project_id))])).map((p) => [p.id, p]),
    );
    const templates = new Map(
      (await findTemplates(db, [...new Set(waiting.map((w) => w.template_id))])).map((tp) => [tp.id, tp]),
    );
    const tags = await runnerTags(waiting);
    const runners = await ctx.remote.slots();
    let taken: Occupancy = occupancy(slots, instanceId);
    const wait = async (w: Waiting, reason: string) => {
      if (details.get(w.id) === reason) return;
      details.set(w.id, reason);
      const row = await findTask(db, w.id);
      if (row?.status === 'waiting') ctx.status.publishTask(row);
    };
    for (const w of waiting) {
      if (!ctx.running()) return;
      const tag = tags.get(w.id) ?? null;
      const remote = runsRemotely(tag, ctx.remote.useRemoteRunner);
      const limits = {
        // A task for a remote runner takes no slot of this instance: the runner's own capacity bounds it.
        server: remote ? Number.POSITIVE_INFINITY : ctx.maxParallelTasks,
        project: projects.get(w.project_id)?.max_parallel_tasks ?? 0,
        allowParallel: toBool(templates.get(w.template_id)?.allow_parallel_tasks),
      };
      const decision = admission(taken, w, limits);
      if (!decision.admit) {
        await wait(w, decision.reason);
        taken = holdBehind(taken, w, limits);
        continue;
      }
      const placed = placeTask(w, tag, ctx.remote.useRemoteRunner, runners);
      if (placed.place === 'wait' || placed.place === 'elsewhere') {
        if (placed.place === 'wait') await wait(w, placed.reason);
        taken = holdBehind(taken, w, limits);
        continue;
      }
      details.delete(w.id);
      const runnerId = placed.place === 'runner' ? placed.runnerId : null;
      // Until launch() registers the run, the sweep must not take the task for abandoned. (If the database drops
      // the answer to this change, the task may be starting with no run: the sweep ends it.)
      ctx.claiming.add(w.id);
      try {
        const claim = { runner: instanceId, control: null, remote_runner_id: runnerId, runner_seq: 0 };
        if (!(await ctx.status.setStatus(w.id, 'starting', claim))) continue;
        taken = occupy(taken, w, runnerId !== null);
        if (runnerId === null) ctx.launch(w);
        else {
          const runner = runners.find((r) => r.id === runnerId);
          if (runner) runner.load += 1;
          ctx.remote.launch(w, runnerId);
        }
      } finally {
        ctx.claiming.delete(w.id);
      }
    }
  }

  /** Each waiting task's required runner tag (its template's, else its inventory's), where it has one. */
  async function runnerTags(waiting: Waiting[]) {
    const templates = new Map(
      (await templateTags(db, [...new Set(waiting.map((w) => w.template_id))])).map((t) => [t.id, t]),
    );
    const inventoryOf = (w: Waiting) => w.inventory_id ?? templates.get(w.template_id)?.inventory_id ?? null;
    const inventoryIds = [...new Set(waiting.map(inventoryOf).filter((id): id is number => id !== null))];
    const inventories = new Map((await inventoryTags(db, inventoryIds)).map((i) => [i.id, i.runner_tag]));
    const tags = new Map<number, string>();
    for (const w of waiting) {
      const inventory = inventoryOf(w);
      const tag = requiredTag(
        templates.get(w.template_id)?.runner_tag,
        inventory === null ? null : inventories.get(inventory),
      );
      if (tag !== null) tags.set(w.id, tag);
    }
    return tags;
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
