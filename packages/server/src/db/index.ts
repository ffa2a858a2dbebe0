import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  MysqlDialect,
  PostgresDialect,
  SqliteDialect,
} from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { type Dialect, dialectOf } from './dialect';
import { initial } from './migrations/0001-initial';
import { scheduler } from './migrations/0002-scheduler';
import { retention } from './migrations/0003-retention';
import { taskRunners } from './migrations/0004-task-runners';
import { webhookDeliveries } from './migrations/0005-webhook-deliveries';
import { tokenExpiry } from './migrations/0006-token-expiry';
import { runnerOwner } from './migrations/0007-runner-owner';
import { signInThrottle } from './migrations/0008-sign-in-throttle';
import type { Database } from './tables';

export type { Dialect } from './dialect';
export type { Database } from './tables';
export type Db = Kysely<Database>;

export type DbHandle = { db: Db; dialect: Dialect; destroy: () => Promise<void> };

/**
 * A PostgreSQL pool that survives the server closing idle connections (a restart, a failover, an administrator
 * ending sessions): pg reports that as an 'error' event, which would end the process with no listener. The pool
 * has already dropped the connection and opens a new one on the next query, so there is nothing else to do.
 */
function postgresPool(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {});
  return pool;
}

/** Opens the database named by the URL: sqlite://<path>, postgres://…, mysql://… */
export function openDb(url: string): DbHandle {
  const dialect = dialectOf(url);
  let db: Db;
  if (dialect === 'sqlite') {
    const path = url.slice('sqlite://'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const sqlite = new SQLite(path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  } else if (dialect === 'postgres') {
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: postgresPool(url) }),
    });
  } else {
    db = new Kysely<Database>({
      dialect: new MysqlDialect({
        pool: createPool({
          uri: url.replace(/^mariadb:/, 'mysql:'),
          connectionLimit: 10,
          charset: 'utf8mb4',
        }),
      }),
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
  };
  return { getMigrations: async () => migrations };
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
