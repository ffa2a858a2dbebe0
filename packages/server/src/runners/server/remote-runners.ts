import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import { recordEvent } from '../../audit/audit.store';
import type { Config } from '../../config';
import type { Db } from '../../db';
import type { Dialect } from '../../db/dialect';
import { logFailure } from '../../db/retry';
import { describeDbError, isDbUnavailable } from '../../db/unavailable';
import { toBool } from '../../db/values';
import type { SecretBox } from '../../lib/crypto';
import type { EventBus } from '../../live/bus';
import { type Metrics, trackRun } from '../../metrics/metrics';
import type { FinishedRun } from '../../ports';
import {
  defaultHeartbeatMs,
  incompatibleReason,
  type RunnerMessage,
  runnerClose,
  runnerProtocol,
  type ServerMessage,
} from '../../runner-protocol/protocol';
import { sealFor } from '../../runner-protocol/seal';
import { LogSink } from '../../tasks/output/log-sink';
import type { OutputWriter, RunnerBatchResult } from '../../tasks/output/output.store';
import { liveRunners } from '../../tasks/queue/instances.store';
import type { RunnerSlots } from '../../tasks/queue/placement';
import { loadDetails } from '../../tasks/run/details';
import { type Key, loadTaskKey, lostOutputMessage, TaskFailed } from '../../tasks/run/job';
import type { RunHandle } from '../../tasks/run/runner';
import type { StatusUpdates } from '../../tasks/status';
import { activeTasks, findKey, findRepository, findTask, type TaskRow } from '../../tasks/store';
import { version as serverVersion } from '../../version';
import type { JobPayload } from '../payload';
import { readRunnerMessages } from './inbox';
import { runnerRows } from './output-rows';
import {
  adoptTask,
  connectedRunners,
  databaseIso,
  findRemoteRunner,
  greetRunner,
  type RemoteRunnerRow,
  recordIncompatibleRunner,
  releaseRunner,
  releaseRunnersOf,
  remoteActiveStatuses,
  remoteTasks,
  runnerInstances,
  silentRunners,
  slotStatuses,
  tagsOf,
  tasksOfDeletedRunners,
  tasksOfRunner,
  touchRunner,
} from './runners.store';

export const runnerLostMessage = (name: string) => `Runner lost: ${name} stopped responding`;
export const runnerRestartedMessage = 'The runner restarted while it ran this task';
export const runnerUnregisteredMessage = 'Runner unregistered';
export const runnerDroppedMessage = 'The runner no longer runs this task';

/** How long a runner that refused a job gets no other (it may be short of something for a moment). */
const refuseCooldownMs = 2000;
/** Any message of a runner records it as alive (remote_runner.touched) at most this often. */
const lifeEveryMs = 1000;

type OutputMessage = Extract<RunnerMessage, { type: 'output' }>;

type Conn = {
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

type RemoteRun = {
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
  finished: { status: 'success' | 'error' | 'stopped'; last_seq: number; message?: string } | null;
  templateType: string;
  handle: RunHandle;
  resolve(run: FinishedRun | null): void;
  tracked: ReturnType<typeof trackRun>;
};

export type RemoteRunners = ReturnType<typeof createRemoteRunners>;

/**
 * The remote runners connected to this instance and the tasks they run. Each task given to a runner has a run
 * handle in the engine's `runs` (stop, confirm and reject reach the runner as `control` messages, also when asked
 * on another instance through task.control); its output batches are stored in order exactly once (task.runner_seq)
 * and its end is saved once every batch is. A closed connection is not a lost runner: its tasks stay as they are
 * until the runner reconnects (to any instance) and is given them back, or until it stays silent past
 * SIGNALBOX_RUNNER_LOST_TIMEOUT.
 */
export function createRemoteRunners(ctx: {
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
}) {
  const { db, log, instanceId } = ctx;
  const conns = new Map<number, Conn>();
  const remote = new Map<number, RemoteRun>();
  let sweeping = false;

  const send = (conn: Conn, message: ServerMessage) => {
    if (!conn.closed && conn.socket.readyState === conn.socket.OPEN)
      conn.socket.send(JSON.stringify(message));
  };

  function close(conn: Conn, how: { code: number; reason: string }) {
    if (!conn.closed) conn.socket.close(how.code, how.reason);
    detach(conn);
  }

  /** The connection is gone: its runs leave this instance (their tasks stay as they are). */
  function detach(conn: Conn) {
    if (conn.closed) return;
    conn.closed = true;
    if (conns.get(conn.runner.id) === conn) {
      conns.delete(conn.runner.id);
      void releaseRunner(db, conn.runner.id, instanceId).catch((err) =>
        logFailure(log, err, 'marking a runner offline failed'),
      );
    }
    for (const run of [...remote.values()]) if (run.conn === conn) forget(run, null);
  }

  function forget(run: RemoteRun, finished: FinishedRun | null) {
    if (remote.get(run.taskId) !== run) return;
    remote.delete(run.taskId);
    if (ctx.runs.get(run.taskId) === run.handle) ctx.runs.delete(run.taskId);
    run.resolve(finished);
    ctx.runEnded(run.taskId, finished);
  }

  /** Registers a run of `conn`'s runner for a task (given now, or given back after a reconnect). */
  function track(
    conn: Conn,
    task: Pick<TaskRow, 'id' | 'project_id' | 'template_id' | 'user_id' | 'created'>,
    seq: number,
  ) {
    const old = remote.get(task.id);
    if (old) forget(old, null);
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
      sink: new LogSink({ ...ctx }, task.project_id, task.id, { giveUp: ctx.closing }),
      seq,
      lines: null,
      lost: 0,
      finished: null,
      templateType: '',
      resolve,
      tracked: trackRun(ctx.metrics, task.created),
      handle: {
        done,
        where: { project_id: task.project_id, template_id: task.template_id },
        stop: (force) =>
          send(run.conn, { type: 'control', task_id: task.id, action: force ? 'force' : 'stop' }),
        // The server shutting down does not end remote runs: the runner goes on and reports to the next server.
        interrupt: () => {},
        decide(decision) {
          if (run.conn.closed) return false;
          send(run.conn, {
            type: 'control',
            task_id: task.id,
            action: decision === 'confirmed' ? 'confirm' : 'reject',
          });
          return true;
        },
      },
    };
    remote.set(task.id, run);
    ctx.runs.set(task.id, run.handle);
    return run;
  }

  /** The task's details and every key it may use, with the values its output must never show. */
  async function buildPayload(
    task: TaskRow,
  ): Promise<{ payload: JobPayload; secrets: string[]; app: string; type: string }> {
    const details = await loadDetails(ctx, task);
    const inventoryRepository = details.inventory?.repository_id
      ? ((await findRepository(db, task.project_id, details.inventory.repository_id)) ?? null)
      : null;
    const keyIds = new Set<number>();
    for (const id of [
      details.inventory?.ssh_key_id,
      details.inventory?.become_key_id,
      details.repository?.ssh_key_id,
      details.template.vault_key_id,
      inventoryRepository?.ssh_key_id,
    ])
      if (id) keyIds.add(id);
    const keys: Record<string, Key> = {};
    const secrets: string[] = [
      ...Object.values(details.secretVars),
      ...Object.values(details.secretEnv),
      ...Object.values(details.surveySecrets).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
    ];
    for (const id of keyIds) {
      const row = await findKey(db, task.project_id, id);
      if (!row) continue;
      const key = await loadTaskKey(ctx.box, ctx.config, row);
      keys[String(id)] = key;
      secrets.push(key.password, key.passphrase, key.private_key);
    }
    return {
      payload: { details, keys, inventory_repository: inventoryRepository },
      secrets,
      app: details.template.app || 'ansible',
      type: details.template.type,
    };
  }

  /** Ends a task the server decided to end (its reason as the last line); a run here forgets it. */
  async function endTask(task: { id: number; project_id: number; status: string }, message: string) {
    const run = remote.get(task.id);
    await ctx.status.interrupt(task, message);
    if (run) {
      // The runner must not go on with it: it is told to stop, and its later messages find no run.
      send(run.conn, { type: 'control', task_id: task.id, action: 'force' });
      forget(run, null);
    }
  }

  /** A task given to a runner that never started it goes back to the queue for any runner. */
  async function requeue(taskId: number) {
    const run = remote.get(taskId);
    if (run) forget(run, null);
    const back = { runner: null, remote_runner_id: null, runner_seq: 0, control: null, start: null };
    if (await ctx.status.setStatus(taskId, 'waiting', back, ['starting'])) ctx.wake();
  }

  /** Gives a claimed task (status starting, this runner's) to the runner: its sealed payload in a `job`. */
  function launch(task: { id: number; project_id: number; template_id: number }, runnerId: number) {
    const conn = conns.get(runnerId);
    const placeholder = { ...task, user_id: null, created: new Date().toISOString() };
    if (!conn) {
      void requeue(task.id);
      return;
    }
    const run = track(conn, placeholder, 0);
    void (async () => {
      try {
        const row = await findTask(db, task.id);
        if (!row) return forget(run, null);
        run.userId = row.user_id;
        run.created = row.created;
        run.tracked = trackRun(ctx.metrics, row.created);
        const built = await buildPayload(row);
        run.sink.addSecrets(built.secrets);
        run.templateType = built.type;
        run.tracked.start(built.app);
        if (run.conn.closed || remote.get(task.id) !== run) return requeue(task.id);
        send(run.conn, {
          type: 'job',
          task_id: task.id,
          payload: sealFor(conn.runner.public_key, JSON.stringify(built.payload)),
        });
      } catch (err) {
        const message =
          err instanceof TaskFailed
            ? err.message
            : 'The task failed with an internal error (see the server log)';
        if (!(err instanceof TaskFailed))
          log.error({ err, taskId: task.id }, 'preparing a remote job failed');
        await ctx.status.interrupt({ id: task.id, project_id: task.project_id, status: 'starting' }, message);
        forget(run, null);
      }
    })();
  }

  async function onHello(conn: Conn, m: Extract<RunnerMessage, { type: 'hello' }>) {
    const runner = conn.runner;
    conn.startedAt = m.started_at;
    const previousStart = runner.started_at;
    await greetRunner(ctx, runner.id, {
      version: m.version,
      protocol: m.protocol ?? 1,
      started_at: m.started_at,
      instance_id: instanceId,
      sandbox: m.sandbox?.mode ?? null,
      sandbox_reason: m.sandbox?.reason ?? null,
    });
    // The owner's max_parallel_tasks stays as it is: the runner's offer only lowers what it is given.
    conn.offer = m.max_parallel_tasks;
    conn.draining = m.draining === true;
    runner.started_at = m.started_at;
    const listed = new Map(m.running.map((r) => [r.task_id, r.last_seq]));
    const acked: { task_id: number; seq: number }[] = [];
    const abandon: number[] = [];
    const adopted: number[] = [];
    for (const task of await remoteTasks(db, [...listed.keys()])) {
      if (task.remote_runner_id !== runner.id || !remoteActiveStatuses.includes(task.status)) continue;
      if (!(await adoptTask(db, task.id, runner.id, instanceId))) continue;
      const full = await findTask(db, task.id);
      if (!full) continue;
      const run = track(conn, full, task.runner_seq);
      try {
        const built = await buildPayload(full);
        run.sink.addSecrets(built.secrets);
        run.templateType = built.type;
        run.tracked.start(built.app);
      } catch (err) {
        logFailure(log, err, 'reading the secrets of a remote task failed', { taskId: task.id });
      }
      acked.push({ task_id: task.id, seq: task.runner_seq });
      adopted.push(task.id);
    }
    for (const id of listed.keys()) if (!adopted.includes(id)) abandon.push(id);
    // This runner's tasks its hello does not name: never begun (back to the queue) or lost with its process.
    const restarted = previousStart !== null && previousStart !== m.started_at;
    for (const task of await tasksOfRunner(db, runner.id)) {
      if (listed.has(task.id)) continue;
      if (task.status === 'starting') await requeue(task.id);
      else {
        const since = task.start ? Date.parse(task.start) : 0;
        const newer = Date.parse(m.started_at) > since;
        await endTask(task, restarted || newer ? runnerRestartedMessage : runnerDroppedMessage);
      }
    }
    conn.greeted = true;
    send(conn, {
      type: 'welcome',
      protocol: runnerProtocol,
      runner_id: runner.id,
      heartbeat_ms: defaultHeartbeatMs,
      acked,
      abandon,
    });
    if (adopted.length) await ctx.pollControls(adopted);
    ctx.wake();
  }

  /** Stores consecutive output batches of a run in one transaction (one batch, or those that waited together). */
  async function onOutput(run: RemoteRun, received: OutputMessage[]) {
    // A batch sent again (its ack was lost) is acknowledged, not stored twice.
    const batches = received.filter((b) => b.seq > run.seq);
    const first = batches[0];
    const last = batches.at(-1);
    if (!first || !last) return send(run.conn, { type: 'ack', task_id: run.taskId, seq: run.seq });
    if (first.seq !== run.seq + 1) {
      // A batch went missing on the way: a reconnect makes the runner resend from the last stored one.
      log.warn({ taskId: run.taskId, seq: first.seq, stored: run.seq }, 'runner output batch out of order');
      return close(run.conn, runnerClose.protocol);
    }
    const rows = batches.flatMap((b) => runnerRows(run.taskId, b.lines, run.sink));
    // Batches of a task are stored one after another by the one run that holds it: the log's length is counted
    // once, with the first batch, and then kept (counting every batch costs as much as the log).
    const batch = {
      taskId: run.taskId,
      runnerId: run.runnerId,
      fromSeq: first.seq,
      seq: last.seq,
      rows,
      count: run.lines === null,
    };
    let result: RunnerBatchResult;
    try {
      result = await ctx.output.writeRunnerBatch(batch);
    } catch (err) {
      // A lost connection: the socket closes and the runner sends the batches again once it is back.
      if (isDbUnavailable(err)) throw err;
      // Refused by the database: batches taken together are tried one by one, so only the refused one is missing.
      if (batches.length > 1) {
        for (const one of batches) await onOutput(run, [one]);
        return;
      }
      // It would be refused again on every resend and hold the task forever. It is passed over as the server's own
      // log path does with such a batch, and the task cannot end as success.
      // The error only, never the statement: a driver's error can carry the lines' text.
      log.error(
        { reason: describeDbError(err), taskId: run.taskId, lines: rows.length },
        'storing runner output failed',
      );
      result = await ctx.output.writeRunnerBatch({ ...batch, rows: [], count: false });
      if (result.stored) {
        run.lost += rows.length;
        run.seq = last.seq;
        send(run.conn, { type: 'ack', task_id: run.taskId, seq: last.seq });
        return finishIfComplete(run);
      }
    }
    if (!result.stored) {
      const task = await findTask(db, run.taskId);
      if (!task || !remoteActiveStatuses.includes(task.status) || task.remote_runner_id !== run.runnerId)
        return endedElsewhere(run);
      run.seq = task.runner_seq;
      return send(run.conn, { type: 'ack', task_id: run.taskId, seq: run.seq });
    }
    run.seq = last.seq;
    const line = (result.before ?? run.lines ?? 0) + 1;
    run.lines = line - 1 + rows.length;
    ctx.metrics.outputLines.inc(rows.length);
    ctx.bus.publishLogs({
      project_id: run.projectId,
      task_id: run.taskId,
      lines: rows.map((row, i) => ({ output: row.output, time: row.time, line: line + i })),
    });
    send(run.conn, { type: 'ack', task_id: run.taskId, seq: last.seq });
    await finishIfComplete(run);
  }

  /** The server ended the task meanwhile (lost, unregistered): the runner stops it and forgets it. */
  function endedElsewhere(run: RemoteRun) {
    send(run.conn, { type: 'control', task_id: run.taskId, action: 'force' });
    send(run.conn, { type: 'done', task_id: run.taskId });
    forget(run, null);
  }

  async function onStatus(run: RemoteRun, m: Extract<RunnerMessage, { type: 'status' }>) {
    if (m.commit_hash !== undefined || m.commit_message !== undefined)
      await db
        .updateTable('task')
        .set({
          ...(m.commit_hash !== undefined ? { commit_hash: m.commit_hash } : {}),
          ...(m.commit_message !== undefined ? { commit_message: m.commit_message } : {}),
        })
        .where('id', '=', run.taskId)
        .execute();
    await ctx.status.setStatus(run.taskId, m.status);
  }

  async function finishIfComplete(run: RemoteRun) {
    const f = run.finished;
    if (!f || run.seq < f.last_seq) return;
    run.finished = null;
    if (f.status === 'error' && f.message) run.sink.line(f.message);
    // Lines the database refused: said as a line, and a run that succeeded ends as error with that reason.
    const lost = run.lost ? lostOutputMessage(run.lost) : null;
    if (lost) run.sink.line(lost);
    await run.sink.close();
    const reason = f.status === 'error' && f.message ? f.message : f.status === 'success' ? lost : null;
    const saved = reason
      ? await ctx.status.saveStatus(run.taskId, 'error', { message: reason })
      : await ctx.status.saveStatus(run.taskId, f.status);
    if (!saved && f.status !== 'stopped') await ctx.status.setStatus(run.taskId, 'stopped');
    const end = await findTask(db, run.taskId);
    run.tracked.finish(end?.status ?? f.status);
    await recordEvent(db, {
      project_id: run.projectId,
      user_id: run.userId,
      object_type: 'task',
      object_id: run.taskId,
      description: `Task ID ${run.taskId} finished: ${end?.status ?? f.status}`,
    }).catch((err) => logFailure(log, err, 'recording the task event failed', { taskId: run.taskId }));
    send(run.conn, { type: 'done', task_id: run.taskId });
    forget(
      run,
      end
        ? {
            taskId: run.taskId,
            projectId: run.projectId,
            templateId: run.templateId,
            userId: run.userId,
            status: end.status,
            templateType: run.templateType,
            giveUp: ctx.closing,
          }
        : null,
    );
  }

  /** One message, or consecutive output batches of one task (stored together). */
  async function onMessages(conn: Conn, messages: RunnerMessage[]) {
    const [m] = messages;
    if (!m) return;
    if (messages.length === 1 || m.type !== 'output' || !conn.greeted) return onMessage(conn, m);
    const run = remote.get(m.task_id);
    if (!run || run.conn !== conn) return;
    return onOutput(run, messages as OutputMessage[]);
  }

  async function onMessage(conn: Conn, m: RunnerMessage) {
    if (m.type === 'hello') return onHello(conn, m);
    if (!conn.greeted) return close(conn, runnerClose.protocol);
    if (m.type === 'heartbeat') {
      if (await touchRunner(ctx, conn.runner.id, instanceId)) {
        const row = await findRemoteRunner(db, conn.runner.id);
        if (row) conn.runner = row;
        return;
      }
      const row = await findRemoteRunner(db, conn.runner.id);
      if (row) return close(conn, runnerClose.replaced);
      // Deleted (in the console): its running tasks end now rather than at the next sweep.
      return unregistered(conn.runner.id);
    }
    if (m.type === 'drain') {
      if (!conn.draining)
        log.info({ runnerId: conn.runner.id }, 'a runner is shutting down: no new tasks for it');
      conn.draining = true;
      return;
    }
    const run = remote.get(m.task_id);
    if (!run || run.conn !== conn) {
      // Not a task of this connection (ended by the server, or never given): nothing of it is kept.
      if (m.type === 'finished') send(conn, { type: 'done', task_id: m.task_id });
      return;
    }
    switch (m.type) {
      case 'output':
        return onOutput(run, [m]);
      case 'status':
        return onStatus(run, m);
      case 'finished':
        run.finished = { status: m.status, last_seq: m.last_seq, message: m.message };
        return finishIfComplete(run);
      case 'refuse':
        log.warn({ taskId: m.task_id, runnerId: conn.runner.id, reason: m.reason }, 'a runner refused a job');
        conn.coolUntil = Date.now() + refuseCooldownMs;
        setTimeout(ctx.wake, refuseCooldownMs + 10).unref();
        return requeue(m.task_id);
    }
  }

  /**
   * Any message of a runner shows it alive, not only its heartbeats: it is recorded (remote_runner.touched) at most
   * once a second when a message arrives and when one has been handled, beside the in-order handling. A runner
   * whose output keeps the server busy is so never taken for lost while its heartbeats queue behind that output.
   */
  function recordLife(conn: Conn) {
    const t = Date.now();
    if (conn.recordingLife || conn.closed || !conn.greeted || t - conn.lifeAt < lifeEveryMs) return;
    conn.lifeAt = t;
    conn.recordingLife = true;
    void touchRunner(ctx, conn.runner.id, instanceId)
      .catch((err) =>
        logFailure(log, err, 'recording a runner as alive failed', { runnerId: conn.runner.id }),
      )
      .finally(() => {
        conn.recordingLife = false;
      });
  }

  /** Takes a runner's new socket (its token already checked): a previous one of the same runner is replaced. */
  function connect(socket: WebSocket, runner: RemoteRunnerRow) {
    const previous = conns.get(runner.id);
    const conn: Conn = {
      socket,
      runner,
      greeted: false,
      startedAt: '',
      coolUntil: 0,
      closed: false,
      lifeAt: 0,
      recordingLife: false,
      offer: runner.max_parallel_tasks,
      draining: false,
    };
    // Registered first: the replaced connection's end then leaves the runner shown online.
    conns.set(runner.id, conn);
    if (previous) close(previous, runnerClose.replaced);
    // Messages are handled one turn at a time, in the order they arrived (see readRunnerMessages).
    readRunnerMessages(socket, {
      alive: () => recordLife(conn),
      closed: () => conn.closed,
      invalid(problem) {
        log.warn({ runnerId: runner.id, problem }, 'a runner sent a message that is not valid');
        close(conn, runnerClose.protocol);
      },
      incompatible(other) {
        log.warn(
          {
            runnerId: runner.id,
            protocol: other.protocol,
            version: other.version,
            serverProtocol: runnerProtocol,
          },
          'a runner of another protocol version was refused',
        );
        close(conn, {
          code: runnerClose.incompatible.code,
          reason: incompatibleReason(other, serverVersion),
        });
        void recordIncompatibleRunner(db, runner.id, other).catch((err) =>
          logFailure(log, err, 'recording an incompatible runner failed', { runnerId: runner.id }),
        );
      },
      async handle(messages) {
        try {
          await onMessages(conn, messages);
        } catch (err) {
          logFailure(log, err, 'handling a runner message failed', { runnerId: runner.id });
          // The runner reconnects and resends what is not acknowledged.
          close(conn, { code: 1011, reason: 'Internal error' });
        }
      },
    });
    socket.on('close', () => detach(conn));
    socket.on('error', () => detach(conn));
  }

  /**
   * The runners as the queue sees them: those connected to any instance, with their slots taken. Only greeted
   * connections of this instance can be given work.
   */
  async function slots(): Promise<RunnerSlots[]> {
    const rows = await connectedRunners(db);
    if (!rows.length) return [];
    const load = new Map<number, number>();
    for (const t of await activeTasks(db))
      if (t.remote_runner_id && slotStatuses.includes(t.status))
        load.set(t.remote_runner_id, (load.get(t.remote_runner_id) ?? 0) + 1);
    const t = Date.now();
    return rows.map((r) => {
      const conn = conns.get(r.id);
      const mine = r.instance_id === instanceId && !!conn?.greeted && !conn.closed;
      return {
        id: r.id,
        name: r.name,
        project_id: r.project_id,
        tags: tagsOf(r),
        active: toBool(r.active),
        // The owner's setting, lowered to what the runner offers.
        max: mine && conn ? Math.min(r.max_parallel_tasks, conn.offer) : r.max_parallel_tasks,
        load: load.get(r.id) ?? 0,
        draining: mine && !!conn?.draining,
        here: mine && !!conn && !conn.draining && conn.coolUntil <= t,
      };
    });
  }

  /**
   * Runners silent past the lost timeout: their tasks end as error (back to the queue if never begun), and a
   * connection of theirs here is dropped. Connections recorded for instances that are gone show offline.
   */
  async function sweep() {
    if (sweeping || ctx.closing()) return;
    sweeping = true;
    try {
      const live = await liveRunners(ctx, ctx.staleMs);
      await releaseRunnersOf(
        db,
        (await runnerInstances(db)).filter((id) => id !== instanceId && !live.has(id)),
      );
      const before = await databaseIso(ctx, -ctx.config.runnerLostTimeout * 1000);
      for (const runner of await silentRunners(db, before)) {
        const conn = conns.get(runner.id);
        if (conn) close(conn, { code: 1001, reason: 'Runner lost' });
        for (const task of await tasksOfRunner(db, runner.id))
          if (task.status === 'starting') await requeue(task.id);
          else await endTask(task, runnerLostMessage(runner.name));
      }
      for (const task of await tasksOfDeletedRunners(db))
        if (task.status === 'starting') await requeue(task.id);
        else await endTask(task, runnerUnregisteredMessage);
    } catch (err) {
      logFailure(log, err, 'looking for lost runners failed');
    } finally {
      sweeping = false;
    }
  }

  /** A runner was unregistered: its connection here closes, its running tasks end, its claimed ones wait again. */
  async function unregistered(runnerId: number) {
    const conn = conns.get(runnerId);
    if (conn) close(conn, runnerClose.unauthorized);
    for (const task of await tasksOfRunner(db, runnerId))
      if (task.status === 'starting') await requeue(task.id);
      else await endTask(task, runnerUnregisteredMessage);
  }

  return {
    connect,
    launch,
    slots,
    sweep,
    unregistered,
    isRemote: (taskId: number) => remote.has(taskId),
    /** Connections this instance's previous process held are gone. */
    async start() {
      await releaseRunnersOf(db, [instanceId]);
    },
    /** Closes every runner connection; the runners' tasks go on and are given back when they reconnect. */
    async close() {
      for (const conn of [...conns.values()]) close(conn, { code: 1001, reason: 'Server shutting down' });
      await Promise.allSettled([...remote.values()].map((r) => r.sink.close()));
      await releaseRunnersOf(db, [instanceId]).catch((err) =>
        logFailure(log, err, 'marking runners offline failed'),
      );
    },
    /** How many runners are connected here (tests). */
    connected: () => conns.size,
  };
}
