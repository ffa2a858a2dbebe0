import type { DriftReport, PlanSummary } from '@signalbox/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import type { Config } from '../../config';
import type { Db } from '../../db';
import type { Dialect } from '../../db/dialect';
import { logFailure } from '../../db/retry';
import type { SecretBox } from '../../lib/crypto';
import type { EventBus } from '../../live/bus';
import { type Metrics, trackRun } from '../../metrics/metrics';
import type { FinishedRun } from '../../ports';
import type { RunnerMessage, ServerMessage } from '../../runner-protocol/protocol';
import { LogSink } from '../../tasks/output/log-sink';
import type { OutputWriter } from '../../tasks/output/output.store';
import type { RunHandle } from '../../tasks/run/runner';
import type { StatusUpdates } from '../../tasks/status';
import type { TaskRow } from '../../tasks/store';
import { type RemoteRunnerRow, releaseRunner } from './runners.store';

export const runnerLostMessage = (name: string) => `Runner lost: ${name} stopped responding`;
export const runnerRestartedMessage = 'The runner restarted while it ran this task';
export const runnerUnregisteredMessage = 'Runner unregistered';
export const runnerDroppedMessage = 'The runner no longer runs this task';

/** How long a runner that refused a job gets no other (it may be short of something for a moment). */
export const refuseCooldownMs = 2000;
/** Any message of a runner records it as alive (remote_runner.touched) at most this often. */
export const lifeEveryMs = 1000;

export type OutputMessage = Extract<RunnerMessage, { type: 'output' }>;
export type RunnerPlanFacts = NonNullable<Extract<RunnerMessage, { type: 'status' }>['plan_facts']>;

export type Conn = {
  socket: WebSocket;
  runner: RemoteRunnerRow;
  greeted: boolean;
  startedAt: string;
  coolUntil: number;
  closed: boolean;
  /** When a message of the runner last recorded it as alive (remote_runner.touched), and whether that is under way. */
  lifeAt: number;
  recordingLife: boolean;
  /** How many tasks at once the runner's hello offered; it gets at most the fewer of this and the owner's setting. */
  offer: number;
  /** The runner is shutting down: it finishes its tasks but is given no new one. */
  draining: boolean;
};

export type RemoteRun = {
  taskId: number;
  projectId: number;
  templateId: number;
  userId: number | null;
  created: string;
  runnerId: number;
  conn: Conn;
  /** Masks the task's secrets in its output and writes the server's own lines. */
  sink: LogSink;
  /** The last batch stored (task.runner_seq). */
  seq: number;
  /**
   * Lines of the task's log stored so far, counted once (at this run's first batch) and then kept: each published
   * line's number is its position in the log.
   */
  lines: number | null;
  /** Lines the database refused (not a lost connection): the task cannot end as success. */
  lost: number;
  /** The plan file the runner sent for the plan its next status or `finished` carries (base64, digest checked). */
  planFile?: { digest: string; data: string };
  finished: {
    status: 'success' | 'error' | 'stopped';
    last_seq: number;
    message?: string;
    /** The outputs the task published, kept before its final status. */
    outputs?: Record<string, unknown>;
    /** The summary of the task's saved plan (a plan-only run), kept before its final status. */
    plan?: PlanSummary;
    plan_facts?: RunnerPlanFacts;
    /** What the task's drift check found. */
    drift?: DriftReport;
  } | null;
  templateType: string;
  handle: RunHandle;
  resolve(run: FinishedRun | null): void;
  tracked: ReturnType<typeof trackRun>;
};

/** What the server's side of remote runners is given by the engine. */
export type RemoteRunnersContext = {
  db: Db;
  dialect: Dialect;
  box: SecretBox;
  log: FastifyBaseLogger;
  bus: EventBus;
  metrics: Metrics;
  config: Pick<Config, 'runnerLostTimeout' | 'keyEnvPrefix' | 'keyFilesDir'>;
  instanceId: string;
  output: OutputWriter;
  status: StatusUpdates;
  runs: Map<number, RunHandle>;
  /** Called once a run here ends or leaves this instance (its handle is out of `runs`). */
  runEnded(taskId: number, finished: FinishedRun | null): void;
  /** A control request may wait for a task given back to this instance. */
  pollControls(taskIds: number[]): Promise<void>;
  wake(): void;
  closing(): boolean;
  staleMs: number;
};

/**
 * The runner connections of this instance and the remote runs they hold, with the bookkeeping every part of the
 * server's side shares: sending to a runner, dropping a connection (its runs leave this instance, their tasks
 * stay as they are), registering and forgetting a run, ending or requeueing a task.
 */
export class RemoteState {
  readonly conns = new Map<number, Conn>();
  readonly remote = new Map<number, RemoteRun>();
  /** A sweep for lost runners is under way. */
  sweeping = false;

  constructor(readonly ctx: RemoteRunnersContext) {}

  send(conn: Conn, message: ServerMessage) {
    if (!conn.closed && conn.socket.readyState === conn.socket.OPEN)
      conn.socket.send(JSON.stringify(message));
  }

  close(conn: Conn, how: { code: number; reason: string }) {
    if (!conn.closed) conn.socket.close(how.code, how.reason);
    this.detach(conn);
  }

  /** The connection is gone: its runs leave this instance (their tasks stay as they are). */
  detach(conn: Conn) {
    if (conn.closed) return;
    conn.closed = true;
    if (this.conns.get(conn.runner.id) === conn) {
      this.conns.delete(conn.runner.id);
      void releaseRunner(this.ctx.db, conn.runner.id, this.ctx.instanceId).catch((err) =>
        logFailure(this.ctx.log, err, 'marking a runner offline failed'),
      );
    }
    for (const run of [...this.remote.values()]) if (run.conn === conn) this.forget(run, null);
  }

  forget(run: RemoteRun, finished: FinishedRun | null) {
    if (this.remote.get(run.taskId) !== run) return;
    this.remote.delete(run.taskId);
    if (this.ctx.runs.get(run.taskId) === run.handle) this.ctx.runs.delete(run.taskId);
    run.resolve(finished);
    this.ctx.runEnded(run.taskId, finished);
  }

  /** Registers a run of `conn`'s runner for a task (given now, or given back after a reconnect). */
  track(
    conn: Conn,
    task: Pick<TaskRow, 'id' | 'project_id' | 'template_id' | 'user_id' | 'created'>,
    seq: number,
  ) {
    const old = this.remote.get(task.id);
    if (old) this.forget(old, null);
    let resolve: (run: FinishedRun | null) => void = () => {};
    const done = new Promise<FinishedRun | null>((r) => {
      resolve = r;
    });
    const run: RemoteRun = {
      taskId: task.id,
      projectId: task.project_id,
      templateId: task.template_id,
      userId: task.user_id,
      created: task.created,
      runnerId: conn.runner.id,
      conn,
      sink: new LogSink({ ...this.ctx }, task.project_id, task.id, { giveUp: this.ctx.closing }),
      seq,
      lines: null,
      lost: 0,
      finished: null,
      templateType: '',
      resolve,
      tracked: trackRun(this.ctx.metrics, task.created),
      handle: {
        done,
        where: { project_id: task.project_id, template_id: task.template_id },
        stop: (force) =>
          this.send(run.conn, { type: 'control', task_id: task.id, action: force ? 'force' : 'stop' }),
        // The server shutting down does not end remote runs: the runner goes on and reports to the next server.
        interrupt: () => {},
        decide: (decision) => {
          if (run.conn.closed) return false;
          this.send(run.conn, {
            type: 'control',
            task_id: task.id,
            action: decision === 'confirmed' ? 'confirm' : 'reject',
          });
          return true;
        },
      },
    };
    this.remote.set(task.id, run);
    this.ctx.runs.set(task.id, run.handle);
    return run;
  }

  /** Ends a task the server decided to end (its reason as the last line); a run here forgets it. */
  async endTask(task: { id: number; project_id: number; status: string }, message: string) {
    const run = this.remote.get(task.id);
    await this.ctx.status.interrupt(task, message);
    if (run) {
      // The runner must not go on with it: it is told to stop, and its later messages find no run.
      this.send(run.conn, { type: 'control', task_id: task.id, action: 'force' });
      this.forget(run, null);
    }
  }

  /** A task given to a runner that never started it goes back to the queue for any runner. */
  async requeue(taskId: number) {
    const run = this.remote.get(taskId);
    if (run) this.forget(run, null);
    const back = { runner: null, remote_runner_id: null, runner_seq: 0, control: null, start: null };
    if (await this.ctx.status.setStatus(taskId, 'waiting', back, ['starting'])) this.ctx.wake();
  }
}
