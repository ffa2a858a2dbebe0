import { isFinished } from '@signalbox/contracts';
import type { FastifyBaseLogger } from 'fastify';
import { sql, type Updateable, type UpdateObject } from 'kysely';
import type { Database, Db } from '../db';
import { untilDbAnswers } from '../db/retry';
import type { TaskTable } from '../db/tables';
import { now } from '../db/values';
import type { EventBus } from '../live/bus';
import type { Metrics } from '../metrics/metrics';
import { LogSink } from './output/log-sink';
import type { OutputWriter } from './output/output.store';
import { releaseStateLocksOf } from './state-credentials.store';
import { casStatus, findTask, type TaskRow } from './store';

/** Which statuses a task may move to a given status from. */
export const allowedFrom: Readonly<Record<string, readonly string[]>> = {
  waiting: ['waiting_approval'],
  starting: ['waiting'],
  running: ['starting', 'confirmed'],
  waiting_confirmation: ['running'],
  confirmed: ['waiting_confirmation'],
  rejected: ['waiting_confirmation', 'waiting_approval'],
  stopping: ['starting', 'running', 'waiting_confirmation', 'confirmed'],
  stopped: [
    'waiting_approval',
    'waiting',
    'starting',
    'running',
    'waiting_confirmation',
    'confirmed',
    'rejected',
    'stopping',
  ],
  success: ['running'],
  error: ['waiting', 'starting', 'running', 'waiting_confirmation', 'confirmed', 'rejected', 'stopping'],
};

/** The statuses a task may move to `status` from (none for an unknown status). */
export const transitionsTo = (status: string): string[] => [...(allowedFrom[status] ?? [])];

export type StatusUpdates = {
  /** Saves a status change (if allowed from the current one, or from `from` when given) and publishes it. */
  setStatus(id: number, status: string, extra?: Updateable<TaskTable>, from?: string[]): Promise<boolean>;
  /**
   * setStatus for a run's own transitions (to running, to its end): while the database is unavailable it tries
   * again (bounded by dbRetry.capMs; past it, the sweep ends the task), and a change that was applied although
   * its answer was lost counts as saved.
   */
  saveStatus(id: number, status: string, extra?: Updateable<TaskTable>): Promise<boolean>;
  /** Publishes the task's current row as an `update` on the bus. */
  publishTask(task: TaskRow): void;
  /** Ends an active task nothing runs any more as error, with the reason as its last output line. */
  interrupt(task: { id: number; project_id: number; status: string }, message: string): Promise<void>;
  /**
   * Puts a task an instance claimed but had not started back in the queue, only while that instance still holds
   * the claim: a second sweep that read the same claim must not take back the claim of the instance that took the
   * task since (the task would then start twice, in one folder).
   */
  requeueClaim(task: { id: number; runner: string | null }): Promise<boolean>;
};

/**
 * The status changes of one engine. Each change is saved first and published after (readers of the bus never see
 * a status the database does not hold). `details` are the engine's reasons why waiting tasks wait.
 */
export function createStatusUpdates(ctx: {
  db: Db;
  bus: EventBus;
  log: FastifyBaseLogger;
  output: OutputWriter;
  metrics: Pick<Metrics, 'outputLines'>;
  details: Map<number, string>;
  closing: () => boolean;
}): StatusUpdates {
  const { db, details } = ctx;

  const publishTask = (t: TaskRow) =>
    ctx.bus.publish({
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

  /** A finished task's state locks go with it; a failure to release them never holds up its status. */
  async function releaseLocks(id: number) {
    try {
      await releaseStateLocksOf(db, id);
    } catch (err) {
      ctx.log.warn({ err, taskId: id }, 'releasing the state locks of a finished task failed');
    }
  }

  async function setStatus(
    id: number,
    status: string,
    extra: Updateable<TaskTable> = {},
    from?: string[],
    runner?: string | null,
  ) {
    const fields: UpdateObject<Database, 'task'> = { ...extra, status };
    // A task's start is its first move to running (one back from a confirmation keeps it), set by the same statement.
    if (status === 'running' && !extra.start)
      fields.start = sql<string>`coalesce(${sql.ref('start')}, ${now()})`;
    if (isFinished(status)) {
      fields.end ??= now();
      fields.secret = null;
      fields.control = null;
    }
    const ok = await casStatus(db, id, from ?? transitionsTo(status), fields, runner);
    if (ok && isFinished(status)) await releaseLocks(id);
    if (ok) {
      if (status !== 'waiting') details.delete(id);
      const t = await findTask(db, id);
      if (t) publishTask(t);
    }
    return ok;
  }

  async function saveStatus(id: number, status: string, extra: Updateable<TaskTable> = {}) {
    let attempted = false;
    return untilDbAnswers(
      async () => {
        if (attempted) {
          const t = await findTask(db, id);
          if (t?.status === status) {
            publishTask(t);
            return true;
          }
        }
        attempted = true;
        return setStatus(id, status, extra);
      },
      { log: ctx.log, what: `saving task status ${status}`, taskId: id, giveUp: ctx.closing },
    );
  }

  async function interrupt(task: { id: number; project_id: number; status: string }, message: string) {
    const ok = await casStatus(db, task.id, [task.status], {
      status: 'error',
      message,
      end: now(),
      secret: null,
      control: null,
    });
    if (!ok) return;
    await releaseLocks(task.id);
    const sink = new LogSink(ctx, task.project_id, task.id, { giveUp: ctx.closing });
    sink.line(message);
    await sink.close();
    const row = await findTask(db, task.id);
    if (row) publishTask(row);
  }

  const requeueClaim = (task: { id: number; runner: string | null }) =>
    setStatus(task.id, 'waiting', { runner: null, control: null, start: null }, ['starting'], task.runner);

  return { setStatus, saveStatus, publishTask, interrupt, requeueClaim };
}
