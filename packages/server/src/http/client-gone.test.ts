import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { CALLER_LISTS, sharedAnswersOf } from '../access/shared-answers';
import { ClientGone, ReadScope, stoppableRead } from '../db/client-gone';
import { now } from '../db/values';
import { stopReadsWhenClientLeaves } from './client-gone';
import { registerErrorHandler } from './error-handler';

/** Sends a request on a socket of its own and closes that socket as soon as `leave` resolves. */
async function leaveEarly(url: string, headers: Record<string, string>, leave: Promise<unknown>) {
  const request = http.request(url, { headers, agent: false });
  request.on('error', () => {});
  request.end();
  await leave;
  request.destroy();
}

const listen = async (app: FastifyInstance) => {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
};

describe('the reads of a scope whose client left', () => {
  const rows = async () => ['row'];
  const noCancel = () => {
    throw new Error('nothing was running to cancel');
  };

  it('stops them with an error that carries no stack (a driver appends its own to a string stack)', async () => {
    const scope = new ReadScope();
    scope.end();
    const err = await scope.run(() => stoppableRead('select 1', rows, noCancel)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientGone);
    expect((err as Error).stack).toBeUndefined();
    expect(String(err)).toBe(
      'ClientGone: the client closed the connection before the answer; its database reads were stopped',
    );
  });

  it('refuses a SELECT not yet started, whatever its case and leading space, and runs every other statement', async () => {
    const scope = new ReadScope();
    scope.end();
    for (const sql of ['select 1', '  SELECT 1', '\n\tSelect "id" from "task"'])
      await expect(scope.run(() => stoppableRead(sql, rows, noCancel))).rejects.toBeInstanceOf(ClientGone);
    // Writes, and statements that only look like reads, run to their end.
    for (const sql of [
      'insert into t values (1)',
      'update t set a = 1',
      'with x as (select 1) delete from t',
      'selected',
    ])
      await expect(scope.run(() => stoppableRead(sql, rows, noCancel))).resolves.toEqual(['row']);
    // Outside any scope (a scheduler's or the engine's reads), nothing is stopped.
    await expect(stoppableRead('select 1', rows, noCancel)).resolves.toEqual(['row']);
  });

  it('cancels the reads running when the client leaves, and only those', async () => {
    const scope = new ReadScope();
    let fail: (err: Error) => void = () => {};
    const cancelled: string[] = [];
    const running = scope.run(() =>
      stoppableRead(
        'select slow',
        () => new Promise<string[]>((_resolve, reject) => (fail = reject)),
        () => cancelled.push('slow'),
      ),
    );
    // A read that ended before the client left is not cancelled afterwards.
    await scope.run(() => stoppableRead('select quick', rows, () => cancelled.push('quick')));
    scope.end();
    expect(cancelled).toEqual(['slow']);
    // The database answers the cancelled read with its own error; the request learns that its client left.
    fail(new Error('canceling statement due to user request'));
    await expect(running).rejects.toBeInstanceOf(ClientGone);
  });
});

// SQLite's statements cannot be cancelled, and the app does not watch for leaving clients there (see app.ts).
const cancellable = testDialects().filter((dialect) => dialect.name !== 'sqlite');

describe.each(cancellable)('a request whose client leaves, on $name', (dialect) => {
  let harness: Harness;
  let admin: Client;
  /** A small server on the harness's database with the app's hook and error handler, and routes that wait. */
  let probe: FastifyInstance;
  let probeUrl: string;
  const arrived = new Map<string, () => void>();
  const ended = new Map<string, (outcome: string) => void>();

  beforeAll(async () => {
    harness = await createHarness(dialect);
    admin = await harness.userClient({ admin: true });
    const { db } = harness.deps;
    probe = Fastify();
    stopReadsWhenClientLeaves(probe);
    registerErrorHandler(probe);
    // Each route waits for its client to go, then reads or writes, and records what became of that.
    const afterClientLeft = (work: (name: string) => Promise<unknown>) => async (request: FastifyRequest) => {
      const { name } = request.query as { name: string };
      arrived.get(name)?.();
      await new Promise<void>((resolve) => request.raw.socket.once('close', resolve));
      try {
        await work(name);
        ended.get(name)?.('ran');
      } catch (err) {
        ended.get(name)?.(err instanceof ClientGone ? 'stopped' : `failed: ${(err as Error).message}`);
        throw err;
      }
      return {};
    };
    probe.get(
      '/read',
      afterClientLeft(() => db.selectFrom('project').select('id').execute()),
    );
    probe.get(
      '/write',
      afterClientLeft((name) =>
        db
          .insertInto('project')
          .values({ name, created: now(), alert: 0, alert_chat: null, max_parallel_tasks: 0, type: '' })
          .execute(),
      ),
    );
    probeUrl = await listen(probe);
  });
  afterAll(async () => {
    await probe?.close();
    await harness?.close();
  });

  /** Starts a GET of `path` whose client leaves once the route has it; resolves with what the route's work did. */
  const leaveRoute = async (path: string, name: string) => {
    const outcome = new Promise<string>((resolve) => ended.set(name, resolve));
    const reached = new Promise<void>((resolve) => arrived.set(name, resolve));
    await leaveEarly(`${probeUrl}${path}?name=${encodeURIComponent(name)}`, {}, reached);
    return outcome;
  };

  it('does not run a read of a GET whose client has left', async () => {
    expect(await leaveRoute('/read', 'read-after-leaving')).toBe('stopped');
  });

  it('runs a write to its end though the client left', async () => {
    expect(await leaveRoute('/write', 'written after its client left')).toBe('ran');
    const names = await harness.deps.db.selectFrom('project').select('name').execute();
    expect(names.map((row) => row.name)).toContain('written after its client left');
  });

  // A statement already running is cancelled in the database: a table locked by another session keeps the list's
  // read waiting, and the read must not outlive its client.
  it('cancels the running read of the projects list when its client leaves', async () => {
    const url = harness.config.dbUrl;
    const locker = await lockProjectTable(url);
    try {
      const server = await listen(harness.app);
      const waiting = () => readsWaitingOnProjects(url);
      const key = `${CALLER_LISTS} ${admin.userId}:1:* /api/projects`;
      const computing = () => sharedAnswersOf(harness.deps.bus).pending(key);
      await leaveEarly(
        `${server}/api/projects`,
        { cookie: admin.cookie },
        expect
          .poll(waiting, { timeout: 30_000, message: 'the list read waits on the lock' })
          .toBe(1)
          // The request waiting on the lock is the one computing the caller's shared list (under this key).
          .then(() => expect(computing()).toBe(true)),
      );
      // Gone while the table is still locked: cancelled, not finished.
      await expect.poll(waiting, { timeout: 30_000, message: 'the read was cancelled' }).toBe(0);
      // The request computed the caller's shared list: ended so (its reply hijacked, no onResponse), it must not
      // leave the next readers waiting for an answer that never comes.
      await expect
        .poll(computing, {
          timeout: 30_000,
          message: 'the list is no longer being computed',
        })
        .toBe(false);
    } finally {
      await locker.release();
    }
    // The pool answers the next reader.
    const res = await admin.get('/api/projects');
    expect(res.statusCode).toBe(200);
  });
});

/** Holds an exclusive lock on the project table from a session of its own until `release`. */
async function lockProjectTable(url: string) {
  if (url.startsWith('postgres')) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('begin');
    await client.query('lock table project in access exclusive mode');
    return {
      release: async () => {
        await client.query('rollback');
        await client.end();
      },
    };
  }
  const connection = await createConnection({ uri: url.replace(/^mariadb:/, 'mysql:') });
  await connection.query('lock tables project write');
  return {
    release: async () => {
      await connection.query('unlock tables');
      await connection.end();
    },
  };
}

/** How many statements of other sessions wait to read the project table. */
async function readsWaitingOnProjects(url: string): Promise<number> {
  const database = decodeURIComponent(new URL(url).pathname.slice(1));
  if (url.startsWith('postgres')) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const res = await client.query(
        `select count(*)::int as n from pg_stat_activity
          where datname = $1 and pid <> pg_backend_pid() and state = 'active' and wait_event_type = 'Lock'
            and query ilike 'select%from "project"%'`,
        [database],
      );
      return res.rows[0].n;
    } finally {
      await client.end();
    }
  }
  const connection = await createConnection({ uri: url.replace(/^mariadb:/, 'mysql:') });
  try {
    const [rows] = await connection.query(
      `select count(*) as n from information_schema.processlist
        where db = ? and id <> connection_id() and command = 'Query' and info like 'select%from \`project\`%'`,
      [database],
    );
    return Number((rows as { n: number }[])[0]?.n);
  } finally {
    await connection.end();
  }
}
