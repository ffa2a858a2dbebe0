import { logFailure } from '../db/retry';
import { now, toBool } from '../db/values';
import type { Deps } from '../deps';
import type { FinishedRun, TaskEngine } from '../ports';
import { admission, holdBehind, type Occupancy, occupancy, occupy } from './admission';
import { createControls } from './controls';
import {
  ensureSoleHolder,
  heartbeat,
  instanceIdOf,
  iso,
  reconcile,
  runnerTimings,
  thisProcess,
} from './instances';
import { beatRunner, releaseQueueLease, removeRunner, takeQueueLease } from './instances.store';
import { isolationMode } from './isolation';
import { LogSink } from './log-sink';
import { createOutputWriter } from './output.store';
import { type ProcessAdapter, systemProcesses } from './process';
import { type RunContext, type RunHandle, runTask } from './runner';
import { createStatusUpdates } from './status';
import {
  activeTasks,
  clearFinishedSecrets,
  findProjects,
  findTask,
  findTemplates,
  waitingTasks,
} from './store';

export { InstanceInUseError } from './instances';

export type EngineOptions = {
  processes?: ProcessAdapter;
  safetyPollMs?: number;
  /** Called when a run has ended and its final status is saved (the composition root wires autorun here). */
  onRunFinished?: (run: FinishedRun) => Promise<void>;
};

export type Engine = TaskEngine & {
  /** This instance's id among those sharing the database (SIGNALBOX_INSTANCE_ID or a hash of the data dir). */
  readonly instanceId: string;
};

/**
 * Builds the task engine: the queue is the `task` table, the pool the set of runs in this process. Several
 * instances may share the database (see instances.ts); control requests other instances leave for this one's
 * tasks are handled in controls.ts. The engine owns its output writer: two engines never share state.
 */
export function createTaskEngine(
  deps: Pick<Deps, 'config' | 'db' | 'box' | 'log' | 'bus' | 'dialect'>,
  options: EngineOptions = {},
): Engine {
  const { db, config, log } = deps;
  const runs = new Map<number, RunHandle>();
  /** Each run with what follows its end (the finished-run reaction, removal from the pool). */
  const finishing = new Set<Promise<void>>();
  const details = new Map<number, string>();
  const instanceId = instanceIdOf(config);
  const holder = thisProcess();
  const timings = { ...runnerTimings };
  const output = createOutputWriter(db, deps.dialect, config.dbUrl);
  let started = false;
  let closed = false;
  let pumping = false;
  let again = false;
  let safety: NodeJS.Timeout | null = null;
  let timers: NodeJS.Timeout[] = [];
  let retry: NodeJS.Timeout | null = null;
  let sweeping = false;
  let polling = false;
  /** Tasks being claimed by this instance (status set to starting, run not registered yet). */
  const claiming = new Set<number>();
  const closing = () => closed;

  const status = createStatusUpdates({ db, bus: deps.bus, log, output, details, closing });
  const controls = createControls({
    ...deps,
    instanceId,
    timings,
    runs,
    setStatus: status.setStatus,
    wake,
    closing,
  });
  const run: RunContext = {
    ...deps,
    processes: options.processes ?? systemProcesses,
    owner: instanceId,
    openLog: (projectId, taskId) => new LogSink({ ...deps, output }, projectId, taskId, { giveUp: closing }),
    saveStatus: (taskId, to) => status.saveStatus(taskId, to),
    closing,
  };
  const ownership = {
    db,
    dataDir: config.dataDir,
    instanceId,
    timings,
    isHere: (taskId: number) => runs.has(taskId) || claiming.has(taskId),
    interrupt: status.interrupt,
  };

  const retrySoon = (ms: number) => {
    retry ??= setTimeout(() => {
      retry = null;
      wake();
    }, ms);
  };

  function wake() {
    if (!started || closed) return;
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
        } while (again && !closed);
      } catch (err) {
        logFailure(log, err, 'task queue pass failed');
        // Look again soon rather than at the next safety poll: the database may be back by then.
        retrySoon(1000);
      } finally {
        pumping = false;
      }
    })();
  }

  /**
   * One walk over the waiting tasks under the queue lease (one instance claims at a time, so the counts it reads
   * include every other instance's claims and the project/template limits hold across instances).
   */
  async function pass() {
    const waiting = await waitingTasks(db);
    if (!waiting.length) return;
    const t = Date.now();
    // Another instance is claiming right now: look again shortly.
    if (!(await takeQueueLease(db, instanceId, iso(t), iso(t + timings.leaseMs)))) return retrySoon(200);
    try {
      await claim(waiting);
    } finally {
      await releaseQueueLease(db, instanceId);
    }
  }

  /** Starts every waiting task (in creation order) no limit blocks. */
  async function claim(waiting: { id: number; project_id: number; template_id: number }[]) {
    const active = await activeTasks(db);
    const ids = new Set(active.map((a) => a.id));
    const slots = [...active];
    for (const [id, r] of runs)
      if (!ids.has(id)) slots.push({ id, ...r.where, status: 'running', runner: instanceId });
    const projects = new Map(
      (await findProjects(db, [...new Set(waiting.map((w) => w.project_id))])).map((p) => [p.id, p]),
    );
    const templates = new Map(
      (await findTemplates(db, [...new Set(waiting.map((w) => w.template_id))])).map((tp) => [tp.id, tp]),
    );
    let taken: Occupancy = occupancy(slots, instanceId);
    for (const w of waiting) {
      if (closed) return;
      const limits = {
        server: config.maxParallelTasks,
        project: projects.get(w.project_id)?.max_parallel_tasks ?? 0,
        allowParallel: toBool(templates.get(w.template_id)?.allow_parallel_tasks),
      };
      const decision = admission(taken, w, limits);
      if (!decision.admit) {
        if (details.get(w.id) !== decision.reason) {
          details.set(w.id, decision.reason);
          const row = await findTask(db, w.id);
          if (row?.status === 'waiting') status.publishTask(row);
        }
        taken = holdBehind(taken, w, limits);
        continue;
      }
      details.delete(w.id);
      // Until launch() registers the run, the sweep must not take the task for abandoned. (If the database drops
      // the answer to this change, the task may be starting with no run: the sweep ends it.)
      claiming.add(w.id);
      try {
        if (!(await status.setStatus(w.id, 'starting', { runner: instanceId, control: null }))) continue;
        taken = occupy(taken, w);
        launch(w.id, w.project_id, w.template_id);
      } finally {
        claiming.delete(w.id);
      }
    }
  }

  function launch(id: number, projectId: number, templateId: number) {
    const handle = runTask(run, id);
    handle.where = { project_id: projectId, template_id: templateId };
    runs.set(id, handle);
    const settled: Promise<void> = handle.done
      .then((finished) => (finished ? options.onRunFinished?.(finished) : undefined))
      .catch((err) => logFailure(log, err, 'task run failed', { taskId: id }))
      .finally(() => {
        runs.delete(id);
        finishing.delete(settled);
        controls.runEnded(id);
        wake();
      });
    finishing.add(settled);
  }

  async function sweep() {
    if (sweeping || closed) return;
    sweeping = true;
    try {
      await reconcile(ownership, false);
    } catch (err) {
      logFailure(log, err, 'looking for abandoned tasks failed');
    } finally {
      sweeping = false;
    }
  }

  function pollControls() {
    if (polling) return;
    polling = true;
    void controls.pollControls().finally(() => {
      polling = false;
    });
  }

  return {
    instanceId,

    async enqueue(taskId) {
      const t = await findTask(db, taskId);
      if (t) status.publishTask(t);
      wake();
    },

    async start() {
      if (started) return;
      await ensureSoleHolder(db, instanceId, holder, timings);
      const isolation = isolationMode(config.taskIsolation);
      if (config.taskIsolation === 'cgroup' && isolation.mode !== 'cgroup')
        log.error(
          { reason: isolation.reason },
          'task isolation: cgroup required but unavailable; tasks will fail',
        );
      else log.info(isolation, `task isolation: ${isolation.mode}`);
      await reconcile(ownership, true);
      await clearFinishedSecrets(db);
      // Alive before claiming anything: other instances never take a task of this one for abandoned.
      await beatRunner(db, instanceId, now(), holder);
      started = true;
      closed = false;
      // Event driven; the slow poll only catches changes made elsewhere (another instance, a project limit edit).
      safety = setInterval(wake, options.safetyPollMs ?? 10_000);
      timers = [
        setInterval(() => void heartbeat(db, log, instanceId, holder), timings.heartbeatMs),
        setInterval(() => void sweep(), timings.sweepMs),
        setInterval(pollControls, timings.controlPollMs),
      ];
      for (const timer of [safety, ...timers]) timer.unref();
      deps.bus.on('taskControl', controls.onControl);
      wake();
    },

    async close() {
      closed = true;
      if (safety) clearInterval(safety);
      for (const timer of timers) clearInterval(timer);
      timers = [];
      if (retry) clearTimeout(retry);
      retry = null;
      deps.bus.off('taskControl', controls.onControl);
      for (const r of runs.values()) r.stop(true);
      await Promise.allSettled([...finishing]);
      if (started) {
        // Gone on purpose: any task still marked as this instance's is abandoned (others reconcile it).
        await removeRunner(db, instanceId).catch((err) =>
          log.warn({ err }, 'removing the task runner row failed'),
        );
      }
      output.close();
    },

    stop: controls.stop,
    confirm: controls.confirm,
    reject: controls.reject,
    statusDetail: (taskId) => details.get(taskId) ?? null,
  };
}
