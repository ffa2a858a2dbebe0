import { finishedStatuses, type TaskStatus } from '@signalbox/contracts';
import { ReadsInFlight } from '../../lib/reads-in-flight';
import type { OutputPage } from './task-output';

/** The bytes of pages kept at most; the least recently read go first. */
const MAX_BYTES = 64 * 1024 * 1024;

/**
 * What identifies one page of one finished log: the task, with its final status and end (SQLite may reuse a deleted
 * task's id, and a plan a person rejects passes through the final `rejected` on its way to `error`).
 */
export type FinishedPageKey = {
  taskId: number;
  status: string;
  end: string;
  offset: number | undefined;
  after: number | undefined;
  limit: number;
};

/**
 * Pages of finished tasks' logs, which never change (a finished task stores no more lines; a deleted one is
 * answered 404 before its pages are looked up): kept in memory, bounded by bytes, so readers of a finished log —
 * a page left open, a link shared in a chat — cost no database reads and no serialisation. Each page is named by an
 * ETag too, which browsers send back to revalidate it for free (304).
 */
export class FinishedPages {
  private readonly pages = new Map<string, OutputPage>();
  private bytes = 0;

  constructor(private readonly maxBytes = MAX_BYTES) {}

  /** The key of a page of `task`, or null while the task may still write lines. */
  static keyOf(
    task: { id: number; status: string; end: string | null },
    q: { offset?: number; after?: number; limit: number },
  ): FinishedPageKey | null {
    if (!task.end || !finishedStatuses.includes(task.status as TaskStatus)) return null;
    return {
      taskId: task.id,
      status: task.status,
      end: task.end,
      offset: q.offset,
      after: q.after,
      limit: q.limit,
    };
  }

  /** A strong validator of the page: the same key always answers the same bytes. */
  static etag(key: FinishedPageKey): string {
    const from = key.after !== undefined ? `a${key.after}` : `o${key.offset ?? 0}`;
    return `"log-${key.taskId}-${key.status}-${Date.parse(key.end)}-${from}-${key.limit}"`;
  }

  /** Whether an If-None-Match header names the page's ETag (or `*`). */
  static matches(header: string | undefined, etag: string): boolean {
    if (!header) return false;
    return header.split(',').some((tag) => {
      const t = tag.trim();
      return t === '*' || t === etag || t === `W/${etag}`;
    });
  }

  async get(key: FinishedPageKey, read: () => Promise<OutputPage>): Promise<OutputPage> {
    const name = FinishedPages.etag(key);
    const kept = this.pages.get(name);
    if (kept) {
      // Read again: now the most recent.
      this.pages.delete(name);
      this.pages.set(name, kept);
      return kept;
    }
    const page = await read();
    if (page.json.length > this.maxBytes / 4) return page;
    this.pages.set(name, page);
    this.bytes += page.json.length;
    for (const [oldest, old] of this.pages) {
      if (this.bytes <= this.maxBytes) break;
      this.pages.delete(oldest);
      this.bytes -= old.json.length;
    }
    return page;
  }
}

/** What reading a task's log needs to know of the task: whether it is finished, and since when. */
export type LogState = { id: number; status: string; end: string | null };

/** The longest a finished task's remembered state is used when no event announced a change. */
export const RECENT_LOG_STATE_MS = 1000;
const MAX_LOG_STATES = 2000;

/**
 * The states of finished tasks whose log was just read, remembered up to RECENT_LOG_STATE_MS, so a reader paging
 * through a finished log (or many readers of one) costs no database read per page. A finished task changes only by
 * being deleted (a write through the API or a retention pass: both announce a change of the project) or, for a plan
 * a person rejects, by one more status update (announced too); each of these forgets what it may have changed, and
 * what no event announces (another instance without Redis) holds for at most RECENT_LOG_STATE_MS.
 */
export class RecentLogStates {
  private readonly states = new Map<string, { state: LogState; at: number }>();
  private readonly reading = new ReadsInFlight<string, LogState>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /**
   * The remembered state, or `read()`'s answer (remembered when finished). The readers that ask while one read
   * runs share it — when the memory lapses under 50 readers of a log, one read, not 50 — unless a forget came
   * between: then a reader waits for a read of its own.
   */
  through(projectId: number, taskId: number, read: () => Promise<LogState | undefined>) {
    const kept = this.get(projectId, taskId);
    if (kept) return Promise.resolve(kept);
    const settled = (found: LogState, current: boolean) => {
      const frozen = Object.freeze({ ...found });
      if (current) this.remember(projectId, frozen);
      return frozen;
    };
    return this.reading.get(`${projectId} ${taskId}`, read, settled);
  }

  get(projectId: number, taskId: number): LogState | undefined {
    const key = `${projectId} ${taskId}`;
    const kept = this.states.get(key);
    if (!kept) return undefined;
    const age = this.now() - kept.at;
    if (age >= 0 && age < RECENT_LOG_STATE_MS) return kept.state;
    this.states.delete(key);
    return undefined;
  }

  /** Remembers the state of a finished task; one that may still write lines is always read again. */
  remember(projectId: number, state: LogState) {
    if (!state.end || !finishedStatuses.includes(state.status as TaskStatus)) return;
    const key = `${projectId} ${state.id}`;
    this.states.delete(key);
    this.states.set(key, { state: Object.freeze({ ...state }), at: this.now() });
    if (this.states.size > MAX_LOG_STATES) this.states.delete(this.states.keys().next().value as string);
  }

  /** Forgets the states of a project's tasks (every project's for null). */
  forgetProject(projectId: number | null) {
    this.reading.forget();
    if (projectId === null) return this.states.clear();
    const prefix = `${projectId} `;
    for (const key of this.states.keys()) if (key.startsWith(prefix)) this.states.delete(key);
  }

  forgetTask(projectId: number, taskId: number) {
    this.reading.forget();
    this.states.delete(`${projectId} ${taskId}`);
  }
}
