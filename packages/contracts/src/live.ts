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
export type LiveSocketMessage = LiveMessage | LiveRelayMessage | WorkflowRunUpdateMessage;

/** How the server closes every live socket when it shuts down; the console says so rather than "disconnected". */
export const liveShutdownClose = { code: 1001, reason: 'Server shutting down' } as const;
