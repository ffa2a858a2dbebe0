import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { openLiveSocket } from '../../test/support/live-socket';
import { freePort } from '../../test/support/net';
import { waitFor } from '../../test/support/task-fixtures';
import { loadConfig } from '../config';
import { now } from '../db/values';

const PER_USER = 5;
/** Above the few sign-ins the harness makes from its one address (127.0.0.1) for the users of these tests. */
const PER_ADDRESS = 20;

/** Sends `count` requests one after the other; their status codes. */
async function statuses(count: number, send: () => Promise<LightMyRequestResponse>) {
  const codes: number[] = [];
  for (let i = 0; i < count; i++) codes.push((await send()).statusCode);
  return codes;
}

const ok = (count: number) => Array<number>(count).fill(200);

/** A 429 of the request limiter: the house error body, a wait the caller can act on, in body and header. */
function expectLimited(res: LightMyRequestResponse, limit: number) {
  expect(res.statusCode).toBe(429);
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(res.json()).toEqual({
    error: `Too many requests: try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}`,
    code: 'too_many_requests',
    params: { seconds: retryAfter },
    request_id: res.headers['x-request-id'],
  });
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
}

describe.each(testDialects())('request limiter on $name', (dialect) => {
  let h: Harness;
  let address = 0;
  /** A GET from an address no other test uses, not signed in. */
  const anonymousFrom = (remoteAddress: string) => (url: string) =>
    h.app.inject({ method: 'GET', url, remoteAddress });
  const freshAddress = () => {
    address += 1;
    return anonymousFrom(`198.51.100.${address}`);
  };

  beforeAll(async () => {
    h = await createHarness(dialect, { rateLimit: PER_USER, rateLimitAnonymous: PER_ADDRESS });
  });
  afterAll(() => h?.close());

  it('answers a signed-in user over the limit 429 with its code and Retry-After, other users unaffected', async () => {
    // Signing in is a request of the sign-in page's address (the harness's 127.0.0.1), not of the user.
    const ann = await h.userClient();
    const bob = await h.userClient();
    const first = await ann.get('/api/projects');
    expect(first.headers['x-ratelimit-limit']).toBe(String(PER_USER));
    expect(first.headers['x-ratelimit-remaining']).toBe(String(PER_USER - 1));
    expect(await statuses(PER_USER - 1, () => ann.get('/api/projects'))).toEqual(ok(PER_USER - 1));
    expectLimited(await ann.get('/api/projects'), PER_USER);
    // Every route counts against the same user, and the refusal says so before the route runs.
    expectLimited(await ann.post('/api/projects', { name: 'Never made' }), PER_USER);
    expect(
      await h.deps.db.selectFrom('project').select('id').where('name', '=', 'Never made').execute(),
    ).toEqual([]);

    expect(await statuses(PER_USER, () => bob.get('/api/projects'))).toEqual(ok(PER_USER));
  });

  it("counts a user's session and API tokens together, wherever they come from", async () => {
    const cleo = await h.userClient();
    const created = await cleo.post('/api/user/tokens', { name: 'ci' });
    expect(created.statusCode).toBe(201);
    const token = created.json().token as string;
    const byToken = (remoteAddress: string) => () =>
      h.app.inject({
        method: 'GET',
        url: '/api/projects',
        remoteAddress,
        headers: { authorization: `Bearer ${token}` },
      });
    // Creating the token was the first of cleo's requests.
    expect(await statuses(2, () => cleo.get('/api/projects'))).toEqual(ok(2));
    expect(await statuses(2, byToken('203.0.113.7'))).toEqual(ok(2));
    expectLimited(await byToken('203.0.113.8')(), PER_USER);
    expectLimited(await cleo.get('/api/projects'), PER_USER);
  });

  it("keeps a user's open live socket past the limit, and refuses a new one", async () => {
    const base = (await h.app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http/, 'ws');
    const eve = await h.userClient({ can_create_project: true });
    const created = await eve.post('/api/projects', { name: 'Watched' });
    expect(created.statusCode).toBe(201);
    const projectId = created.json().id as number;
    const socket = await openLiveSocket(h, base, { cookie: eve.cookie });
    expect(await statuses(PER_USER - 2, () => eve.get('/api/projects'))).toEqual(ok(PER_USER - 2));
    expectLimited(await eve.get('/api/projects'), PER_USER);

    await expect(openLiveSocket(h, base, { cookie: eve.cookie })).rejects.toThrow('HTTP 429');
    h.deps.bus.publishLogs({
      project_id: projectId,
      task_id: 424_242,
      lines: [{ output: 'still watching', time: now(), line: 1 }],
    });
    await waitFor(async () => socket.messages.some((m) => m.task_id === 424_242), 5000, 'the log line');
    socket.ws.close();
  });

  it('limits callers who are not signed in by their address, with a limit of their own', async () => {
    const get = freshAddress();
    expect(await statuses(PER_ADDRESS, () => get('/api/auth/login'))).toEqual(ok(PER_ADDRESS));
    expectLimited(await get('/api/auth/login'), PER_ADDRESS);
    // Another address, and a signed-in user coming from the limited one, are counted apart.
    const other = freshAddress();
    expect((await other('/api/auth/login')).statusCode).toBe(200);
    const dana = await h.userClient();
    const fromLimited = await h.app.inject({
      method: 'GET',
      url: '/api/projects',
      remoteAddress: `198.51.100.${address - 1}`,
      headers: { cookie: dana.cookie },
    });
    expect(fromLimited.statusCode).toBe(200);
  });

  it('counts the addresses of one IPv6 /64 together', async () => {
    const a = anonymousFrom('2001:db8:1:2::1');
    const b = anonymousFrom('2001:db8:1:2:ffff::9');
    expect(await statuses(PER_ADDRESS - 1, () => a('/api/auth/login'))).toEqual(ok(PER_ADDRESS - 1));
    expect((await b('/api/auth/login')).statusCode).toBe(200);
    expectLimited(await a('/api/auth/login'), PER_ADDRESS);
    expect((await anonymousFrom('2001:db8:1:3::1')('/api/auth/login')).statusCode).toBe(200);
  });

  it('never limits probes, metrics or the runner protocol', async () => {
    const get = freshAddress();
    expect(await statuses(PER_ADDRESS, () => get('/api/auth/login'))).toEqual(ok(PER_ADDRESS));
    expect((await get('/api/auth/login')).statusCode).toBe(429);
    for (const url of ['/api/ping', '/api/health/live', '/api/health/ready', '/api/metrics']) {
      const codes = await statuses(PER_ADDRESS + 2, () => get(url));
      expect(codes, url).toEqual(ok(PER_ADDRESS + 2));
    }
    // A runner's unregistration with a wrong token is refused by the route itself, never by the limiter.
    const unregister = await h.app.inject({
      method: 'DELETE',
      url: '/api/internal/runners',
      remoteAddress: `198.51.100.${address}`,
      headers: { 'x-runner-token': 'not-a-runner' },
    });
    expect(unregister.statusCode).toBe(401);
    expect(unregister.headers['x-ratelimit-limit']).toBeUndefined();
  });
});

describe('request limit settings', () => {
  it('reads the limits per minute, 0 or more, and refuses anything else naming the variable', () => {
    expect(loadConfig({})).toMatchObject({ rateLimit: 1200, rateLimitAnonymous: 300 });
    expect(loadConfig({ SIGNALBOX_RATE_LIMIT: '0', SIGNALBOX_RATE_LIMIT_ANONYMOUS: '50' })).toMatchObject({
      rateLimit: 0,
      rateLimitAnonymous: 50,
    });
    expect(() => loadConfig({ SIGNALBOX_RATE_LIMIT: '-1' })).toThrow(
      'SIGNALBOX_RATE_LIMIT: must be 0 or greater',
    );
    expect(() => loadConfig({ SIGNALBOX_RATE_LIMIT_ANONYMOUS: 'lots' })).toThrow(
      'SIGNALBOX_RATE_LIMIT_ANONYMOUS: must be a number',
    );
  });
});

describe.each(testDialects())('request limiter settings on $name', (dialect) => {
  it('limits nothing with SIGNALBOX_RATE_LIMIT=0', async () => {
    const h = await createHarness(dialect, { rateLimit: 0, rateLimitAnonymous: 1 });
    try {
      const user = await h.userClient();
      const res = await user.get('/api/projects');
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      expect(await statuses(30, () => user.get('/api/projects'))).toEqual(ok(30));
      const get = () => h.app.inject({ method: 'GET', url: '/api/auth/login' });
      expect(await statuses(30, get)).toEqual(ok(30));
    } finally {
      await h.close();
    }
  });

  it('limits only signed-in users with SIGNALBOX_RATE_LIMIT_ANONYMOUS=0', async () => {
    const h = await createHarness(dialect, { rateLimit: 2, rateLimitAnonymous: 0 });
    try {
      const get = () => h.app.inject({ method: 'GET', url: '/api/auth/login' });
      expect(await statuses(30, get)).toEqual(ok(30));
      const user = await h.userClient();
      expect(await statuses(2, () => user.get('/api/projects'))).toEqual(ok(2));
      expectLimited(await user.get('/api/projects'), 2);
    } finally {
      await h.close();
    }
  });

  it('counts on this instance, with one warning, when Redis cannot be reached', async () => {
    const port = await freePort();
    const h = await createHarness(dialect, {
      rateLimit: 3,
      redisUrl: `redis://127.0.0.1:${port}`,
      redisPrefix: 'unreachable',
    });
    try {
      const user: Client = await h.userClient();
      expect(await statuses(3, () => user.get('/api/projects'))).toEqual(ok(3));
      expectLimited(await user.get('/api/projects'), 3);
      const warnings = () =>
        h.logLines.filter((line) => line.includes('request limits are counted on this instance'));
      await waitFor(async () => warnings().length > 0, 5000, 'the warning');
      expect(warnings()).toHaveLength(1);
      expect(JSON.parse(warnings()[0]!)).toMatchObject({ level: 40 });
    } finally {
      await h.close();
    }
  });
});
