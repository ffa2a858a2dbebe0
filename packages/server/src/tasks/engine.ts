import { isFinished } from '@signalbox/contracts';
import { logFailure } from '../db/retry';
import type { Deps } from '../deps';
import type { LiveMessage } from '../live/bus';
import type { FinishedRun, TaskEngine } from '../ports';
import { createRemoteRunners, type RemoteRunners } from '../runners/server/remote-runners';
import { LogSink } from './output/log-sink';
import { createOutputWriter } from './output/output.store';
import { createControls } from './queue/controls';
import {
  ensureSoleHolder,
  heartbeat,
  instanceIdOf,
  reconcile,
  runnerTimings,
  shutdownMessage,
  thisProcess,
} from './queue/instances';
import { beatRunner, removeRunner } from './queue/instances.store';
import { createQueue } from './queue/queue';
import { type RunContext, type RunHandle, runTask } from './run/runner';
import { serverConfinement } from './sandbox/confinement';
import { isolationMode } from './sandbox/isolation';
import { type ProcessAdapter, systemProcesses } from './sandbox/process';
import { createStatusUpdates } from './status';
import { clearFinishedSecrets, countWaitingTasks, findTask } from './store';

export { InstanceInUseError } from './queue/instances';

export type EngineOptions = {
  processes?: ProcessAdapter;
  safetyPollMs?: number;
  /** Called when a run has ended and its final status is saved (the composition root wires autorun here). */
  onRunFinished?: (run: FinishedRun) => Promise<void>;
};

export type Engine = TaskEngine & {
  /** This instance's id among those sharing the database (SIGNALBOX_INSTANCE_ID or a hash of the data dir). */
  readonly instanceId: string;
  readonly runners: RemoteRunners;
};

/**
 * Builds the task engine: the queue is the `task` table, the pool the set of runs in this process. Several
 * instances may share the database (see instances.ts); control requests other instances leave for this one's
 * tasks are handled in controls.ts. The engine owns its output writer: two engines never share state.
 */
export function createTaskEngine(
  deps: Pick<Deps, 'config' | 'db' | 'box' | 'log' | 'bus' | 'dialect' | 'metrics'>,
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
  let draining: Promise<void> | null = null;
  /** The shutdown grace is over: every run, including one a claim under way starts now, is interrupted. */
  let interrupting = false;
  let safety: NodeJS.Timeout | null = null;
  let timers: NodeJS.Timeout[] = [];
  let sweeping = false;
  let polling = false;
  /** Tasks being claimed by this instance (status set to starting, run not registered yet). */
  const claiming = new Set<number>();
  const closing = () => closed;

  const status = createStatusUpdates({ ...deps, output, details, closing });
  const controls = createControls({
    ...deps,
    instanceId,
    timings,
    runs,
    setStatus: status.setStatus,
    wake: () => queue.wake(),
    closing,
  });
  const remote = createRemoteRunners({
    ...deps,
    instanceId,
    output,
    status,
    runs,
    staleMs: timings.staleMs,
    runEnded(taskId, finished) {
      controls.runEnded(taskId);
      queue.wake();
      if (finished)
        void options
          .onRunFinished?.(finished)
          .catch((err) => logFailure(log, err, 'task run failed', { taskId }));
    },
    pollControls: (taskIds) => controls.pollControls(taskIds),
    wake: () => queue.wake(),
    closing,
  });
  const run: RunContext = {
    ...deps,
    processes: options.processes ?? systemProcesses,
    owner: instanceId,
    openLog: (projectId, taskId) => new LogSink({ ...deps, output }, projectId, taskId, { giveUp: closing }),
    saveStatus: (taskId, to, extra) => status.saveStatus(taskId, to, extra),
    closing,
  };
  const ownership = {
    db,
    dialect: deps.dialect,
    dataDir: config.dataDir,
    instanceId,
    timings,
    isHere: (taskId: number) => runs.has(taskId) || claiming.has(taskId),
    interrupt: status.interrupt,
    async requeue(task: { id: number }) {
      const back = { runner: null, control: null, start: null };
      if (await status.setStatus(task.id, 'waiting', back, ['starting'])) queue.wake();
    },
  };

  const queue = createQueue({
    db,
    dialect: deps.dialect,
    log,
    maxParallelTasks: config.maxParallelTasks,
    instanceId,
    timings,
    runs,
    claiming,
    details,
    status,
    launch,
    remote: { useRemoteRunner: config.useRemoteRunner, slots: remote.slots, launch: remote.launch },
    running: () => started && !closed && !draining,
  });
  deps.metrics.watchTasks({ waiting: () => countWaitingTasks(db), running: () => runs.size });

  function launch({ id, project_id, template_id }: { id: number; project_id: number; template_id: number }) {
    const handle = runTask(run, id);
    handle.where = { project_id, template_id };
    runs.set(id, handle);
    if (interrupting) handle.interrupt(shutdownMessage);
    const settled: Promise<void> = handle.done
      .then((finished) => (finished ? options.onRunFinished?.(finished) : undefined))
      .catch((err) => logFailure(log, err, 'task run failed', { taskId: id }))
      .finally(() => {
        runs.delete(id);
        finishing.delete(settled);
        controls.runEnded(id);
        queue.wake();
      });
    finishing.add(settled);
  }

  /**
   * A task queued or a slot freed on any instance (their updates reach this bus through Redis) is a reason to
   * look at the queue now rather than at the next safety poll.
   */
  function wakeOnQueueChange(message: LiveMessage) {
    if (message.type === 'update' && (message.status === 'waiting' || isFinished(message.status)))
      queue.wake();
  }

  /** A runner enabled or given more room may take a waiting task now. */
  function wakeOnRunnerChange() {
    queue.wake();
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

  /** Resolves once no run is left and no claim is on its way to become one. */
  async function runsEnded() {
    while (finishing.size || claiming.size) {
      if (finishing.size) await Promise.allSettled([...finishing]);
      // A claim that was under way when claiming stopped turns into a run within one status update.
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function drainRuns(graceMs: number) {
    queue.close();
    let graceTimer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace over'>((resolve) => {
      graceTimer = setTimeout(() => resolve('grace over'), graceMs);
    });
    const outcome = await Promise.race([runsEnded(), graceOver]);
    clearTimeout(graceTimer);
    if (outcome === 'grace over') {
      log.info({ tasks: [...runs.keys()] }, 'shutdown grace is over: interrupting the tasks still running');
      interrupting = true;
      for (const r of runs.values()) r.interrupt(shutdownMessage);
      await runsEnded();
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
    runners: remote,

    async enqueue(taskId) {
      const t = await findTask(db, taskId);
      if (t) status.publishTask(t);
      queue.wake();
    },

    async start() {
      if (started) return;
      await ensureSoleHolder(deps, instanceId, holder, timings);
      const isolation = isolationMode(config.taskIsolation);
      if (config.taskIsolation === 'cgroup' && isolation.mode !== 'cgroup')
        log.error(
          { reason: isolation.reason },
          'task isolation: cgroup required but unavailable; tasks will fail',
        );
      else log.info(isolation, `task isolation: ${isolation.mode}`);
      const sandbox = serverConfinement(config);
      if (sandbox.mode === 'bwrap')
        log.info({ paths: sandbox.paths, user: sandbox.user?.name }, 'task sandbox: bwrap');
      else if (sandbox.mode === 'refused')
        log.error(
          { reason: sandbox.reason },
          'task sandbox: bwrap required but unavailable; tasks will fail',
        );
      else if (sandbox.reason)
        log.warn(
          { reason: sandbox.reason },
          "TASK SANDBOX IS OFF: bubblewrap cannot run here, so tasks run with the server's rights and can read its data, keys and other projects' files. Install bubblewrap, run tasks on remote runners, or set SIGNALBOX_TASK_SANDBOX=off to accept this",
        );
      else
        log.warn('task sandbox: off (SIGNALBOX_TASK_SANDBOX=off): tasks can read everything the server can');
      await reconcile(ownership, true);
      await remote.start();
      await clearFinishedSecrets(db);
      // Alive before claiming anything: other instances never take a task of this one for abandoned.
      await beatRunner(deps, instanceId, holder);
      started = true;
      closed = false;
      // Event driven; the slow poll only catches changes made elsewhere (another instance, a project limit edit).
      safety = setInterval(queue.wake, options.safetyPollMs ?? 10_000);
      timers = [
        setInterval(() => void heartbeat(deps, log, instanceId, holder), timings.heartbeatMs),
        setInterval(() => void sweep(), timings.sweepMs),
        setInterval(pollControls, timings.controlPollMs),
        setInterval(() => void remote.sweep(), Math.min(5000, config.runnerLostTimeout * 250)),
      ];
      for (const timer of [safety, ...timers]) timer.unref();
      deps.bus.on('taskControl', controls.onControl);
      deps.bus.on('live', wakeOnQueueChange);
      deps.bus.on('runnerChanged', wakeOnRunnerChange);
      queue.wake();
    },

    drain(graceMs) {
      draining ??= drainRuns(graceMs);
      return draining;
    },

    isRunning: () => started && !closed && !draining,

    async close() {
      // A shutdown that began with drain() lets it end first: what it left running it has interrupted.
      if (draining) await draining.catch((err) => logFailure(log, err, 'draining the task runs failed'));
      closed = true;
      if (safety) clearInterval(safety);
      for (const timer of timers) clearInterval(timer);
      timers = [];
      queue.close();
      deps.bus.off('taskControl', controls.onControl);
      deps.bus.off('live', wakeOnQueueChange);
      deps.bus.off('runnerChanged', wakeOnRunnerChange);
      // Remote runs go on on their runners: they report to whichever server they reconnect to.
      for (const [id, r] of runs) if (!remote.isRemote(id)) r.stop(true);
      await remote.close();
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
    sandbox() {
      const c = serverConfinement(config);
      return { mode: c.mode, reason: c.mode === 'bwrap' ? undefined : c.reason };
    },
  };
}
