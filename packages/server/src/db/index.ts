import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import type { FastifyBaseLogger } from 'fastify';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import {
  Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  MysqlDialect,
  PostgresDialect,
  type SqliteDatabase,
  SqliteDialect,
  sql,
} from 'kysely';
import { pino } from 'pino';
import { stoppableRead } from './client-gone';
import { type Dialect, dialectOf } from './dialect';
import { initial } from './migrations/0001-initial';
import { scheduler } from './migrations/0002-scheduler';
import { retention } from './migrations/0003-retention';
import { taskRunners } from './migrations/0004-task-runners';
import { webhookDeliveries } from './migrations/0005-webhook-deliveries';
import { tokenExpiry } from './migrations/0006-token-expiry';
import { runnerOwner } from './migrations/0007-runner-owner';
import { signInThrottle } from './migrations/0008-sign-in-throttle';
import { projectInvites } from './migrations/0009-project-invites';
import { totp } from './migrations/0010-totp';
import { runOnceAndKeySources } from './migrations/0011-run-once-and-key-sources';
import { eventFilters } from './migrations/0012-event-filters';
import { remoteRunners } from './migrations/0013-remote-runners';
import { eventKinds } from './migrations/0014-event-kinds';
import { templateVaults } from './migrations/0015-template-vaults';
import { emailInvites } from './migrations/0016-email-invites';
import { runnerReports } from './migrations/0017-runner-reports';
import { scheduleTaskParams } from './migrations/0018-schedule-task-params';
import { optionListsAndTaskOutputs } from './migrations/0019-option-lists-and-task-outputs';
import { tokenScopes } from './migrations/0020-token-scopes';
import { taskPlans } from './migrations/0021-task-plans';
import { agentApproval } from './migrations/0022-agent-approval';
import { workflows } from './migrations/0023-workflows';
import { planFilesAndDrift } from './migrations/0025-plan-files-and-drift';
import { terraformStates } from './migrations/0026-terraform-states';
import { templateTaskCounters } from './migrations/0027-template-task-counters';
import { taskEnvironmentOverride } from './migrations/0028-task-environment-override';
import { rowRevisions } from './migrations/0029-row-revisions';
import { projectTemplateRevisions } from './migrations/0030-project-template-revisions';
import { taskListRevisions } from './migrations/0031-task-list-revisions';
import { PreparedOnConnection, preparedName } from './prepared';
import { retryReads } from './read-retry';
import type { Database } from './tables';
import { describeDbError, isConnectionLoss } from './unavailable';

export type { Dialect } from './dialect';
export type { Database } from './tables';
export type Db = Kysely<Database>;

export type DbHandle = { db: Db; dialect: Dialect; destroy: () => Promise<void> };

/** Connections per PostgreSQL/MariaDB pool. */
const POOL_SIZE = 10;

/**
 * Settings of each PostgreSQL session the server opens, for the short indexed reads and writes it makes. No
 * parallel workers: PostgreSQL plans one for a scan of a table a burst of updates left large (the template table
 * after a million tasks, whose counters each task updates) even when few live rows remain, and starting the worker
 * took 25-50 ms on a 2-core machine where the statement itself takes 3 ms (a cold templates list took 57 ms). No
 * JIT compilation: it starts above a plan cost (an offset page deep in a long task list reaches it) and costs tens of
 * milliseconds of compiling for a statement that runs in a few. Set with `set_config` for the settings the server
 * has, so a version without one (JIT came in PostgreSQL 11) is not an error, and per session rather than as startup
 * options, which connection poolers such as PgBouncer refuse.
 */
const POSTGRES_SESSION_SETTINGS = `select set_config(name, case name when 'jit' then 'off' else '0' end, false)
  from pg_settings where name in ('max_parallel_workers_per_gather', 'jit')`;

/** Where the pools report lost connections; the app passes its logger (a warning-level pino logger otherwise). */
export type DbLog = Pick<FastifyBaseLogger, 'warn'>;
let fallbackLog: DbLog | null = null;
function defaultLog(): DbLog {
  fallbackLog ??= pino({ level: 'warn' });
  return fallbackLog;
}

/** Reports each lost connection once, in one line: an outage ends every pooled connection at the same time. */
function lostConnectionWarning(log: DbLog) {
  const reported = new WeakSet<object>();
  return (connection: object, err: unknown) => {
    if (reported.has(connection)) return;
    reported.add(connection);
    log.warn(
      { reason: describeDbError(err) },
      'database connection lost; the pool opens a new one when needed',
    );
  };
}

/**
 * A PostgreSQL pool that survives the server ending connections (a restart, a failover, an administrator ending
 * sessions). node-postgres reports a dropped connection as an 'error' event on its client, which ends the process
 * when nothing listens, and pg-pool listens only while a client is idle: every client gets a listener of its own
 * for its whole life, so one a query or transaction holds is covered too. A client whose connection dropped is
 * never handed out again: pg-pool drops a released client that is no longer queryable (node-postgres marks it so
 * before the 'error' event), and a client on which a query failed because the connection was lost goes back with
 * that error, which makes pg-pool close it (the server's "terminating connection" message can arrive before the
 * socket closes, while the client still looks queryable).
 */
async function postgresPool(url: string, log: DbLog, prepared: boolean): Promise<PostgresPool> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    // Each new connection takes the server's session settings before its first statement; one that cannot is
    // ended and its error answered to the statement that asked for it.
    verify: (client, done) => {
      client.query(POSTGRES_SESSION_SETTINGS).then(
        () => done(),
        (err: Error) => done(err),
      );
    },
  });
  const lost = lostConnectionWarning(log);
  // pg-pool repeats an idle client's error on the pool; the client's own listener has reported it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', (err) => lost(client, err)));
  return {
    async connect() {
      const client = await pool.connect();
      let broken: Error | undefined;
      // A read whose client left: cancelled by a cancel request (this pool's connections may all be busy), and this
      // connection is ended rather than reused, so the cancel cannot reach a later statement.
      const cancel = () => {
        broken ??= new Error('a read was cancelled on this connection');
        cancelBackend(pg.Client, url, client, log);
      };
      const query = async (sql: string, parameters: readonly unknown[]) => {
        const name = prepared ? preparedName(sql) : undefined;
        const run = async () => {
          if (name === undefined) return client.query(sql, [...parameters]);
          await keepPreparedBound(client, name);
          return client.query({ name, text: sql, values: [...parameters] });
        };
        try {
          return await stoppableRead(sql, run, cancel);
        } catch (err) {
          if (isConnectionLoss(err)) broken = err as Error;
          throw err;
        }
      };
      // Only the (sql, parameters) form: the dialect has no cursor configured, so Kysely never passes one.
      return {
        query: query as unknown as PostgresPoolClient['query'],
        release: () => client.release(broken),
      };
    },
    end: () => pool.end(),
  };
}

/** The named statements each pooled PostgreSQL connection holds. */
const preparedOn = new WeakMap<object, PreparedOnConnection>();

/**
 * Keeps a connection's prepared statements within their bound before `name` runs on it: the least recently used
 * one is deallocated in PostgreSQL and forgotten by node-postgres (which otherwise would only bind it again).
 */
async function keepPreparedBound(client: import('pg').PoolClient, name: string) {
  let prepared = preparedOn.get(client);
  if (!prepared) {
    prepared = new PreparedOnConnection();
    preparedOn.set(client, prepared);
  }
  const evicted = prepared.use(name);
  if (evicted === undefined) return;
  // node-postgres's record of the statements parsed on its connection (not in its types): one whose parse failed
  // was never prepared, and has nothing to deallocate.
  const parsed = (client.connection as unknown as { parsedStatements: Record<string, string> })
    .parsedStatements;
  if (parsed[evicted] === undefined) return;
  await client.query(`DEALLOCATE ${evicted}`);
  delete parsed[evicted];
}

/**
 * Cancels the statement a pooled connection runs with PostgreSQL's cancel request: a connection of its own that
 * sends the backend's process id and secret key (node-postgres keeps both from the connection's start) and is closed
 * by the server. No session starts for it: no login, no backend set up, no place among `max_connections` — where a
 * connection that ran `pg_cancel_backend` took all three for every read a leaving client stopped.
 */
function cancelBackend(
  Client: typeof import('pg').Client,
  url: string,
  client: import('pg').PoolClient,
  log: DbLog,
) {
  // What node-postgres keeps of the connection's start and of its settings (not in its types): its own cancel()
  // does the same, but reads a property it reports as deprecated.
  const { processID, secretKey } = client as unknown as {
    processID: number | null;
    secretKey: number | null;
  };
  if (processID === null || secretKey === null) return;
  const canceller = new Client({ connectionString: url }) as unknown as {
    host: string;
    port: number;
    connection: {
      on(event: 'error', listener: (err: Error) => void): void;
      once(event: 'connect', listener: () => void): void;
      connect(port: number | string, host?: string): void;
      cancel(processID: number, secretKey: number): void;
    };
  };
  const { connection, host, port } = canceller;
  connection.on('error', (err) =>
    log.warn({ reason: describeDbError(err) }, 'could not cancel the read of a request whose client left'),
  );
  connection.once('connect', () => connection.cancel(processID, secretKey));
  if (host?.startsWith('/')) connection.connect(`${host}/.s.PGSQL.${port}`);
  else connection.connect(port, host);
}

/**
 * The MariaDB/MySQL pool, with a listener on every connection so no later 'error' event goes unheard. A read whose
 * client left is stopped as on PostgreSQL (`KILL QUERY` from a connection of its own, and its connection ended).
 */
async function mysqlPool(url: string, log: DbLog) {
  const mysql = await import('mysql2');
  const uri = url.replace(/^mariadb:/, 'mysql:');
  const pool = mysql.createPool({ uri, connectionLimit: POOL_SIZE, charset: 'utf8mb4' });
  const lost = lostConnectionWarning(log);
  const killQuery = (threadId: number) => {
    const killer = mysql.createConnection({ uri });
    killer.on('error', () => {});
    killer.query(`KILL QUERY ${Number(threadId)}`, (err) => {
      if (err)
        log.warn(
          { reason: describeDbError(err) },
          'could not cancel the read of a request whose client left',
        );
      killer.end(() => {});
    });
  };
  pool.on('connection', (connection) => {
    // mysql2 drops a connection from the pool on its first error; its own listener is a one-time one.
    connection.on('error', (err) => lost(connection, err));
    // Kysely runs every statement as query(sql, parameters, callback) and hands the connection back with release().
    let cancelled = false;
    const query = connection.query.bind(connection) as (...args: unknown[]) => unknown;
    const release = connection.release.bind(connection);
    Object.assign(connection, {
      query(...args: unknown[]) {
        const [sql, parameters, callback] = args;
        if (typeof sql !== 'string' || typeof callback !== 'function') return query(...args);
        const done = callback as (err: unknown, result?: unknown) => void;
        const run = () =>
          new Promise((resolve, reject) =>
            query(sql, parameters, (err: unknown, result: unknown) => (err ? reject(err) : resolve(result))),
          );
        const stop = () => {
          cancelled = true;
          killQuery(connection.threadId);
        };
        stoppableRead(sql, run, stop).then(
          (result) => done(null, result),
          (err) => done(err),
        );
      },
      release() {
        if (!cancelled) return release();
        connection.destroy();
      },
    });
  });
  return pool;
}

/** Prepared statements kept per database, by SQL text: an API request runs the same few queries every time. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * better-sqlite3 as Kysely sees it, preparing each distinct SQL text once: Kysely prepares every query anew, which
 * costs as much as running a small one. The least recently used statement goes when the cache is full (lists of
 * ids in `IN (…)` make many texts). A statement is used by one query at a time: Kysely holds the single SQLite
 * connection for the whole of a query (its mutex), iteration included.
 */
export function withStatementCache(sqlite: SQLite.Database, size = STATEMENT_CACHE_SIZE): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (statement) statements.delete(sql);
      else statement = sqlite.prepare(sql);
      statements.set(sql, statement);
      if (statements.size > size) statements.delete(statements.keys().next().value as string);
      return statement;
    },
  };
}

/** How `openDb` opens a database. */
export type DbOptions = {
  /** Where lost connections are reported. */
  log?: DbLog;
  /**
   * PostgreSQL: run the reads served on every request as named prepared statements, planned once per connection
   * (default). Off behind a pooler that hands one session's statements to another (PgBouncer in transaction mode
   * before 1.21, or without `max_prepared_statements`).
   */
  preparedStatements?: boolean;
};

/**
 * Opens the database named by the URL: sqlite://<path>, postgres://…, mysql://… On PostgreSQL and MariaDB a read
 * outside a transaction that meets a lost connection runs again on a new one (see retryReads). Their drivers are
 * loaded when the first query needs a connection: a SQLite server never loads them.
 */
export function openDb(url: string, options: DbOptions = {}): DbHandle {
  const dialect = dialectOf(url);
  const log = options.log ?? defaultLog();
  let db: Db;
  if (dialect === 'sqlite') {
    const path = url.slice('sqlite://'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const sqlite = new SQLite(path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  } else if (dialect === 'postgres') {
    db = new Kysely<Database>({
      dialect: retryReads(
        new PostgresDialect({ pool: () => postgresPool(url, log, options.preparedStatements ?? true) }),
        POOL_SIZE,
      ),
    });
  } else {
    db = new Kysely<Database>({
      dialect: retryReads(new MysqlDialect({ pool: () => mysqlPool(url, log) }), POOL_SIZE),
    });
  }
  return { db, dialect, destroy: () => db.destroy() };
}

function provider(dialect: Dialect): MigrationProvider {
  const migrations: Record<string, Migration> = {
    '0001-initial': initial(dialect),
    '0002-scheduler': scheduler(dialect),
    '0003-retention': retention(dialect),
    '0004-task-runners': taskRunners(dialect),
    '0005-webhook-deliveries': webhookDeliveries(dialect),
    '0006-token-expiry': tokenExpiry(),
    '0007-runner-owner': runnerOwner(),
    '0008-sign-in-throttle': signInThrottle(),
    '0009-project-invites': projectInvites(dialect),
    '0011-run-once-and-key-sources': runOnceAndKeySources(),
    '0012-event-filters': eventFilters(dialect),
    '0010-totp': totp(dialect),
    '0013-remote-runners': remoteRunners(dialect),
    '0014-event-kinds': eventKinds(),
    '0015-template-vaults': templateVaults(),
    '0016-email-invites': emailInvites(dialect),
    '0017-runner-reports': runnerReports(),
    '0018-schedule-task-params': scheduleTaskParams(dialect),
    '0019-option-lists-and-task-outputs': optionListsAndTaskOutputs(dialect),
    '0020-token-scopes': tokenScopes(),
    '0021-task-plans': taskPlans(dialect),
    '0022-agent-approval': agentApproval(),
    '0023-workflows': workflows(dialect),
    '0025-plan-files-and-drift': planFilesAndDrift(dialect),
    '0026-terraform-states': terraformStates(dialect),
    '0027-template-task-counters': templateTaskCounters(dialect),
    '0028-task-environment-override': taskEnvironmentOverride(),
    '0029-row-revisions': rowRevisions(dialect),
    '0030-project-template-revisions': projectTemplateRevisions(dialect),
    '0031-task-list-revisions': taskListRevisions(dialect),
  };
  return { getMigrations: async () => migrations };
}

/** The migrations this server knows that the database has not run (one read of the migrations table). */
export async function pendingMigrations(handle: Pick<DbHandle, 'db' | 'dialect'>): Promise<string[]> {
  const known = Object.keys(await provider(handle.dialect).getMigrations());
  const { rows } = await sql<{ name: string }>`select name from migrations`.execute(handle.db);
  const done = new Set(rows.map((r) => r.name));
  return known.filter((name) => !done.has(name));
}

/** Applies every pending migration; throws with the failing migration's name. */
export async function migrate(handle: DbHandle): Promise<string[]> {
  const migrator = new Migrator({
    db: handle.db,
    provider: provider(handle.dialect),
    migrationTableName: 'migrations',
    migrationLockTableName: 'migrations_lock',
    // Migrations were merged out of name order (0005 before 0003/0004); each is independent, so a database
    // that already ran a later one still gets the earlier ones instead of refusing to start.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
