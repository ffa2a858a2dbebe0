import { isFinished, type TaskOutputLine, type TaskWithTemplate } from '@signalbox/contracts';
import type { Api } from './api';
import { getTask } from './resolve';

/**
 * Following a task until it ends: its log is read from GET tasks/{id}/output page by page (the `after` cursor of
 * the last line read), so what is printed is exactly the stored log, each line once and in order. The live socket
 * the console uses (/api/ws) only rings a bell when the task writes or changes, so lines show at once; without the
 * socket (a proxy that refuses it) the output is polled every second, and every few seconds in any case.
 */

/** How long the bell may stay silent before the task is asked anyway. */
const QUIET_POLL_MS = 5000;
/** The poll when no socket rings. */
const POLL_MS = 1000;
/** Least time between two reads, so a chatty task's rings are read in batches. */
const MIN_READ_GAP_MS = 100;

export type FollowEvents = {
  /** Each stored line of the log, in order (only when the log is followed). */
  line?: (line: TaskOutputLine) => void;
  /** The task after each read (its status may have changed). */
  task: (task: TaskWithTemplate) => void;
};

type Bell = { wait(ms: number): Promise<void>; close(): void; ringing: boolean };

/** The live socket as a bell for one task: `wait` returns when the task writes or changes, or after `ms`. */
async function openBell(api: Api, projectId: number, taskId: number): Promise<Bell> {
  let wake: (() => void) | null = null;
  let rung = false;
  const bell: Bell = {
    ringing: false,
    wait: (ms) =>
      new Promise((resolve) => {
        if (rung) {
          rung = false;
          resolve();
          return;
        }
        const timer = setTimeout(
          () => {
            wake = null;
            resolve();
          },
          bell.ringing ? ms : Math.min(ms, POLL_MS),
        );
        wake = () => {
          clearTimeout(timer);
          wake = null;
          resolve();
        };
      }),
    close: () => {},
  };
  const ring = () => {
    if (wake) wake();
    else rung = true;
  };
  try {
    const { default: WebSocket } = await import('ws');
    const socket = new WebSocket(`${api.url.replace(/^http/, 'ws')}/api/ws`, {
      headers: { authorization: `Bearer ${api.credentials.token}` },
      followRedirects: false,
      handshakeTimeout: 10_000,
    });
    socket.on('open', () => {
      bell.ringing = true;
      // Whatever happened while the socket opened is read once more.
      ring();
    });
    socket.on('message', (data) => {
      const text = String(data);
      // Only this task's messages ring (the socket carries every task the token may see).
      if (!text.includes(`"task_id":${taskId}`)) return;
      try {
        const message = JSON.parse(text) as { task_id?: unknown; project_id?: unknown };
        if (message.task_id === taskId && message.project_id === projectId) ring();
      } catch {}
    });
    const lost = () => {
      bell.ringing = false;
      ring();
    };
    socket.on('close', lost);
    socket.on('error', lost);
    bell.close = () => {
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.terminate();
    };
  } catch {
    // No socket: the bell never rings and `wait` polls.
  }
  return bell;
}

/** Reads the lines after `after` (every page of them); answers the id of the last line read. */
async function readLines(
  api: Api,
  projectId: number,
  taskId: number,
  after: number | undefined,
  line: (line: TaskOutputLine) => void,
): Promise<number | undefined> {
  let last = after;
  for (;;) {
    const query = last === undefined ? '' : `?after=${last}`;
    const page = await api.request<TaskOutputLine[]>(
      'GET',
      `/project/${projectId}/tasks/${taskId}/output${query}`,
    );
    for (const row of page.body) {
      line(row);
      last = row.id;
    }
    if (!page.link || page.body.length === 0) return last;
  }
}

/**
 * Follows the task until it ends; answers it as it ended. With `events.line`, every line of its log is handed
 * over from the first, and the lines written after it ended too.
 */
export async function followTask(
  api: Api,
  projectId: number,
  taskId: number,
  events: FollowEvents,
): Promise<TaskWithTemplate> {
  const bell = await openBell(api, projectId, taskId);
  let after: number | undefined;
  try {
    for (;;) {
      const began = Date.now();
      if (events.line) after = await readLines(api, projectId, taskId, after, events.line);
      const task = await getTask(api, projectId, taskId);
      if (isFinished(task.status)) {
        // Lines stored between the read above and the end, before the end is told.
        if (events.line) await readLines(api, projectId, taskId, after, events.line);
        events.task(task);
        return task;
      }
      events.task(task);
      await bell.wait(QUIET_POLL_MS);
      const gap = MIN_READ_GAP_MS - (Date.now() - began);
      if (gap > 0) await new Promise((r) => setTimeout(r, gap));
    }
  } finally {
    bell.close();
  }
}

/** The exit code of a finished task: 0 success, 2 stopped, 1 anything else (failed, error, rejected). */
export const exitCodeOf = (status: string) => (status === 'success' ? 0 : status === 'stopped' ? 2 : 1);
