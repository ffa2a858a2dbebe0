import SQLite from 'better-sqlite3';
import { CompiledQuery, sql, type Transaction } from 'kysely';
import type { Db, Dialect } from '../../db';
import type { Database } from '../../db/tables';
import { toCount } from '../../db/values';
import { remoteActiveStatuses } from '../../runners/server/runners.store';
import { type OutputRow, type StatementLimits, statementChunks, statementLimits } from './output-rows';

/** SQL on task_output: storing batches of lines (the writer) and reading them back in keyset pages. */

export type { OutputRow } from './output-rows';

const statementCache = new Map<string, string>();

function insertSql(dialect: Dialect, rows: number): string {
  const key = `${dialect}:${rows}`;
  let text = statementCache.get(key);
  if (text) return text;
  const q = dialect === 'mysql' ? '`' : '"';
  const values: string[] = [];
  for (let i = 0; i < rows; i++) {
    values.push(dialect === 'postgres' ? `($${i * 3 + 1}, $${i * 3 + 2}, $${i * 3 + 3})` : '(?, ?, ?)');
  }
  text = `insert into ${q}task_output${q} (${q}task_id${q}, ${q}time${q}, ${q}output${q}) values ${values.join(', ')}`;
  statementCache.set(key, text);
  return text;
}

/** Each database's statement limits, read once (MariaDB/MySQL: its max_allowed_packet). */
const limitsOf = new WeakMap<Db, StatementLimits>();

/**
 * The limits insert statements keep to on `db`: on MariaDB/MySQL under the server's max_allowed_packet, read at
 * the first write (a longer statement breaks the connection and its rows are lost).
 */
export async function outputStatementLimits(db: Db, dialect: Dialect): Promise<StatementLimits> {
  let limits = limitsOf.get(db);
  if (limits) return limits;
  let packet: number | undefined;
  if (dialect === 'mysql') {
    const query = sql<{ packet: string | number }>`select @@max_allowed_packet as packet`;
    const { rows } = await query.execute(db);
    packet = Number(rows[0]?.packet);
  }
  limits = statementLimits(packet);
  limitsOf.set(db, limits);
  return limits;
}

/**
 * Stores a batch of lines in one transaction with multi-row inserts of prebuilt SQL (no per-row query
 * compilation).
 */
export async function insertOutput(db: Db, dialect: Dialect, rows: OutputRow[]) {
  if (!rows.length) return;
  const limits = await outputStatementLimits(db, dialect);
  await db.transaction().execute((trx) => insertOutputIn(trx, dialect, rows, limits));
}

/**
 * insertOutput's statements inside a transaction the caller holds, sized by rows and bytes (see statementChunks: a
 * line too long for one statement is cut in place, with a marker).
 */
export async function insertOutputIn(
  trx: Transaction<Database>,
  dialect: Dialect,
  rows: OutputRow[],
  limits: StatementLimits,
) {
  for (const chunk of statementChunks(rows, limits)) {
    const params: unknown[] = new Array(chunk.length * 3);
    chunk.forEach((r, j) => {
      params[j * 3] = r.task_id;
      params[j * 3 + 1] = r.time;
      params[j * 3 + 2] = r.output;
    });
    await trx.executeQuery(CompiledQuery.raw(insertSql(dialect, chunk.length), params));
  }
}

/**
 * A runner's output batches fromSeq…seq (one, or several taken together): stored only when they are the next of a
 * task the runner still runs.
 */
export type RunnerBatch = {
  taskId: number;
  runnerId: number;
  fromSeq: number;
  seq: number;
  rows: OutputRow[];
  /** Also count the lines the task's log held before the batch (in the same transaction). */
  count: boolean;
};

/** Not stored (another batch is the next one, or the task is no longer this runner's), or stored. */
export type RunnerBatchResult = { stored: false } | { stored: true; before: number | null };

/**
 * Stores a runner's batches in the caller's transaction: task.runner_seq moves from fromSeq - 1 to seq first, so
 * that a batch is stored exactly once across resends and reconnects; nothing is stored when it does not.
 */
async function insertRunnerBatchIn(
  trx: Transaction<Database>,
  dialect: Dialect,
  batch: RunnerBatch,
  limits: StatementLimits,
): Promise<RunnerBatchResult> {
  const res = await trx
    .updateTable('task')
    .set({ runner_seq: batch.seq })
    .where('id', '=', batch.taskId)
    .where('remote_runner_id', '=', batch.runnerId)
    .where('runner_seq', '=', batch.fromSeq - 1)
    .where('status', 'in', remoteActiveStatuses)
    .executeTakeFirst();
  if (toCount(res.numUpdatedRows) !== 1) return { stored: false };
  const before = batch.count ? await countOutput(trx, batch.taskId) : null;
  await insertOutputIn(trx, dialect, batch.rows, limits);
  return { stored: true, before };
}

/** Rows per prepared multi-row insert on SQLite (measured: twice the rows/s of single-row inserts). */
const SQLITE_ROWS = 50;

type SqliteConnection = {
  conn: SQLite.Database;
  write: (rows: OutputRow[]) => void;
  writeRunnerBatch: (batch: RunnerBatch) => RunnerBatchResult;
};

/**
 * SQLite: a dedicated connection to the same file with prepared inserts run inside one transaction per batch
 * (WAL and busy_timeout serialise it with the main connection): 50 rows per statement, the rest one by one.
 */
function openSqliteConnection(path: string): SqliteConnection {
  const conn = new SQLite(path);
  conn.pragma('busy_timeout = 5000');
  conn.pragma('synchronous = NORMAL');
  const insert = 'insert into "task_output" ("task_id", "time", "output") values ';
  const one = conn.prepare(`${insert}(?, ?, ?)`);
  const many = conn.prepare(insert + Array(SQLITE_ROWS).fill('(?, ?, ?)').join(', '));
  const advance = conn.prepare(
    `update "task" set "runner_seq" = ? where "id" = ? and "remote_runner_id" = ? and "runner_seq" = ? and "status" in (${remoteActiveStatuses.map(() => '?').join(', ')})`,
  );
  const count = conn.prepare('select count(*) as "n" from "task_output" where "task_id" = ?').pluck();
  const params: unknown[] = new Array(SQLITE_ROWS * 3);
  const insertRows = (rows: OutputRow[]) => {
    const whole = rows.length - (rows.length % SQLITE_ROWS);
    for (let i = 0; i < whole; i += SQLITE_ROWS) {
      for (let j = 0; j < SQLITE_ROWS; j++) {
        const r = rows[i + j] as OutputRow;
        params[j * 3] = r.task_id;
        params[j * 3 + 1] = r.time;
        params[j * 3 + 2] = r.output;
      }
      many.run(params);
    }
    for (let i = whole; i < rows.length; i++) {
      const r = rows[i] as OutputRow;
      one.run(r.task_id, r.time, r.output);
    }
  };
  const write = conn.transaction(insertRows);
  const writeRunnerBatch = conn.transaction((batch: RunnerBatch): RunnerBatchResult => {
    const moved = advance.run(
      batch.seq,
      batch.taskId,
      batch.runnerId,
      batch.fromSeq - 1,
      ...remoteActiveStatuses,
    );
    if (moved.changes !== 1) return { stored: false };
    const before = batch.count ? Number(count.get(batch.taskId)) : null;
    insertRows(batch.rows);
    return { stored: true, before };
  });
  return { conn, write, writeRunnerBatch };
}

/** Stores batches of output lines (one transaction each); owned by one task engine, closed with it. */
export type OutputWriter = {
  write(rows: OutputRow[]): Promise<void>;
  /** Stores a runner's output batch if it is the task's next one (see RunnerBatch), in one transaction. */
  writeRunnerBatch(batch: RunnerBatch): Promise<RunnerBatchResult>;
  /** Releases what the writer holds (SQLite: its own connection); a later write opens it again. */
  close(): void;
};

/**
 * The output writer of one engine: on a SQLite file through a prepared-statement connection of its own (opened at
 * the first write), elsewhere through Kysely with statements sized under the database's limits.
 */
export function createOutputWriter(db: Db, dialect: Dialect, dbUrl: string): OutputWriter {
  const path = dialect === 'sqlite' ? dbUrl.slice('sqlite://'.length) : '';
  const dedicated = path !== '' && path !== ':memory:';
  let sqlite: SqliteConnection | null = null;
  return {
    async write(rows) {
      if (!rows.length) return;
      if (!dedicated) return insertOutput(db, dialect, rows);
      sqlite ??= openSqliteConnection(path);
      sqlite.write(rows);
    },
    async writeRunnerBatch(batch) {
      if (dedicated) {
        sqlite ??= openSqliteConnection(path);
        return sqlite.writeRunnerBatch(batch);
      }
      const limits = await outputStatementLimits(db, dialect);
      return db.transaction().execute((trx) => insertRunnerBatchIn(trx, dialect, batch, limits));
    },
    close() {
      sqlite?.conn.close();
      sqlite = null;
    },
  };
}

/** A stored output line as the API returns it. */
export type OutputLine = { id: number; task_id: number; time: string; output: string };

/**
 * Up to `limit` lines of a task with an id above `afterId`, oldest first: keyset paging on the (task_id, id)
 * index, so a page deep in a log costs what the first one does. Ids are numbers on every database (PostgreSQL
 * returns bigserial values as strings).
 */
export async function outputAfter(
  db: Db,
  taskId: number,
  afterId: number,
  limit: number,
): Promise<OutputLine[]> {
  const rows = await db
    .selectFrom('task_output')
    .select(['id', 'task_id', 'time', 'output'])
    .where('task_id', '=', taskId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
  for (const row of rows) row.id = Number(row.id);
  return rows;
}

/**
 * The id of the `n`-th line (n ≥ 1) of a task after the line `afterId`, or undefined when there are fewer:
 * reads the (task_id, id) index only, never the lines.
 */
export async function outputIdAfter(db: Db, taskId: number, afterId: number, n: number) {
  const row = await db
    .selectFrom('task_output')
    .select('id')
    .where('task_id', '=', taskId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(1)
    .offset(n - 1)
    .executeTakeFirst();
  return row ? Number(row.id) : undefined;
}

/** How many output lines the task has (an index-only count). */
export async function countOutput(db: Db, taskId: number): Promise<number> {
  const row = await db
    .selectFrom('task_output')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('task_id', '=', taskId)
    .executeTakeFirst();
  return toCount(row?.count);
}

/** How many lines of the task have an id above `afterId` and at most `toId` (an index-only count). */
export async function countOutputBetween(db: Db, taskId: number, afterId: number, toId: number) {
  const row = await db
    .selectFrom('task_output')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('task_id', '=', taskId)
    .where('id', '>', afterId)
    .where('id', '<=', toId)
    .executeTakeFirst();
  return toCount(row?.count);
}

/** How many output lines of the task carry a time at or after `time` (ISO text, so it compares in order). */
export async function countOutputSince(db: Db, taskId: number, time: string): Promise<number> {
  const row = await db
    .selectFrom('task_output')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('task_id', '=', taskId)
    .where('time', '>=', time)
    .executeTakeFirst();
  return toCount(row?.count);
}
