import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db';
import type { Dialect } from '../../db/dialect';
import { toBool } from '../../db/values';
import { inventoryTags, templateTags } from '../../runners/server/runners.store';
import type { RunHandle } from '../run/runner';
import type { StatusUpdates } from '../status';
import { activeTasks, findProjects, findTask, findTemplates } from '../store';
import { admission, holdBehind, type Occupancy, occupancy, occupy } from './admission';
import type { RunnerTimings } from './instances';
import { placeTask, type RunnerSlots, requiredTag, runsRemotely } from './placement';

export type Waiting = { id: number; project_id: number; template_id: number; inventory_id?: number | null };

/** What the queue is given by the engine. */
export type QueueContext = {
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
};

// One claiming pass over the waiting tasks: what each may start, where, and why the others still wait.

/** Starts every waiting task (in creation order) no limit blocks. */
export async function claimWaiting(ctx: QueueContext, waiting: Waiting[]) {
  const { db, instanceId, details } = ctx;
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
  const tags = await runnerTags(db, waiting);
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
async function runnerTags(db: Db, waiting: Waiting[]) {
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
