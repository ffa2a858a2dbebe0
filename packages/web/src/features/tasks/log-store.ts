import { OUTPUT_PAGE_LINES } from '@signalbox/contracts';
import { ApiError } from '../../api/client';
import { fetchOutputPage } from './api';

/** A small first page shows the first lines at once; then the largest page the server answers. */
export const FIRST_PAGE = 300;
export const PAGE = OUTPUT_PAGE_LINES;

/**
 * Whether a line reports a failure: Ansible's `fatal:`/`failed:`/`ERROR!` and a recap with failed or unreachable
 * hosts, Terraform's `Error:` (also inside its │ box), a Python traceback, or a line starting with error/FAILED.
 */
const errorPattern =
  /^\s*(?:[│|]\s*)?(?:fatal:|failed:|ERROR!|error(?:\[[^\]]*\])?:|\[error\]|FAILED(?:!|\s|$)|Traceback \(most recent call last\))|\b(?:failed|unreachable)=[1-9]/i;

/**
 * A program that could not be started at all (its binary missing or not executable): the server's own
 * `Cannot run <binary>: …`, Node's `spawn <binary> ENOENT`, a shell's `exec: <binary>: not found` or
 * `<binary>: command not found`, bubblewrap's `execvp <binary>: …`.
 */
const execFailurePattern =
  /^Cannot run \S+: |\bspawn \S+ (?:ENOENT|EACCES)\b|\bexec: .+: not found\s*$|: command not found\s*$|\bbwrap: execvp \S+: /;
export const isErrorLine = (text: string) => {
  const plain = stripAnsi(text);
  return errorPattern.test(plain) || execFailurePattern.test(plain);
};

/**
 * A task's log lines, each at its position in the log (the `line` number the server gives every line, in the stored
 * pages and in the live socket's `log` messages alike): the stored lines are read by offset page by page, and a live
 * line is kept only at the position after the last one held. A live line already held is dropped; one past a gap
 * (missed while the socket was down, or still on its way in a page) waits until the gap is read. So the count and
 * the lines are always those of the stored log, whatever the timing of pages and messages.
 */
export class LogStore {
  /** The lines held, line n at index n - 1, without gaps. */
  readonly lines: string[] = [];
  /** When each held line was written (ISO 8601). */
  readonly times: string[] = [];
  /** Indices of the held lines that report a failure, ascending. */
  readonly errors: number[] = [];
  private errorSet = new Set<number>();
  /** Live lines past a gap, by line number, until the gap is filled. */
  private ahead = new Map<number, { output: string; time: string }>();
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
    return this.lines.length;
  }

  line(index: number): string {
    return this.lines[index] ?? '';
  }

  time(index: number): string {
    return this.times[index] ?? '';
  }

  /** Whether the line at `index` reports a failure. */
  isError(index: number) {
    return this.errorSet.has(index);
  }

  /** The index of the first line that reports a failure, -1 without one. */
  get firstError() {
    return this.errors[0] ?? -1;
  }

  /** Reads again after a close (a view mounted anew, as React's StrictMode does with every effect). */
  open() {
    this.stopped = false;
  }

  close() {
    this.stopped = true;
  }

  private push(output: string, time: string) {
    if (isErrorLine(output)) {
      this.errors.push(this.lines.length);
      this.errorSet.add(this.lines.length);
    }
    this.lines.push(output);
    this.times.push(time);
  }

  /** Takes the waiting live lines that now follow the held ones. */
  private drainAhead() {
    if (!this.ahead.size) return;
    for (
      let next = this.ahead.get(this.lines.length + 1);
      next;
      next = this.ahead.get(this.lines.length + 1)
    ) {
      this.ahead.delete(this.lines.length + 1);
      this.push(next.output, next.time);
    }
    for (const n of this.ahead.keys()) if (n <= this.lines.length) this.ahead.delete(n);
  }

  /**
   * A line from the socket, at position `line` of the log (stored before it was sent). Without a position (an
   * older server) the stored pages are read again instead.
   */
  addLive(line: number | undefined, output: string, time: string) {
    this.addLiveLines(line, [output], [time]);
  }

  /**
   * Consecutive lines from the socket (one `logs` message), the first at position `first`: as addLive for each,
   * telling the view once. A gap before them (lines the server did not send while the console was behind) is read
   * as a page; without a position the stored pages are read again.
   */
  addLiveLines(first: number | undefined, outputs: readonly string[], times: readonly string[]) {
    if (first === undefined || !Number.isInteger(first)) {
      void this.sync();
      return;
    }
    let added = false;
    let gap = false;
    outputs.forEach((output, i) => {
      const line = first + i;
      const time = times[i] ?? '';
      if (line === this.lines.length + 1) {
        this.push(output, time);
        added = true;
      } else if (line > this.lines.length) {
        this.ahead.set(line, { output, time });
        gap = true;
      }
    });
    if (added) {
      this.drainAhead();
      this.onChange();
    }
    if (gap) void this.sync();
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
          const offset = this.lines.length;
          const limit = offset === 0 ? FIRST_PAGE : PAGE;
          const { rows, more } = await fetchOutputPage(this.projectId, this.taskId, offset, limit);
          if (this.stopped) return;
          let added = 0;
          rows.forEach((row, i) => {
            // Live lines may have arrived while the page was on its way: only the next position is taken.
            if ((row.line ?? offset + i + 1) !== this.lines.length + 1) return;
            this.push(row.output ?? '', row.time ?? '');
            added++;
          });
          this.drainAhead();
          this.error = null;
          if (added > 0) this.onChange();
          // (A page none of whose lines fits would be asked for again and again.)
          if (!more || (added === 0 && offset === this.lines.length)) break;
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
