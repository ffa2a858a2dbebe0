import { z } from 'zod';

/** The messages the live socket (/api/ws) sends: one JSON object per WebSocket message. */

/** A task changed (queued, started, finished, …): its status, times and version. */
export type TaskUpdateMessage = {
  type: 'update';
  project_id: number;
  template_id: number;
  task_id: number;
  status: string;
  start: string | null;
  end: string | null;
  version: string | null;
  [field: string]: unknown;
};

/** One line of a task's output. */
export type TaskLogMessage = {
  type: 'log';
  project_id: number;
  task_id: number;
  output: string;
  time: string;
  /**
   * The line's 1-based position in the task's log, the same number GET tasks/{id}/output gives it (`line`): a
   * client merging live lines with stored pages keeps each position once and fetches the ones it missed.
   */
  line: number;
};

/**
 * Consecutive output lines of a task in one message: sent in place of separate `log` messages to a socket opened
 * with `?logs=batches` (the console). `outputs[i]` is line `line + i` of the log; the first `counts[0]` of them were
 * written at `times[0]`, the next `counts[1]` at `times[1]`, and so on. Such a socket that falls behind (its unsent
 * messages pile up) is sent no lines until it has caught up, and reads the positions it missed as a page, as after a
 * reconnect.
 */
export type TaskLogBatchMessage = {
  type: 'logs';
  project_id: number;
  task_id: number;
  /** The first line's position in the log; absent when the server cannot tell (the client reads the log instead). */
  line?: number;
  outputs: string[];
  times: string[];
  counts: number[];
};

/** Each line's time in a `logs` message (its runs of times spelled out). */
export function batchLineTimes(message: Pick<TaskLogBatchMessage, 'times' | 'counts'>): string[] {
  const out: string[] = [];
  message.times.forEach((time, i) => {
    for (let n = message.counts[i] ?? 0; n > 0; n--) out.push(time);
  });
  return out;
}

/** The value of /api/ws's `logs` query parameter that asks for `logs` batches in place of `log` messages. */
export const LIVE_LOG_BATCHES = 'batches';

/** /api/ws's query: `logs` is `lines` (the default: a `log` message per line) or `batches`. */
export const liveSocketQuery = z.object({ logs: z.enum(['lines', LIVE_LOG_BATCHES]).optional() });

/**
 * A workflow run changed (started, a node moved on, an approval was given, it ended): a client re-reads the run
 * (GET workflow-runs/{run_id}) and the approvals inbox.
 */
export type WorkflowRunUpdateMessage = {
  type: 'workflow_run';
  project_id: number;
  workflow_id: number;
  run_id: number;
  status: string;
};

export type LiveMessage = TaskUpdateMessage | TaskLogMessage;

/**
 * The server's link to the other server instances (Redis) is down (`connected` false) or back: while it is down,
 * tasks run by other instances do not update on this socket. Sent when a socket opens during an outage, and at
 * every change.
 */
export type LiveRelayMessage = { type: 'relay'; connected: boolean };

/** Every message the live socket sends. */
export type LiveSocketMessage =
  | LiveMessage
  | TaskLogBatchMessage
  | LiveRelayMessage
  | WorkflowRunUpdateMessage;

/** How the server closes every live socket when it shuts down; the console says so rather than "disconnected". */
export const liveShutdownClose = { code: 1001, reason: 'Server shutting down' } as const;
