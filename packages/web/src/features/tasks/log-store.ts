import { OUTPUT_PAGE_LINES } from '@signalbox/contracts';
import { ApiError } from '../../api/client';
import { fetchOutputPage } from './api';

/** A small first page shows the first lines at once; then the largest page the server answers. */
export const FIRST_PAGE = 300;
export const PAGE = OUTPUT_PAGE_LINES;

/**
 * A task's log lines: the stored lines (read from `output?after=` page by page, on while the server links a next
 * page) followed by live lines that arrived over the socket and are not stored yet. Each stored line read later
 * removes its live twin, so a resync after a reconnect neither loses nor repeats lines.
 */
export class LogStore {
  readonly stored: string[] = [];
  /** The id of the last stored line read: the next page starts after it. */
  private lastId = 0;
  private live: string[] = [];
  private syncing = false;
  private again = false;
  private stopped = false;
  loaded = false;
  error: unknown = null;

  constructor(
    private readonly projectId: number,
    private readonly taskId: number,
    private readonly onChange: () => void,
  ) {}

  get count() {
    return this.stored.length + this.live.length;
  }

  line(index: number): string {
    return index < this.stored.length ? this.stored[index] : (this.live[index - this.stored.length] ?? '');
  }

  close() {
    this.stopped = true;
  }

  addLive(output: string) {
    this.live.push(output);
    this.onChange();
  }

  /** Reads every stored line after the ones already held. Safe to call at any time; calls coalesce. */
  async sync(): Promise<void> {
    if (this.syncing) {
      this.again = true;
      return;
    }
    this.syncing = true;
    try {
      do {
        this.again = false;
        for (;;) {
          if (this.stopped) return;
          const limit = this.stored.length === 0 ? FIRST_PAGE : PAGE;
          const { rows, more } = await fetchOutputPage(this.projectId, this.taskId, this.lastId, limit);
          if (this.stopped) return;
          for (const row of rows) {
            const text = row.output ?? '';
            this.stored.push(text);
            if (this.live.length > 0 && this.live[0] === text) this.live.shift();
          }
          this.lastId = rows.at(-1)?.id ?? this.lastId;
          this.error = null;
          if (rows.length > 0) this.onChange();
          if (!more) break;
        }
      } while (this.again);
      this.loaded = true;
      this.onChange();
    } catch (err) {
      this.error = err instanceof ApiError ? err : new Error(String(err));
      this.loaded = true;
      this.onChange();
    } finally {
      this.syncing = false;
    }
  }
}

const ESC = String.fromCharCode(27);
const ansiPattern = new RegExp(`${ESC}\\[[0-9;?]*[ -/]*[@-~]`, 'g');
export const stripAnsi = (text: string) => (text.includes(ESC) ? text.replace(ansiPattern, '') : text);

/** Indices of the lines containing `query` (case-insensitive, ANSI codes ignored). */
export function findMatches(store: { count: number; line(i: number): string }, query: string): number[] {
  const q = query.toLowerCase();
  if (!q) return [];
  const found: number[] = [];
  for (let i = 0; i < store.count; i++) {
    if (stripAnsi(store.line(i)).toLowerCase().includes(q)) found.push(i);
  }
  return found;
}
