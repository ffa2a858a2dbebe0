import { finishedStatuses, type TaskStatus } from '@signalbox/contracts';
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
