import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedDatabase, testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { waitFor } from '../../test/support/task-fixtures';
import { rateLimitSharedReady } from './rate-limit';

const REDIS_URL = 'redis://127.0.0.1:6379';
const LIMIT = 6;

/**
 * Two instances of one deployment (one database, one Redis) count each user's requests together: the limit is
 * the deployment's, not each instance's. The keys are this run's own (its Redis prefix) and are deleted after.
 */
describe.each(testDialects())('request limiter shared through Redis on $name', (dialect) => {
  const prefix = `test-ratelimit-${randomBytes(6).toString('hex')}`;
  const pattern = `signalbox:${prefix}:ratelimit:*`;
  let redis: Redis;
  let drop: () => Promise<void>;
  let a: Harness;
  let b: Harness;

  const keys = () => redis.keys(pattern);

  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
    const db = await sharedDatabase(dialect, 'sb-ratelimit-');
    drop = db.drop;
    const config = {
      redisUrl: REDIS_URL,
      redisPrefix: prefix,
      rateLimit: LIMIT,
      secretKey: randomBytes(32).toString('base64'),
    };
    a = await createHarness(db.dialect, config);
    b = await createHarness(db.dialect, config);
    await waitFor(async () => rateLimitSharedReady(a.app) && rateLimitSharedReady(b.app), 5000, 'Redis');
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await drop?.();
    const left = await keys();
    if (left.length) await redis.del(...left);
    redis.disconnect();
  });

  /** The same signed-in user on instance B (sessions live in the shared database). */
  const onB = (client: Client) => (url: string) =>
    b.app.inject({ method: 'GET', url, headers: { cookie: client.cookie } });

  it('refuses a user over the limit on every instance once the instances together reach it', async () => {
    const user = await a.userClient();
    for (let i = 0; i < LIMIT / 2; i++) {
      expect((await user.get('/api/projects')).statusCode).toBe(200);
      expect((await onB(user)('/api/projects')).statusCode).toBe(200);
    }
    const onA = await user.get('/api/projects');
    expect(onA.statusCode).toBe(429);
    expect(onA.json()).toMatchObject({ code: 'too_many_requests' });
    expect(onA.headers['retry-after']).toMatch(/^\d+$/);
    expect((await onB(user)('/api/projects')).statusCode).toBe(429);
    // Counted under this deployment's prefix, by user id, expiring with the window.
    const key = `signalbox:${prefix}:ratelimit:user:${user.userId}`;
    expect(await keys()).toContain(key);
    expect(Number(await redis.get(key))).toBe(LIMIT + 2);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);

    const other = await a.userClient();
    expect((await onB(other)('/api/projects')).statusCode).toBe(200);
  });

  it('leaves deployments with another prefix their own counts', async () => {
    const db = await sharedDatabase(dialect, 'sb-ratelimit-other-');
    const elsewhere = await createHarness(db.dialect, {
      redisUrl: REDIS_URL,
      redisPrefix: `${prefix}-other`,
      rateLimit: LIMIT,
    });
    try {
      await waitFor(async () => rateLimitSharedReady(elsewhere.app), 5000, 'Redis');
      const user = await elsewhere.userClient();
      // The first deployment's user of the same id is far over the limit.
      await redis.set(`signalbox:${prefix}:ratelimit:user:${user.userId}`, String(LIMIT * 10), 'PX', 60_000);
      expect((await user.get('/api/projects')).statusCode).toBe(200);
      expect(await redis.get(`signalbox:${prefix}-other:ratelimit:user:${user.userId}`)).toBe('1');
    } finally {
      await elsewhere.close();
      await db.drop();
      const left = await redis.keys(`signalbox:${prefix}-other:ratelimit:*`);
      if (left.length) await redis.del(...left);
    }
  });
});
