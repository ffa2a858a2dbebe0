import { EventEmitter } from 'node:events';
import type {
  LiveMessage,
  TaskLogMessage,
  TaskUpdateMessage,
  WorkflowRunUpdateMessage,
} from '@signalbox/contracts';

export type { LiveMessage, TaskLogMessage, TaskUpdateMessage, WorkflowRunUpdateMessage };

/** One stored batch of a task's output lines, published together (the socket hub writes it in one go). */
export type TaskLogBatch = {
  project_id: number;
  task_id: number;
  /** `line`: the line's 1-based position in the task's log (as stored). */
  lines: { output: string; time: string; line: number }[];
};

/** A batch as the separate `log` messages the socket sends. */
export const logMessages = (batch: TaskLogBatch): TaskLogMessage[] =>
  batch.lines.map((l) => ({
    type: 'log',
    project_id: batch.project_id,
    task_id: batch.task_id,
    output: l.output,
    time: l.time,
    line: l.line,
  }));

export type BusEvents = {
  live: [LiveMessage];
  /** Output lines; each line reaches socket clients as its own `log` message. */
  logs: [TaskLogBatch];
  /** A session signed out: the sockets opened with it close. */
  logout: [{ sessionId: number }];
  /** A user gained access (joined a project, became an admin): their sockets read their memberships again. */
  membership: [{ userId: number }];
  /**
   * A user lost access: to the project `projectId` (removed from it, or left it), or with `projectId` null, their
   * admin rights. Their sockets stop getting that project's messages before the event returns, then refresh.
   */
  accessRevoked: [{ userId: number; projectId: number | null }];
  /** A user was deleted: their sockets close. */
  userDeleted: [{ userId: number }];
  /**
   * A user's sessions but `keepSessionId` were expired, and with `tokens` their API tokens deleted too (password
   * change): the sockets opened with them close.
   */
  sessionsExpired: [{ userId: number; keepSessionId: number | null; tokens?: boolean }];
  /** API tokens of a user were deleted: the sockets opened with them close. */
  tokensRevoked: [{ userId: number; tokenIds: string[] }];
  /**
   * A stop/force stop/confirm/reject request left in `task.control` for the instance running the task (the
   * owner reads the column at once; without Redis its one-second poll finds it).
   */
  taskControl: [{ taskId: number; action: TaskControlAction }];
  /**
   * What a project shows changed other than through a task update: a write through the API, or tasks deleted by
   * retention. `projectId` null: possibly every project (a user renamed, a project created or restored).
   */
  projectChanged: [{ projectId: number | null }];
  /**
   * A runner was changed in the console (enabled, its capacity or tags): the queue of the instance holding its
   * connection looks again at once.
   */
  runnerChanged: [{ runnerId: number }];
  /** A workflow run changed (a node moved on, an approval, its end): consoles re-read it, engines advance it. */
  workflowRun: [WorkflowRunUpdateMessage];
};

export type TaskControlAction = 'stop' | 'force' | 'confirm' | 'reject';

/** Every bus event, all of them shared with other server instances when a bridge is attached. */
export const busEvents = [
  'live',
  'logs',
  'logout',
  'membership',
  'accessRevoked',
  'userDeleted',
  'sessionsExpired',
  'tokensRevoked',
  'taskControl',
  'projectChanged',
  'runnerChanged',
  'workflowRun',
] as const;
export type BusEvent = (typeof busEvents)[number];

/** The events after which what a user may reach can have changed (a signed-in user, a token, a membership). */
export const accessEvents = [
  'membership',
  'accessRevoked',
  'userDeleted',
  'sessionsExpired',
  'tokensRevoked',
  'logout',
] as const satisfies readonly BusEvent[];
const shared = new Set<string | symbol>(busEvents);

/** Carries local events to other server instances (Redis pub/sub: live/redis.ts). Must never throw or block. */
export type BusBridge = { forward<K extends BusEvent>(event: K, payload: BusEvents[K][0]): void };

/**
 * In-process event bus; the task engine publishes, the socket hub subscribes. With a bridge attached, every
 * event emitted here also goes to the other instances; events relayed from them enter through emitRelayed().
 */
export class EventBus extends EventEmitter<BusEvents> {
  private bridge: BusBridge | null = null;
  /** Listeners that hear only this instance's own events (see localListeners). */
  private readonly localOnly = new Set<unknown>();
  constructor() {
    super();
    this.setMaxListeners(0);
  }
  attach(bridge: BusBridge | null) {
    this.bridge = bridge;
  }
  override emit<K extends BusEvent>(event: K, ...args: BusEvents[K]): boolean {
    // (EventEmitter itself may emit others, e.g. 'newListener': those stay local.)
    if (this.bridge && shared.has(event)) this.bridge.forward(event, args[0]);
    return super.emit(event, ...(args as never));
  }
  /** An event relayed from another instance: to this instance's listeners (not local-only ones), never forwarded. */
  emitRelayed<K extends BusEvent>(event: K, ...args: BusEvents[K]): boolean {
    if (!this.localOnly.size) return super.emit(event, ...(args as never));
    const listeners = this.rawListeners(event).filter((l) => !this.localOnly.has(l));
    for (const l of listeners) (l as (...a: BusEvents[K]) => void).apply(this, args);
    return listeners.length > 0;
  }
  /**
   * Runs `subscribe`; the listeners it adds hear only events emitted on this instance, never ones relayed from
   * other instances (alerts: each task result is alerted once, by the instance that ran the task).
   */
  localListeners<T>(subscribe: () => T): T {
    const before = new Set(busEvents.flatMap((e) => this.rawListeners(e)));
    const out = subscribe();
    for (const e of busEvents)
      for (const l of this.rawListeners(e)) if (!before.has(l)) this.localOnly.add(l);
    return out;
  }
  publish(message: LiveMessage) {
    this.emit('live', message);
  }
  publishLogs(batch: TaskLogBatch) {
    if (batch.lines.length) this.emit('logs', batch);
  }
}
