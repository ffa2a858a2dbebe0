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
  thisProcess,
} from './queue/instances';
import { beatRunner, removeRunner } from './queue/instances.store';
import { createQueue } from './queue/queue';
import type { RunContext } from './run/runner';
import { RunPool } from './run-pool';
import { announceTaskConfinement } from './sandbox/announce';
import { serverConfinement } from './sandbox/confinement';
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
  const details = new Map<number, string>();
  const instanceId = instanceIdOf(config);
  const holder = thisProcess();
  const timings = { ...runnerTimings };
  const output = createOutputWriter(db, deps.dialect, config.dbUrl);
  let started = false;
  let closed = false;
  let draining: Promise<void> | null = null;
  let safety: NodeJS.Timeout | null = null;
  let timers: NodeJS.Timeout[] = [];
  let sweeping = false;
  let polling = false;
  const closing = () => closed;

  const status = createStatusUpdates({ ...deps, output, details, closing });
  const run: RunContext = {
    ...deps,
    processes: options.processes ?? systemProcesses,
    owner: instanceId,
    openLog: (projectId, taskId) => new LogSink({ ...deps, output }, projectId, taskId, { giveUp: closing }),
    saveStatus: (taskId, to, extra) => status.saveStatus(taskId, to, extra),
    closing,
  };
  const pool = new RunPool({
    log,
    run,
    onRunFinished: options.onRunFinished,
    ended(taskId) {
      controls.runEnded(taskId);
      queue.wake();
    },
  });
  const { runs, claiming } = pool;
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
  const ownership = {
    db,
    dialect: deps.dialect,
    dataDir: config.dataDir,
    instanceId,
    timings,
    isHere: (taskId: number) => runs.has(taskId) || claiming.has(taskId),
    interrupt: status.interrupt,
    async requeue(task: { id: number; runner: string | null }) {
      if (await status.requeueClaim(task)) queue.wake();
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
    launch: (task) => pool.launch(task),
    remote: { useRemoteRunner: config.useRemoteRunner, slots: remote.slots, launch: remote.launch },
    running: () => started && !closed && !draining,
  });
  deps.metrics.watchTasks({ waiting: () => countWaitingTasks(db), running: () => runs.size });

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

  async function drainRuns(graceMs: number) {
    queue.close();
    await pool.drain(graceMs);
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
      announceTaskConfinement(log, config);
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
      await pool.settled();
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
    approve: controls.approve,
    decline: controls.decline,
    statusDetail: (taskId) => details.get(taskId) ?? null,
    sandbox() {
      const c = serverConfinement(config);
      return { mode: c.mode, reason: c.mode === 'bwrap' ? undefined : c.reason };
    },
  };
}
