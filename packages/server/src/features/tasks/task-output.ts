import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Db } from '../../db';
import {
  countOutputBetween,
  type OutputLine,
  outputAfter,
  outputIdAfter,
} from '../../tasks/output/output.store';

/*
 * Reading a task log never holds the event loop for long, whatever its size. better-sqlite3 runs every query
 * synchronously, so what bounds a stall on SQLite is how much one query reads: lines are read in batches of
 * about BATCH_CHARS characters (at most MAX_BATCH_ROWS lines; the first batch is small because line lengths
 * are not known yet, and a line can be up to 1 MiB), and the reader yields to the event loop between batches.
 * Measured on SQLite (2-core machine, 1,000,000-line log): 1,000 lines of 60 characters ≈ 1.4 ms; OFFSET 900,000
 * in one query ≈ 40 ms, in index-only steps of 50,000 ≈ 1 ms each. Each batch of a page is serialised as it
 * arrives, so no JSON.stringify of a whole page either.
 */
const BATCH_CHARS = 128 * 1024;
const FIRST_BATCH_ROWS = 16;
const MAX_BATCH_ROWS = 500;
/** Lines an `offset` skips per index-only query. */
const SKIP_ROWS = 50_000;
/** A page ends at the line that brings its output to this many characters: pages of long lines are shorter. */
export const PAGE_CHARS = 2 * 1024 * 1024;

/**
 * A task's lines after the line `afterId`, oldest first, in batches, `maxRows` lines at most in all. Ends at the
 * end of the log as it is when the last batch is read.
 */
export async function* outputBatches(
  db: Db,
  taskId: number,
  afterId: number,
  maxRows = Number.POSITIVE_INFINITY,
): AsyncGenerator<OutputLine[]> {
  let size = FIRST_BATCH_ROWS;
  let left = maxRows;
  for (;;) {
    const want = Math.min(size, left);
    const rows = await outputAfter(db, taskId, afterId, want);
    if (rows.length) yield rows;
    left -= rows.length;
    const last = rows.at(-1);
    if (!last || rows.length < want || left <= 0) return;
    afterId = last.id;
    let chars = 0;
    for (const row of rows) chars += row.output.length;
    size = Math.max(
      1,
      Math.min(MAX_BATCH_ROWS, Math.floor((BATCH_CHARS * rows.length) / Math.max(1, chars))),
    );
    await nextTurn();
  }
}

/**
 * Where the skips of deep reads landed, by database and task: `marks[k]` is the id of line (k + 1) · `skip`
 * (1-based), so a deep page starts from the nearest mark below its offset and skips fewer than `skip` lines. A line
 * keeps its place once stored (a log is only appended to, and deleted with its task), so marks stay true while the
 * log's first line is the same one; that is checked on every use (a deleted task's id can come back on MariaDB).
 * Only the most recently read MARKED_LOGS logs are kept.
 */
type LineMarks = { first: number; skip: number; marks: number[] };
const lineMarks = new WeakMap<Db, Map<number, LineMarks>>();
const MARKED_LOGS = 1000;

/** The marks of a log (none before its first deep read), or undefined when the log has no line yet. */
async function marksOf(db: Db, taskId: number, skip: number): Promise<number[] | undefined> {
  const first = await outputIdAfter(db, taskId, 0, 1);
  if (first === undefined) return undefined;
  const logs = lineMarks.get(db) ?? new Map<number, LineMarks>();
  lineMarks.set(db, logs);
  const known = logs.get(taskId);
  const marks = known?.first === first && known.skip === skip ? known.marks : [];
  logs.delete(taskId);
  logs.set(taskId, { first, skip, marks });
  if (logs.size > MARKED_LOGS) logs.delete(logs.keys().next().value as number);
  return marks;
}

/**
 * The id of the line before the `offset`-th (0-based) line, or undefined when the log is not that long: skips
 * `skip` lines per index-only query, from the nearest mark an earlier read left.
 */
export async function idBeforeLine(
  db: Db,
  taskId: number,
  offset: number,
  skip = SKIP_ROWS,
): Promise<number | undefined> {
  // Less than one skip deep there is no mark to start from, nor one to leave.
  const marks = offset < skip ? [] : await marksOf(db, taskId, skip);
  if (!marks) return undefined;
  const from = Math.min(marks.length, Math.floor(offset / skip));
  let after = from > 0 ? (marks[from - 1] as number) : 0;
  for (let left = offset - from * skip; left > 0; ) {
    const step = Math.min(left, skip);
    const id = await outputIdAfter(db, taskId, after, step);
    if (id === undefined) return undefined;
    // A whole step from the last mark lands on the next one.
    if (step === skip && after === (marks.at(-1) ?? 0)) marks.push(id);
    after = id;
    left -= step;
    if (left > 0) await nextTurn();
  }
  return after;
}

/**
 * The 1-based position in the log of the line `id` (0 for id 0): counts from the nearest mark below it, first
 * leaving marks every `skip` lines up to it, so a next-page read deep in a log counts fewer than `skip` lines.
 */
export async function lineOfId(db: Db, taskId: number, id: number, skip = SKIP_ROWS): Promise<number> {
  if (id <= 0) return 0;
  const marks = await marksOf(db, taskId, skip);
  if (!marks) return 0;
  let below = marks.findLastIndex((mark) => mark <= id) + 1;
  while (below === marks.length) {
    const next = await outputIdAfter(db, taskId, marks.at(-1) ?? 0, skip);
    if (next === undefined || next > id) break;
    marks.push(next);
    below++;
    await nextTurn();
  }
  const from = below > 0 ? (marks[below - 1] as number) : 0;
  return below * skip + (await countOutputBetween(db, taskId, from, id));
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

export type OutputPage = {
  /** The page as a JSON array of {id, task_id, time, output, task, line} (UTF-8). */
  json: Buffer;
  /** The id of the page's last line (the cursor for the next page). */
  lastId: number | undefined;
  /** True when lines follow the page (at the time of reading). */
  more: boolean;
};

/**
 * One page of a task's log: at most `limit` lines starting at line `offset` or after the line `after`, ending
 * early at PAGE_CHARS characters of output. Serialised batch by batch, so no single step is large.
 */
export async function readOutputPage(
  db: Db,
  taskId: number,
  from: { offset?: number; after?: number },
  limit: number,
): Promise<OutputPage> {
  const start = from.after ?? (from.offset ? await idBeforeLine(db, taskId, from.offset) : 0);
  if (start === undefined) return { json: Buffer.from('[]'), lastId: undefined, more: false };
  // Each line's position in the log: the API's `line`, the number the live socket gives the same line.
  let line = from.after !== undefined ? await lineOfId(db, taskId, from.after) : (from.offset ?? 0);
  // Each batch is kept as UTF-8 bytes, outside the JavaScript heap: a page is built over many turns of the event
  // loop, and strings held that long would be promoted and collected by the slower major garbage collections.
  const parts: Buffer[] = [OPEN];
  let count = 0;
  let chars = 0;
  let lastId: number | undefined;
  let full = false;
  for await (const batch of outputBatches(db, taskId, start, limit)) {
    let take = batch.length;
    for (const [i, row] of batch.entries()) {
      chars += row.output.length;
      if (chars >= PAGE_CHARS) {
        take = i + 1;
        full = true;
        break;
      }
    }
    const rows: (OutputLine & { task?: ''; line?: number })[] =
      take === batch.length ? batch : batch.slice(0, take);
    for (const row of rows) {
      // Semaphore's output rows carry an (always empty) `task` field; its clients may read it.
      row.task = '';
      row.line = ++line;
    }
    if (count > 0) parts.push(COMMA);
    const json = Buffer.from(JSON.stringify(rows));
    parts.push(json.subarray(1, json.length - 1));
    count += rows.length;
    lastId = rows.at(-1)?.id ?? lastId;
    if (full) break;
  }
  const more =
    lastId !== undefined &&
    (full || count === limit) &&
    (await outputIdAfter(db, taskId, lastId, 1)) !== undefined;
  parts.push(CLOSE);
  return { json: Buffer.concat(parts), lastId, more };
}
