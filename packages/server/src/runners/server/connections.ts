import type { WebSocket } from 'ws';
import { logFailure } from '../../db/retry';
import {
  defaultHeartbeatMs,
  incompatibleReason,
  type RunnerMessage,
  runnerClose,
  runnerProtocol,
} from '../../runner-protocol/protocol';
import { findTask } from '../../tasks/store';
import { version as serverVersion } from '../../version';
import { buildPayload, unregistered } from './dispatch';
import { readRunnerMessages } from './inbox';
import { finishIfComplete, onOutput, onPlanFile, onStatus } from './output';
import {
  adoptTask,
  findRemoteRunner,
  greetRunner,
  type RemoteRunnerRow,
  recordIncompatibleRunner,
  remoteActiveStatuses,
  remoteTasks,
  tasksOfRunner,
  touchRunner,
} from './runners.store';
import {
  type Conn,
  lifeEveryMs,
  type OutputMessage,
  type RemoteState,
  refuseCooldownMs,
  runnerDroppedMessage,
  runnerRestartedMessage,
} from './state';

// A runner's socket: its hello (tasks given back after a reconnect), then every message it sends, handled in order.

export async function onHello(s: RemoteState, conn: Conn, m: Extract<RunnerMessage, { type: 'hello' }>) {
  const { ctx } = s;
  const { db, log, instanceId } = s.ctx;
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
    const run = s.track(conn, full, task.runner_seq);
    try {
      const built = await buildPayload(s, full);
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
    if (task.status === 'starting') await s.requeue(task.id);
    else {
      const since = task.start ? Date.parse(task.start) : 0;
      const newer = Date.parse(m.started_at) > since;
      await s.endTask(task, restarted || newer ? runnerRestartedMessage : runnerDroppedMessage);
    }
  }
  conn.greeted = true;
  s.send(conn, {
    type: 'welcome',
    protocol: runnerProtocol,
    runner_id: runner.id,
    heartbeat_ms: defaultHeartbeatMs,
    acked,
    abandon,
    task_outputs: true,
    task_plans: true,
    plan_files: true,
    task_drift: true,
  });
  if (adopted.length) await ctx.pollControls(adopted);
  ctx.wake();
}

/** One message, or consecutive output batches of one task (stored together). */
export async function onMessages(s: RemoteState, conn: Conn, messages: RunnerMessage[]) {
  const { remote } = s;
  const [m] = messages;
  if (!m) return;
  if (messages.length === 1 || m.type !== 'output' || !conn.greeted) return onMessage(s, conn, m);
  const run = remote.get(m.task_id);
  if (!run || run.conn !== conn) return;
  return onOutput(s, run, messages as OutputMessage[]);
}

export async function onMessage(s: RemoteState, conn: Conn, m: RunnerMessage) {
  const { ctx, remote } = s;
  const { db, log, instanceId } = s.ctx;
  if (m.type === 'hello') return onHello(s, conn, m);
  if (!conn.greeted) return s.close(conn, runnerClose.protocol);
  if (m.type === 'heartbeat') {
    if (await touchRunner(ctx, conn.runner.id, instanceId)) {
      const row = await findRemoteRunner(db, conn.runner.id);
      if (row) conn.runner = row;
      return;
    }
    const row = await findRemoteRunner(db, conn.runner.id);
    if (row) return s.close(conn, runnerClose.replaced);
    // Deleted (in the console): its running tasks end now rather than at the next sweep.
    return unregistered(s, conn.runner.id);
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
    if (m.type === 'finished') s.send(conn, { type: 'done', task_id: m.task_id });
    return;
  }
  switch (m.type) {
    case 'output':
      return onOutput(s, run, [m]);
    case 'status':
      return onStatus(s, run, m);
    case 'finished':
      run.finished = {
        status: m.status,
        last_seq: m.last_seq,
        message: m.message,
        outputs: m.outputs,
        plan: m.plan,
        plan_facts: m.plan_facts,
        drift: m.drift,
      };
      return finishIfComplete(s, run);
    case 'plan_file':
      return onPlanFile(run, m);
    case 'refuse':
      log.warn({ taskId: m.task_id, runnerId: conn.runner.id, reason: m.reason }, 'a runner refused a job');
      conn.coolUntil = Date.now() + refuseCooldownMs;
      setTimeout(ctx.wake, refuseCooldownMs + 10).unref();
      return s.requeue(m.task_id);
  }
}

/**
 * Any message of a runner shows it alive, not only its heartbeats: it is recorded (remote_runner.touched) at most
 * once a second when a message arrives and when one has been handled, beside the in-order handling. A runner
 * whose output keeps the server busy is so never taken for lost while its heartbeats queue behind that output.
 */
export function recordLife(s: RemoteState, conn: Conn) {
  const { ctx } = s;
  const { log, instanceId } = s.ctx;
  const t = Date.now();
  if (conn.recordingLife || conn.closed || !conn.greeted || t - conn.lifeAt < lifeEveryMs) return;
  conn.lifeAt = t;
  conn.recordingLife = true;
  void touchRunner(ctx, conn.runner.id, instanceId)
    .catch((err) => logFailure(log, err, 'recording a runner as alive failed', { runnerId: conn.runner.id }))
    .finally(() => {
      conn.recordingLife = false;
    });
}

/** Takes a runner's new socket (its token already checked): a previous one of the same runner is replaced. */
export function connect(s: RemoteState, socket: WebSocket, runner: RemoteRunnerRow) {
  const { conns } = s;
  const { db, log } = s.ctx;
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
  if (previous) s.close(previous, runnerClose.replaced);
  // Messages are handled one turn at a time, in the order they arrived (see readRunnerMessages).
  readRunnerMessages(socket, {
    alive: () => recordLife(s, conn),
    closed: () => conn.closed,
    invalid(problem) {
      log.warn({ runnerId: runner.id, problem }, 'a runner sent a message that is not valid');
      s.close(conn, runnerClose.protocol);
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
      s.close(conn, {
        code: runnerClose.incompatible.code,
        reason: incompatibleReason(other, serverVersion),
      });
      void recordIncompatibleRunner(db, runner.id, other).catch((err) =>
        logFailure(log, err, 'recording an incompatible runner failed', { runnerId: runner.id }),
      );
    },
    async handle(messages) {
      try {
        await onMessages(s, conn, messages);
      } catch (err) {
        logFailure(log, err, 'handling a runner message failed', { runnerId: runner.id });
        // The runner reconnects and resends what is not acknowledged.
        s.close(conn, { code: 1011, reason: 'Internal error' });
      }
    },
  });
  socket.on('close', () => s.detach(conn));
  socket.on('error', () => s.detach(conn));
}
