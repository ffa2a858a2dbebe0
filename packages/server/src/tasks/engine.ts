import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isFinished } from '@signalbox/contracts';
import type { Updateable } from 'kysely';
import { logFailure, untilDbAnswers } from '../db/retry';
import type { TaskTable } from '../db/tables';
import { now, toBool } from '../db/values';
import type { Deps } from '../deps';
import { badRequest, notFound } from '../lib/errors';
import type { TaskControlAction } from '../live/bus';
import { insertNewTask } from './create';
import { isolationMode } from './isolation';
import { LogSink } from './log-sink';
import { killOrphans } from './orphans';
import { type ProcessAdapter, systemProcesses } from './process';
import { type RunHandle, runTask } from './runner';
import {
  activeTasks,
  beatRunner,
  casStatus,
  closeOutputWriter,
  controlsOf,
  findProjects,
  findProjectTask,
  findRunner,
  findTask,
  findTemplates,
  liveRunners,
  releaseQueueLease,
  removeRunner,
  removeStaleRunners,
  requestControl,
  runningTasks,
  type TaskRow,
  takeControl,
  takeQueueLease,
  waitingTasks,
} from './store';
import type { TaskEngine } from './types';

/** Which statuses a task may move to a given status from. */
const allowedFrom: Record<string, string[]> = {
  starting: ['waiting'],
  running: ['starting', 'confirmed'],
  waiting_confirmation: ['running'],
  confirmed: ['waiting_confirmation'],
  rejected: ['waiting_confirmation'],
  stopping: ['starting', 'running', 'waiting_confirmation', 'confirmed'],
  stopped: ['waiting', 'starting', 'running', 'waiting_confirmation', 'confirmed', 'rejected', 'stopping'],
  success: ['running'],
  error: ['waiting', 'starting', 'running', 'waiting_confirmation', 'confirmed', 'rejected', 'stopping'],
};

export type EngineOptions = { processes?: ProcessAdapter; safetyPollMs?: number };

/**
 * How instances sharing one database watch each other. Module-wide so tests can shorten them before building
 * an app (as live/redis.ts does with its channel name).
 */
export const runnerTimings = {
  /** How often an instance records that it is alive (task_runner.heartbeat). */
  heartbeatMs: 10_000,
  /** An instance whose heartbeat is older than this is dead: its active tasks end as error. */
  staleMs: 60_000,
  /** How often an instance looks for tasks of dead instances. */
  sweepMs: 30_000,
  /** How often an instance reads the control requests (stop/confirm/reject) of the tasks it runs. */
  controlPollMs: 1000,
  /** How long a queue lease holds if its instance dies while claiming. */
  leaseMs: 15_000,
};

export const interruptedMessage = 'Interrupted by server restart';
export const runnerGoneMessage = 'Interrupted: its server stopped responding';
export const unsavedMessage = 'Interrupted: the database was unavailable, so its result could not be saved';

const iso = (ms: number) => new Date(ms).toISOString();

export type Engine = TaskEngine & {
  /** Saves a status change (if allowed from the current one, or from `from` when given) and publishes it. */
  setStatus(id: number, status: string, extra?: Updateable<TaskTable>, from?: string[]): Promise<boolean>;
  /**
   * setStatus for a run's own transitions (to running, to its end): while the database is unavailable it tries
   * again (bounded by dbRetry.capMs; past it, the sweep ends the task), and a change that was applied although
   * its answer was lost counts as saved.
   */
  saveStatus(id: number, status: string, extra?: Updateable<TaskTable>): Promise<boolean>;
  publishTask(task: TaskRow): void;
  /** This instance's id among those sharing the database (SIGNALBOX_INSTANCE_ID or a hash of the data dir). */
  readonly instanceId: string;
  /** True once close() began: runs stop waiting for an unavailable database (the next start ends their tasks). */
  readonly closing: boolean;
};

/** Thrown at start when another live server holds this instance id; the server must not start. */
export class InstanceInUseError extends Error {}

/** True when a process with this pid exists (EPERM: it exists but belongs to another user). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Builds the task engine: the queue is the `task` table, the pool the set of runs in this process. Several
 * instances may share the database: each claims tasks under its instance id (`task.runner`), keeps a heartbeat in
 * `task_runner`, ends only tasks of itself (at start) or of dead instances, and acts on control requests other
 * instances leave for its tasks in `task.control`.
 */
export function createTaskEngine(deps: Deps, options: EngineOptions = {}): Engine {
  const processes = options.processes ?? systemProcesses;
  const runs = new Map<number, RunHandle>();
  const details = new Map<number, string>();
  // The same id after a restart, so the restarted server knows the tasks it left behind. It also marks the
  // task processes (SIGNALBOX_TASK_OWNER) so orphan cleanup matches only this instance's processes.
  const instanceId =
    deps.config.instanceId || createHash('sha1').update(deps.config.dataDir).digest('hex').slice(0, 16);
  const owner = instanceId;
  const holder = { host: hostname(), pid: process.pid };
  const timings = { ...runnerTimings };
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
  /** Runs here whose task another instance ended (their process is being killed). */
  const ended = new Set<number>();

  const publishTask = (t: TaskRow) =>
    deps.bus.publish({
      type: 'update',
      project_id: t.project_id,
      template_id: t.template_id,
      task_id: t.id,
      status: t.status,
      start: t.start,
      end: t.end,
      version: t.version,
      message: t.message,
      user_id: t.user_id,
      created: t.created,
      commit_hash: t.commit_hash,
      commit_message: t.commit_message,
      status_detail: details.get(t.id) ?? null,
    });

  async function setStatus(id: number, status: string, extra: Updateable<TaskTable> = {}, from?: string[]) {
    const fields: Updateable<TaskTable> = { ...extra, status };
    if (status === 'running' && !extra.start) {
      const t = await findTask(deps.db, id);
      if (t && !t.start) fields.start = now();
    }
    if (isFinished(status)) {
      fields.end ??= now();
      fields.secret = null;
      fields.control = null;
    }
    const ok = await casStatus(deps.db, id, from ?? allowedFrom[status] ?? [], fields);
    if (ok) {
      if (status !== 'waiting') details.delete(id);
      const t = await findTask(deps.db, id);
      if (t) publishTask(t);
    }
    return ok;
  }

  async function saveStatus(id: number, status: string, extra: Updateable<TaskTable> = {}) {
    let attempted = false;
    return untilDbAnswers(
      async () => {
        if (attempted) {
          const t = await findTask(deps.db, id);
          if (t?.status === status) {
            publishTask(t);
            return true;
          }
        }
        attempted = true;
        return setStatus(id, status, extra);
      },
      { log: deps.log, what: `saving task status ${status}`, taskId: id, giveUp: () => closed },
    );
  }

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
        logFailure(deps.log, err, 'task queue pass failed');
        // Look again soon rather than at the next safety poll: the database may be back by then.
        retry ??= setTimeout(() => {
          retry = null;
          wake();
        }, 1000);
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
    const waiting = await waitingTasks(deps.db);
    if (!waiting.length) return;
    const t = Date.now();
    if (!(await takeQueueLease(deps.db, instanceId, iso(t), iso(t + timings.leaseMs)))) {
      // Another instance is claiming right now: look again shortly.
      retry ??= setTimeout(() => {
        retry = null;
        wake();
      }, 200);
      return;
    }
    try {
      await claim(waiting);
    } finally {
      await releaseQueueLease(deps.db, instanceId);
    }
  }

  /** Starts every waiting task (in creation order) no limit blocks. */
  async function claim(waiting: { id: number; project_id: number; template_id: number }[]) {
    const active = await activeTasks(deps.db);
    const ids = new Set(active.map((a) => a.id));
    const slots = [...active];
    for (const [id, run] of runs)
      if (!ids.has(id)) slots.push({ id, ...run.where, status: 'running', runner: instanceId });
    const projects = new Map(
      (await findProjects(deps.db, [...new Set(waiting.map((w) => w.project_id))])).map((p) => [p.id, p]),
    );
    const templates = new Map(
      (await findTemplates(deps.db, [...new Set(waiting.map((w) => w.template_id))])).map((t) => [t.id, t]),
    );
    const perProject = new Map<number, number>();
    const perTemplate = new Map<number, number>();
    for (const s of slots) {
      perProject.set(s.project_id, (perProject.get(s.project_id) ?? 0) + 1);
      if (!perTemplate.has(s.template_id)) perTemplate.set(s.template_id, s.id);
    }
    // The server cap is per instance (it guards this machine); project and template limits count every instance.
    let total = slots.filter((s) => s.runner === instanceId).length;
    const cap = deps.config.maxParallelTasks;
    for (const w of waiting) {
      if (closed) return;
      const project = projects.get(w.project_id);
      const template = templates.get(w.template_id);
      const projectCap = project?.max_parallel_tasks ?? 0;
      let reason: string | null = null;
      if (total >= cap)
        reason = `Waiting: server limit of ${cap} running task${cap === 1 ? '' : 's'} reached`;
      else if (projectCap > 0 && (perProject.get(w.project_id) ?? 0) >= projectCap)
        reason = `Waiting: project limit of ${projectCap} running task${projectCap === 1 ? '' : 's'} reached`;
      else if (!toBool(template?.allow_parallel_tasks) && perTemplate.has(w.template_id))
        reason = `Waiting: task #${perTemplate.get(w.template_id)} of this template has not finished`;
      if (reason) {
        if (details.get(w.id) !== reason) {
          details.set(w.id, reason);
          const t = await findTask(deps.db, w.id);
          if (t?.status === 'waiting') publishTask(t);
        }
        // A template's later tasks wait behind its earliest waiting one (creation order).
        if (!perTemplate.has(w.template_id) && !toBool(template?.allow_parallel_tasks))
          perTemplate.set(w.template_id, w.id);
        continue;
      }
      details.delete(w.id);
      // Until launch() registers the run, the sweep must not take the task for abandoned. (If the database drops
      // the answer to this change, the task may be starting with no run: the sweep ends it.)
      claiming.add(w.id);
      try {
        if (!(await setStatus(w.id, 'starting', { runner: instanceId, control: null }))) continue;
        total += 1;
        perProject.set(w.project_id, (perProject.get(w.project_id) ?? 0) + 1);
        if (!perTemplate.has(w.template_id)) perTemplate.set(w.template_id, w.id);
        launch(w.id, w.project_id, w.template_id);
      } finally {
        claiming.delete(w.id);
      }
    }
  }

  function launch(id: number, projectId: number, templateId: number) {
    const handle = runTask(deps, engine, processes, id, owner);
    handle.where = { project_id: projectId, template_id: templateId };
    runs.set(id, handle);
    void handle.done
      .catch((err) => logFailure(deps.log, err, 'task run failed', { taskId: id }))
      .finally(() => {
        runs.delete(id);
        ended.delete(id);
        wake();
      });
  }

  /**
   * Ends as error the active tasks nothing runs any more: at start this instance's own (left by its previous
   * process; their processes are killed) and legacy ones without a runner; at start and on every sweep those of
   * instances whose heartbeat is older than the staleness window. On a sweep also this instance's own that it
   * neither runs nor is claiming: a run that could not save its end while the database was unavailable. A live
   * instance's tasks are never touched.
   */
  async function reconcile(atStart: boolean) {
    const t = Date.now();
    const live = await liveRunners(deps.db, iso(t - timings.staleMs));
    const own: { id: number; project_id: number; status: string }[] = [];
    const gone: typeof own = [];
    const unsaved: typeof own = [];
    for (const task of await runningTasks(deps.db)) {
      if (task.runner === instanceId || task.runner === null) {
        // Rows without a runner predate instance ids: a previous single server left them.
        if (atStart) own.push(task);
        else if (task.runner && !runs.has(task.id) && !claiming.has(task.id)) unsaved.push(task);
      } else if (!live.has(task.runner)) gone.push(task);
    }
    if (own.length) killOrphans(owner, new Set(own.map((task) => task.id)), deps.config.dataDir);
    for (const task of own) await interrupt(task, interruptedMessage);
    // Their work directories may be on another machine: only the owner removes those (this one its own).
    for (const task of own)
      rmSync(join(deps.config.dataDir, 'tasks', String(task.id)), { recursive: true, force: true });
    for (const task of gone) await interrupt(task, runnerGoneMessage);
    for (const task of unsaved) await interrupt(task, unsavedMessage);
    if (!atStart) await removeStaleRunners(deps.db, iso(t - timings.staleMs));
  }

  async function interrupt(task: { id: number; project_id: number; status: string }, message: string) {
    const ok = await casStatus(deps.db, task.id, [task.status], {
      status: 'error',
      message,
      end: now(),
      secret: null,
      control: null,
    });
    if (!ok) return;
    const sink = new LogSink(deps, task.project_id, task.id, { giveUp: () => closed });
    sink.line(message);
    await sink.close();
    const row = await findTask(deps.db, task.id);
    if (row) publishTask(row);
  }

  /**
   * Refuses to start under an instance id another live server holds: starting would end that server's running
   * tasks as interrupted. On this host the holder's pid tells (a crashed predecessor's pid is gone); a holder on
   * another host is watched for one heartbeat period, and still beating means it is alive. A row of this very
   * process (an app rebuilt in-process) is never a conflict.
   */
  async function ensureSoleHolder() {
    const row = await findRunner(deps.db, instanceId);
    if (!row?.host || row.pid === null) return;
    if (row.host === holder.host && row.pid === holder.pid) return;
    const since = Date.now() - Date.parse(row.heartbeat);
    if (!(since < timings.heartbeatMs * 2 + 5000)) return;
    let alive: boolean;
    if (row.host === holder.host) alive = processExists(row.pid);
    else {
      await new Promise((r) => setTimeout(r, Math.max(0, timings.heartbeatMs + 2000 - since)));
      alive = (await findRunner(deps.db, instanceId))?.heartbeat !== row.heartbeat;
    }
    if (alive)
      throw new InstanceInUseError(
        `Another Signalbox server (pid ${row.pid} on ${row.host}) is running with instance id "${instanceId}" ` +
          'on this database (the same data directory?). Stop it first, or give this server its own ' +
          'SIGNALBOX_INSTANCE_ID.',
      );
  }

  async function heartbeat() {
    try {
      await beatRunner(deps.db, instanceId, now(), holder);
    } catch (err) {
      logFailure(deps.log, err, 'task runner heartbeat failed');
    }
  }

  async function sweep() {
    if (sweeping || closed) return;
    sweeping = true;
    try {
      await reconcile(false);
    } catch (err) {
      logFailure(deps.log, err, 'looking for abandoned tasks failed');
    } finally {
      sweeping = false;
    }
  }

  /** Stops a task this instance runs (a local request, or one another instance left in task.control). */
  async function stopRun(taskId: number, status: string, force: boolean, run: RunHandle) {
    const hard = force || status === 'stopping';
    await setStatus(taskId, hard ? 'stopped' : 'stopping');
    run.stop(hard);
  }

  /** Acts on the control requests of the given running tasks; a task ended elsewhere has its process killed. */
  async function applyControls(taskIds: number[]) {
    for (const row of await controlsOf(deps.db, taskIds)) {
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
      if (!action || !(await takeControl(deps.db, row.id, action))) continue;
      if (action === 'stop' || action === 'force') await stopRun(row.id, row.status, action === 'force', run);
      else if (row.status === 'waiting_confirmation')
        run.decide(action === 'confirm' ? 'confirmed' : 'rejected');
    }
  }
  async function pollControls(taskIds = [...runs.keys()]) {
    if (!taskIds.length || closed) return;
    try {
      await applyControls(taskIds);
    } catch (err) {
      logFailure(deps.log, err, 'reading task control requests failed');
    }
  }

  const onControl = ({ taskId }: { taskId: number }) => {
    if (runs.has(taskId)) void pollControls([taskId]);
  };

  /**
   * Leaves a request for the instance that claimed the task when that instance is alive (this one included:
   * claimed but not yet registered); false when no live instance holds it.
   */
  async function sendControl(task: TaskRow, action: TaskControlAction) {
    if (!task.runner) return false;
    if (task.runner !== instanceId) {
      const live = await liveRunners(deps.db, iso(Date.now() - timings.staleMs));
      if (!live.has(task.runner)) return false;
    }
    if (!(await requestControl(deps.db, task.id, task.runner, action))) return false;
    deps.bus.emit('taskControl', { taskId: task.id, action });
    return true;
  }

  async function decide(projectId: number, taskId: number, decision: 'confirmed' | 'rejected') {
    const task = await findProjectTask(deps.db, projectId, taskId);
    if (!task) throw notFound('Task');
    if (task.status === 'waiting_confirmation') {
      const run = runs.get(taskId);
      if (
        run ? run.decide(decision) : await sendControl(task, decision === 'confirmed' ? 'confirm' : 'reject')
      )
        return;
    }
    throw badRequest('The task is not waiting for confirmation');
  }

  const engine: Engine = {
    setStatus,
    saveStatus,
    publishTask,
    instanceId,
    get closing() {
      return closed;
    },
    async create(projectId, input, origin) {
      const id = await insertNewTask(deps, projectId, input, origin);
      const t = await findTask(deps.db, id);
      if (t) publishTask(t);
      wake();
      return id;
    },

    async start() {
      if (started) return;
      await ensureSoleHolder();
      const isolation = isolationMode(deps.config.taskIsolation);
      if (deps.config.taskIsolation === 'cgroup' && isolation.mode !== 'cgroup')
        deps.log.error(
          { reason: isolation.reason },
          'task isolation: cgroup required but unavailable; tasks will fail',
        );
      else deps.log.info(isolation, `task isolation: ${isolation.mode}`);
      await reconcile(true);
      await deps.db
        .updateTable('task')
        .set({ secret: null })
        .where('status', 'in', ['success', 'error', 'stopped'])
        .where('secret', 'is not', null)
        .execute();
      // Alive before claiming anything: other instances never take a task of this one for abandoned.
      await beatRunner(deps.db, instanceId, now(), holder);
      started = true;
      closed = false;
      // Event driven; the slow poll only catches changes made elsewhere (another instance, a project limit edit).
      safety = setInterval(wake, options.safetyPollMs ?? 10_000);
      timers = [
        setInterval(() => void heartbeat(), timings.heartbeatMs),
        setInterval(() => void sweep(), timings.sweepMs),
        setInterval(() => {
          if (polling) return;
          polling = true;
          void pollControls().finally(() => {
            polling = false;
          });
        }, timings.controlPollMs),
      ];
      for (const timer of [safety, ...timers]) timer.unref();
      deps.bus.on('taskControl', onControl);
      wake();
    },

    async close() {
      closed = true;
      if (safety) clearInterval(safety);
      for (const timer of timers) clearInterval(timer);
      timers = [];
      if (retry) clearTimeout(retry);
      retry = null;
      deps.bus.off('taskControl', onControl);
      for (const run of runs.values()) run.stop(true);
      await Promise.allSettled([...runs.values()].map((r) => r.done));
      if (started) {
        // Gone on purpose: any task still marked as this instance's is abandoned (others reconcile it).
        await removeRunner(deps.db, instanceId).catch((err) =>
          deps.log.warn({ err }, 'removing the task runner row failed'),
        );
      }
      if (deps.dialect === 'sqlite') closeOutputWriter(deps.config.dbUrl);
    },

    async stop(projectId, taskId, force) {
      let task = await findProjectTask(deps.db, projectId, taskId);
      if (!task) throw notFound('Task');
      if (isFinished(task.status)) return;
      const run = runs.get(taskId);
      if (run) return stopRun(taskId, task.status, force, run);
      if (task.status === 'waiting') {
        // Not claimed: no instance runs it.
        if (await setStatus(taskId, 'stopped', {}, ['waiting'])) return wake();
        task = await findProjectTask(deps.db, projectId, taskId);
        if (!task || isFinished(task.status)) return;
      }
      if (await sendControl(task, force ? 'force' : 'stop')) return;
      // Left behind by an instance that is gone (not reconciled yet): nothing runs it.
      await setStatus(taskId, 'stopped');
      wake();
    },

    confirm: (projectId, taskId) => decide(projectId, taskId, 'confirmed'),
    reject: (projectId, taskId) => decide(projectId, taskId, 'rejected'),

    statusDetail: (taskId) => details.get(taskId) ?? null,
  };
  return engine;
}
