import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config';
import type { Db } from '../../db';
import type { Dialect } from '../../db/dialect';
import { logFailure } from '../../db/retry';
import { runningTasks } from '../store';
import {
  beatRunner,
  findRunner,
  heartbeatAge,
  liveRunners,
  type RunnerOwner,
  removeStaleRunners,
  type SharedDb,
} from './instances.store';
import { killOrphans, taskFolders } from './orphans';

/*
 * Several instances may share one database: each claims tasks under its instance id (`task.runner`), keeps a
 * heartbeat in `task_runner`, and ends only tasks of itself (at start) or of dead instances.
 */

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
export type RunnerTimings = typeof runnerTimings;

export const interruptedMessage = 'Interrupted by server restart';
export const shutdownMessage = 'Interrupted by server shutdown';
export const runnerGoneMessage = 'Interrupted: its server stopped responding';
export const unsavedMessage = 'Interrupted: the database was unavailable, so its result could not be saved';

export const iso = (ms: number) => new Date(ms).toISOString();

/** Thrown at start when another live server holds this instance id; the server must not start. */
export class InstanceInUseError extends Error {}

/**
 * This instance's id among those sharing the database: SIGNALBOX_INSTANCE_ID or a hash of the data dir. The same
 * id after a restart, so the restarted server knows the tasks it left behind. It also marks the task processes
 * (SIGNALBOX_TASK_OWNER) so orphan cleanup matches only this instance's processes.
 */
export const instanceIdOf = (config: Pick<Config, 'instanceId' | 'dataDir'>) =>
  config.instanceId || createHash('sha1').update(config.dataDir).digest('hex').slice(0, 16);

/** The process this server runs in, as recorded beside its heartbeat. */
export const thisProcess = (): RunnerOwner => ({ host: hostname(), pid: process.pid });

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
 * Refuses to start under an instance id another live server holds: starting would end that server's running
 * tasks as interrupted. On this host the holder's pid tells (a crashed predecessor's pid is gone); a holder on
 * another host is watched for one heartbeat period, and still beating means it is alive. A row of this very
 * process (an app rebuilt in-process) is never a conflict.
 */
export async function ensureSoleHolder(
  shared: SharedDb,
  instanceId: string,
  holder: RunnerOwner,
  timings: RunnerTimings,
) {
  const { db } = shared;
  const row = await findRunner(db, instanceId);
  if (!row?.host || row.pid === null) return;
  if (row.host === holder.host && row.pid === holder.pid) return;
  const since = await heartbeatAge(shared, row.heartbeat);
  if (!(since < timings.heartbeatMs * 2 + 5000)) return;
  let alive: boolean;
  if (row.host === holder.host) alive = processExists(row.pid);
  else {
    await new Promise((r) => setTimeout(r, Math.max(0, timings.heartbeatMs + 2000 - since)));
    alive = (await findRunner(db, instanceId))?.heartbeat !== row.heartbeat;
  }
  if (alive)
    throw new InstanceInUseError(
      `Another Signalbox server (pid ${row.pid} on ${row.host}) is running with instance id "${instanceId}" ` +
        'on this database (the same data directory?). Stop it first, or give this server its own ' +
        'SIGNALBOX_INSTANCE_ID.',
    );
}

/** Records that this instance is alive; a failure is logged (the next beat tries again). */
export async function heartbeat(
  shared: SharedDb,
  log: FastifyBaseLogger,
  instanceId: string,
  holder: RunnerOwner,
) {
  try {
    await beatRunner(shared, instanceId, holder);
  } catch (err) {
    logFailure(log, err, 'task runner heartbeat failed');
  }
}

type ActiveTask = { id: number; project_id: number; status: string; runner: string | null };

/**
 * Ends as error the active tasks nothing runs any more: at start this instance's own (left by its previous
 * process; their processes are killed) and legacy ones without a runner; at start and on every sweep those of
 * instances whose heartbeat is older than the staleness window (re-queued instead if they were only claimed). On a sweep also this instance's own that it
 * neither runs nor is claiming (`isHere`): a run that could not save its end while the database was unavailable.
 * A live instance's tasks are never touched.
 */
export async function reconcile(
  ctx: {
    db: Db;
    dialect: Dialect;
    dataDir: string;
    instanceId: string;
    timings: RunnerTimings;
    isHere(taskId: number): boolean;
    interrupt(task: ActiveTask, message: string): Promise<void>;
    /** Puts a task a dead instance claimed but had not started back in the queue. */
    requeue(task: ActiveTask): Promise<void>;
  },
  atStart: boolean,
) {
  const { db, instanceId } = ctx;
  const live = await liveRunners(ctx, ctx.timings.staleMs);
  const own: ActiveTask[] = [];
  const gone: ActiveTask[] = [];
  const unsaved: ActiveTask[] = [];
  /** Tasks another live instance runs: the only task folders here a start must leave alone. */
  const elsewhere = new Set<number>();
  for (const task of await runningTasks(db)) {
    // A remote runner's task lives as long as its runner (remote.ts): an instance's restart or death leaves it be.
    if (task.remote_runner_id !== null) continue;
    if (task.runner === instanceId || task.runner === null) {
      // Rows without a runner predate instance ids: a previous single server left them.
      if (atStart) own.push(task);
      else if (task.runner && !ctx.isHere(task.id)) unsaved.push(task);
    } else if (!live.has(task.runner)) gone.push(task);
    else elsewhere.add(task.id);
  }
  if (atStart) {
    // Every process a previous server process of this instance left, whoever has ended its task since (another
    // instance may have ended it as its runner gone while this one was down), then every task folder here.
    killOrphans(instanceId, 'all', ctx.dataDir);
    for (const id of taskFolders(ctx.dataDir))
      if (!elsewhere.has(id))
        rmSync(join(ctx.dataDir, 'tasks', String(id)), { recursive: true, force: true });
  }
  for (const task of own) await ctx.interrupt(task, interruptedMessage);
  // Claimed but not started (checkout, keys): nothing of it ran, so it waits for another instance instead.
  for (const task of gone)
    if (task.status === 'starting') await ctx.requeue(task);
    else await ctx.interrupt(task, runnerGoneMessage);
  for (const task of unsaved) await ctx.interrupt(task, unsavedMessage);
  if (!atStart) await removeStaleRunners(ctx, ctx.timings.staleMs);
}
