import type { ReadinessReport } from '@signalbox/contracts';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { freePort } from '../../../test/support/net';

const allOk = { database: { ok: true }, migrations: { ok: true }, engine: { ok: true } };

describe.each(testDialects())('health probes on $name', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(async () => h?.close());

  const ready = async () => {
    const res = await h.anonymous().get('/api/health/ready');
    // Whatever the answer, nothing of how the database is reached shows.
    expect(res.body).not.toContain(h.config.dbUrl);
    expect(res.body).not.toContain('127.0.0.1');
    return { status: res.statusCode, body: res.json() as ReadinessReport };
  };

  it('live answers ok without signing in', async () => {
    const res = await h.anonymous().get('/api/health/live');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('ready answers 200 with every check ok (no Redis check when Redis is not configured)', async () => {
    expect(await ready()).toEqual({ status: 200, body: { status: 'ready', checks: allOk } });
  });

  it('a migration the database has not run makes it 503 and names the migration', async () => {
    const name = '0008-sign-in-throttle';
    // `timestamp` is a keyword on some dialects: quoted by Kysely.
    const at = sql.ref('timestamp');
    const { rows } = await sql<{
      at: string;
    }>`select ${at} as at from migrations where name = ${name}`.execute(h.deps.db);
    const row = rows[0]!;
    await sql`delete from migrations where name = ${name}`.execute(h.deps.db);
    try {
      expect(await ready()).toEqual({
        status: 503,
        body: {
          status: 'not_ready',
          checks: { ...allOk, migrations: { ok: false, error: '1 pending', pending: [name] } },
        },
      });
    } finally {
      await sql`insert into migrations (name, ${at}) values (${name}, ${row.at})`.execute(h.deps.db);
    }
    expect((await ready()).status).toBe(200);
  });

  // Last: the engine does not start again.
  it('a task engine that is shutting down makes it 503', async () => {
    await h.deps.tasks.drain(0);
    expect(await ready()).toEqual({
      status: 503,
      body: {
        status: 'not_ready',
        checks: { ...allOk, engine: { ok: false, error: 'not running (not started yet, or shutting down)' } },
      },
    });
  });
});

describe('readiness with Redis configured', () => {
  const dialect = testDialects()[0]!;
  let h: Harness;
  let redisUrl = '';
  beforeAll(async () => {
    // Nothing listens there: the bridge keeps trying in the background.
    redisUrl = `redis://:redis-secret-pw@127.0.0.1:${await freePort()}/0`;
    h = await createHarness(dialect, { redisUrl });
  });
  afterAll(async () => h?.close());

  it(`an unreachable Redis makes it 503, without its address or password (${dialect.name})`, async () => {
    const res = await h.anonymous().get('/api/health/ready');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      status: 'not_ready',
      checks: { ...allOk, redis: { ok: false, error: 'not connected' } },
    });
    expect(res.body).not.toContain('redis-secret-pw');
    expect(res.body).not.toContain(new URL(redisUrl).port);
  });
});
