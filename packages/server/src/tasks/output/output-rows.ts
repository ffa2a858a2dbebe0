/**
 * How output rows are grouped into insert statements: by row count and by bytes, so that no statement outgrows
 * what the database takes in one packet (MariaDB/MySQL's max_allowed_packet: a longer statement breaks the
 * connection and its rows are never stored).
 */

export type OutputRow = { task_id: number; time: string; output: string };

/** Most rows one multi-row insert carries. */
export const ROWS_PER_STATEMENT = 500;
/** Bytes of rows one insert statement carries at most (bounded memory per statement on every database). */
export const STATEMENT_BYTES = 4 * 1024 * 1024;
/** What a row takes in a statement besides its line: the task id, the time, quotes and separators. */
const ROW_OVERHEAD = 100;
/** Room left in a packet for the statement's own text (`insert into … values`) and the protocol's header. */
const PACKET_HEADROOM = 16 * 1024;

/** Bytes per statement and per row a database takes; Infinity where it sets no limit of its own. */
export type StatementLimits = { statementBytes: number; rowBytes: number };

/** The limits under a MariaDB/MySQL max_allowed_packet (or none: PostgreSQL, SQLite). */
export function statementLimits(maxPacket?: number): StatementLimits {
  if (maxPacket === undefined || !Number.isFinite(maxPacket) || maxPacket <= 0)
    return { statementBytes: STATEMENT_BYTES, rowBytes: Number.POSITIVE_INFINITY };
  const room = Math.max(maxPacket - PACKET_HEADROOM, 1024);
  return { statementBytes: Math.min(STATEMENT_BYTES, room), rowBytes: room };
}

/**
 * At most the bytes a row takes in a statement: UTF-8 needs at most 3 bytes per UTF-16 unit of the line, and
 * MariaDB's escaping at most 2 per ASCII character. An upper bound costs nothing to compute, whatever the length.
 */
export const rowBytes = (row: OutputRow) => row.output.length * 3 + ROW_OVERHEAD;

/** Said at the end of a line too long for one statement, in place of what was cut. */
export const cutMarker = (cut: number) =>
  ` [line cut: ${cut} more characters do not fit in one statement of the database (max_allowed_packet)]`;

/** The line cut to fit `limit` bytes, with a marker naming how much is missing; never half a surrogate pair. */
function cutToFit(output: string, limit: number): string {
  let keep = Math.floor((limit - ROW_OVERHEAD) / 3) - 200;
  if (keep < 0) keep = 0;
  const code = output.charCodeAt(keep - 1);
  if (keep > 0 && code >= 0xd800 && code <= 0xdbff) keep--;
  return output.slice(0, keep) + cutMarker(output.length - keep);
}

/**
 * Groups rows into the multi-row inserts that store them, in order: at most ROWS_PER_STATEMENT rows and
 * `limits.statementBytes` bytes each (a larger row goes alone). A row that would not fit in `limits.rowBytes`
 * even alone is cut to fit with a marker saying so — in place, so that the caller publishes what was stored.
 */
export function statementChunks(rows: OutputRow[], limits: StatementLimits): OutputRow[][] {
  const chunks: OutputRow[][] = [];
  let chunk: OutputRow[] = [];
  let bytes = 0;
  for (const row of rows) {
    let size = rowBytes(row);
    if (size > limits.rowBytes) {
      row.output = cutToFit(row.output, limits.rowBytes);
      size = rowBytes(row);
    }
    if (chunk.length && (chunk.length >= ROWS_PER_STATEMENT || bytes + size > limits.statementBytes)) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(row);
    bytes += size;
  }
  if (chunk.length) chunks.push(chunk);
  return chunks;
}
