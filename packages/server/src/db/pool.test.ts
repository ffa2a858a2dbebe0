import { sql } from 'kysely';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { openDb } from '.';
import { isDbUnavailable } from './unavailable';

const postgres = testDialects().find((d) => d.name === 'postgres');
const mysql = testDialects().find((d) => d.name === 'mysql');

/** Resolves once `check` holds, trying every 20 ms (at most 10 s). */
async function until(check: () => Promise<boolean>) {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs only where PostgreSQL is configured (CI sets SIGNALBOX_TEST_PG_URL); it is a property of that driver. */
describe.runIf(postgres)('PostgreSQL pool', () => {
  const admin = async <T>(work: (client: pg.Client) => Promise<T>) => {
    const client = new pg.Client({ connectionString: process.env.SIGNALBOX_TEST_PG_URL });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  const pidOf = async (db: ReturnType<typeof openDb>['db']) =>
    (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;

  it('survives the server ending its idle connections and answers the next query', async () => {
    const database = await postgres!.create('');
    const handle = openDb(database.url);
    try {
      const before = await pidOf(handle.db);
      // Another session ends ours, as a restart or an administrator would, while it sits idle in the pool.
      await admin((c) => c.query('select pg_terminate_backend($1)', [before]));
      // The very next read answers (from a new connection), with no unhandled 'error' (vitest fails on one).
      const after = await pidOf(handle.db);
      expect(after).not.toBe(before);
    } finally {
      await handle.destroy();
      await database.drop();
    }
  });

  it('opens every session without parallel workers or JIT compilation', async () => {
    const database = await postgres!.create('');
    const handle = openDb(database.url);
    try {
      // The database's own defaults differ: the settings are the server's sessions', not the cluster's.
      const defaults = await admin(
        async (c) => (await c.query('show max_parallel_workers_per_gather')).rows[0],
      );
      expect(defaults.max_parallel_workers_per_gather).not.toBe('0');
      const settings = async (db: typeof handle.db) =>
        (
          await sql<{
            workers: string;
            jit: string;
            pid: number;
          }>`select current_setting('max_parallel_workers_per_gather') as workers,
            current_setting('jit') as jit, pg_backend_pid() as pid`.execute(db)
        ).rows[0]!;
      // Three transactions at once hold three pooled connections: each new one took the settings first.
      let release = () => {};
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const seen: { workers: string; jit: string; pid: number }[] = [];
      const held = [1, 2, 3].map(() =>
        handle.db.transaction().execute(async (trx) => {
          seen.push(await settings(trx as never));
          if (seen.length === 3) release();
          await gate;
        }),
      );
      await Promise.all(held);
      seen.push(await settings(handle.db));
      expect(new Set(seen.map((s) => s.pid)).size).toBe(3);
      for (const s of seen) expect({ workers: s.workers, jit: s.jit }).toEqual({ workers: '0', jit: 'off' });
    } finally {
      await handle.destroy();
      await database.drop();
    }
  });

  it('survives losing a connection held by a transaction, and never hands that connection out again', async () => {
    const database = await postgres!.create('');
    const handle = openDb(database.url);
    try {
      let held = 0;
      const failed = await handle.db
        .transaction()
        .execute(async (trx) => {
          held = await pidOf(trx as never);
          const sleeping = sql`select pg_sleep(30)`.execute(trx);
          sleeping.catch(() => {}); // awaited below, after the kill
          await until(() =>
            admin(async (c) => {
              const res = await c.query(
                "select 1 from pg_stat_activity where pid = $1 and query like '%pg_sleep%'",
                [held],
              );
              return res.rowCount === 1;
            }),
          );
          await admin((c) => c.query('select pg_terminate_backend($1)', [held]));
          await sleeping;
        })
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(isDbUnavailable(failed)).toBe(true);
      // Every later use gets a live connection, never the one that was ended.
      for (let i = 0; i < 12; i++) expect(await pidOf(handle.db)).not.toBe(held);
      const writes = await handle.db.transaction().execute(async (trx) => pidOf(trx as never));
      expect(writes).not.toBe(held);
    } finally {
      await handle.destroy();
      await database.drop();
    }
  });
});

describe.runIf(mysql)('MariaDB/MySQL pool', () => {
  it('survives losing a connection held by a transaction and answers the next query', async () => {
    const database = await mysql!.create('');
    const handle = openDb(database.url);
    const idOf = async (db: ReturnType<typeof openDb>['db']) =>
      Number((await sql<{ id: number }>`select connection_id() as id`.execute(db)).rows[0]!.id);
    try {
      let held = 0;
      const failed = await handle.db
        .transaction()
        .execute(async (trx) => {
          held = await idOf(trx as never);
          const sleeping = sql`select sleep(30)`.execute(trx);
          sleeping.catch(() => {}); // awaited below, after the kill
          const killer = await createConnection(process.env.SIGNALBOX_TEST_MYSQL_URL!);
          try {
            await until(async () => {
              const [rows] = await killer.query(
                "select 1 from information_schema.processlist where id = ? and info like '%sleep(30)%'",
                [held],
              );
              return (rows as unknown[]).length === 1;
            });
            await killer.query(`KILL ${held}`);
          } finally {
            await killer.end();
          }
          await sleeping;
        })
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(isDbUnavailable(failed)).toBe(true);
      for (let i = 0; i < 12; i++) expect(await idOf(handle.db)).not.toBe(held);
    } finally {
      await handle.destroy();
      await database.drop();
    }
  });
});
