import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRoutes, fill, type Ids, type Route, seedProject, snapshot } from '../../test/support/api-walk';
import { testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { openLiveSocket } from '../../test/support/live-socket';

/**
 * Cross-site request forgery: a page elsewhere can make the browser send the session cookie with a form POST
 * (text/plain or urlencoded, no preflight). Every cookie-authenticated write must prove it comes from the console;
 * the console's own requests, API-token requests and cookie-less callers (webhooks) are unaffected.
 */

const EVIL = 'http://evil.example';

/**
 * What a hostile page can make a browser send, each with the victim's session cookie. `postOnly`: a request only
 * an HTML form can send without Origin and fetch metadata, which is a POST (a PUT, PATCH or DELETE from another
 * site needs a CORS preflight this server never grants, and carries an Origin).
 */
const FORGERIES: { label: string; headers: Record<string, string>; payload: string; postOnly?: boolean }[] = [
  {
    label: 'text/plain form from a foreign Origin',
    headers: { origin: EVIL, 'content-type': 'text/plain' },
    payload: '',
  },
  {
    label: 'urlencoded form marked cross-site',
    headers: { 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'a=b',
  },
  {
    label: 'JSON from a sibling site',
    headers: {
      'sec-fetch-site': 'same-site',
      origin: 'http://sibling.localhost',
      'content-type': 'application/json',
    },
    payload: '{}',
  },
  {
    label: 'JSON from a sandboxed page (Origin: null)',
    headers: { origin: 'null', 'content-type': 'application/json' },
    payload: '{}',
  },
  {
    label: 'text/plain with neither Origin nor fetch metadata',
    headers: { 'content-type': 'text/plain' },
    payload: 'x',
    postOnly: true,
  },
  { label: 'no body, neither Origin nor fetch metadata', headers: {}, payload: '', postOnly: true },
];

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

describe.each(testDialects())('forged requests on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  let ids: Ids;
  let writes: Route[];

  const inject = (method: string, url: string, headers: Record<string, string>, payload?: string | object) =>
    h.app.inject({ method: method as InjectOptions['method'], url, headers, payload });

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true, can_create_project: true });
    ids = await seedProject(h, admin, 'Main');
    // Sign-out and deletions last: were they accepted, the walk would go on signed out or without the objects.
    const rank = (r: Route) => (r.url === '/api/auth/logout' ? 2 : r.method === 'DELETE' ? 1 : 0);
    writes = apiRoutes(h)
      .filter((r) => WRITE_METHODS.has(r.method))
      .sort((a, b) => rank(a) - rank(b));
  });
  afterAll(async () => h?.close());

  it('refuses a forged request on every state-changing route with 403 and changes nothing', async () => {
    expect(writes.length).toBeGreaterThan(40);
    const before = await snapshot(h);
    const accepted: string[] = [];
    for (const route of writes) {
      const url = fill(route.url, ids, admin.userId);
      for (const forgery of FORGERIES) {
        if (forgery.postOnly && route.method !== 'POST') continue;
        const res = await inject(
          route.method,
          url,
          { cookie: admin.cookie, ...forgery.headers },
          forgery.payload,
        );
        if (res.statusCode !== 403 || typeof res.json().error !== 'string')
          accepted.push(
            `${route.method} ${route.url} (${forgery.label}): ${res.statusCode} ${res.body.slice(0, 120)}`,
          );
      }
    }
    expect(accepted).toEqual([]);
    expect(await snapshot(h)).toEqual(before);
    // The forged logout did not sign the victim out either.
    expect((await admin.get('/api/user')).statusCode).toBe(200);
  });

  it('lets the console write: same-origin Origin, Sec-Fetch-Site same-origin, or JSON from a non-browser client', async () => {
    const created = await inject(
      'POST',
      '/api/projects',
      { cookie: admin.cookie, origin: 'http://localhost', 'content-type': 'application/json' },
      JSON.stringify({ name: 'From the console' }),
    );
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as number;
    const renamed = await inject(
      'PUT',
      `/api/project/${id}`,
      { cookie: admin.cookie, 'content-type': 'application/json' },
      JSON.stringify({ name: 'From a script' }),
    );
    expect(renamed.statusCode, renamed.body).toBe(204);
    // A body-less DELETE as Chromium sends it: fetch metadata, and an Origin of this server.
    const deleted = await inject('DELETE', `/api/project/${id}`, {
      cookie: admin.cookie,
      origin: 'http://localhost:80',
      'sec-fetch-site': 'same-origin',
    });
    expect(deleted.statusCode, deleted.body).toBe(204);
    // A script's DELETE with the cookie states JSON (an empty JSON body is no body).
    const token = await admin.post('/api/user/tokens');
    const revoked = await inject('DELETE', `/api/user/tokens/${token.json().id}`, {
      cookie: admin.cookie,
      'content-type': 'application/json',
    });
    expect(revoked.statusCode, revoked.body).toBe(204);
  });

  it('lets a script signed in by cookie send PUT, PATCH and DELETE without a Content-Type', async () => {
    // As Semaphore's documentation shows: sign in with curl, keep the cookie, and call the API with it.
    const project = (await admin.post('/api/projects', { name: 'Scripted' })).json().id as number;
    const token = (await admin.post('/api/user/tokens')).json().id as string;
    const revoked = await inject('DELETE', `/api/user/tokens/${token}`, { cookie: admin.cookie });
    expect(revoked.statusCode, revoked.body).toBe(204);
    expect((await admin.get('/api/user/tokens')).json()).not.toContainEqual(
      expect.objectContaining({ id: token }),
    );
    // A PUT without Content-Type reaches the route, which names what its body lacks (no 403).
    const renamed = await inject('PUT', `/api/project/${project}`, { cookie: admin.cookie });
    expect(renamed.statusCode, renamed.body).toBe(400);
    expect(renamed.json().error).not.toMatch(/cross-site|Content-Type/);
    const removed = await inject('DELETE', `/api/project/${project}`, { cookie: admin.cookie });
    expect(removed.statusCode, removed.body).toBe(204);
    // A POST without Content-Type still needs the console's proof: an HTML form can send one.
    const posted = await inject('POST', '/api/projects', { cookie: admin.cookie });
    expect(posted.statusCode).toBe(403);
    // A foreign Origin or cross-site fetch metadata is refused for every write method.
    for (const method of ['PUT', 'PATCH', 'DELETE'])
      for (const headers of [{ origin: EVIL }, { 'sec-fetch-site': 'cross-site' }] as Record<
        string,
        string
      >[]) {
        const res = await inject(method, `/api/project/${ids.project_id}`, {
          cookie: admin.cookie,
          ...headers,
        });
        expect(res.statusCode, `${method} ${JSON.stringify(headers)}`).toBe(403);
      }
  });

  it('exempts API-token requests and callers without the session cookie', async () => {
    const token = (await admin.post('/api/user/tokens')).json().token as string;
    const viaToken = await inject(
      'POST',
      '/api/projects',
      {
        authorization: `Bearer ${token}`,
        cookie: admin.cookie,
        origin: EVIL,
        'content-type': 'application/json',
      },
      JSON.stringify({ name: 'By token' }),
    );
    expect(viaToken.statusCode, viaToken.body).toBe(201);
    // A webhook is called by another server: no cookie, any content type, any origin.
    const hook = await inject(
      'POST',
      '/api/integrations/no-such-alias',
      { origin: EVIL, 'content-type': 'text/plain' },
      'x',
    );
    expect(hook.statusCode).toBe(404);
  });

  it('accepts the origin of SIGNALBOX_WEB_ROOT, and X-Forwarded-Host only from a trusted proxy', async () => {
    const proxied = await createHarness(dialect, {
      webRoot: 'https://console.example.com/signalbox',
      trustProxy: 1,
    });
    const direct = await createHarness(dialect, { trustProxy: false });
    try {
      /** A text/plain POST: 400 (not a project) once past the guard, 403 when the guard refuses it. */
      const write = async (app: Harness, headers: Record<string, string>) => {
        const { cookie } = await app.userClient();
        const res = await app.app.inject({
          method: 'POST',
          url: '/api/projects',
          headers: { cookie, 'content-type': 'text/plain', ...headers },
          payload: '',
        });
        return res.statusCode;
      };
      const forwarded = { origin: 'https://sb.internal', 'x-forwarded-host': 'sb.internal' };
      expect(await write(proxied, { origin: 'https://console.example.com' })).toBe(400);
      expect(await write(proxied, { origin: 'https://console.example.com:8443' })).toBe(403);
      expect(await write(proxied, forwarded)).toBe(400);
      expect(await write(direct, forwarded)).toBe(403);
      expect(await write(direct, { origin: 'http://localhost' })).toBe(400);
    } finally {
      await proxied.close();
      await direct.close();
    }
  });
});

describe('forged WebSocket upgrades', () => {
  let h: Harness;
  let user: Client;
  let base: string;

  beforeAll(async () => {
    h = await createHarness(testDialects()[0]!);
    user = await h.userClient();
    const address = await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = address.replace(/^http/, 'ws');
  });
  afterAll(async () => h?.close());

  it('refuses a cookie-authenticated upgrade from a foreign Origin before upgrading', async () => {
    await expect(openLiveSocket(h, base, { cookie: user.cookie, origin: EVIL })).rejects.toThrow('HTTP 403');
    await expect(
      openLiveSocket(h, base, {
        cookie: user.cookie,
        origin: base.replace(/^ws/, 'http'),
        'sec-fetch-site': 'cross-site',
      }),
    ).rejects.toThrow('HTTP 403');
  });

  it('opens from the console itself, from a client without Origin, and with an API token', async () => {
    const own = await openLiveSocket(h, base, { cookie: user.cookie, origin: base.replace(/^ws/, 'http') });
    const plain = await openLiveSocket(h, base, { cookie: user.cookie });
    const token = (await user.post('/api/user/tokens')).json().token as string;
    const viaToken = await openLiveSocket(h, base, { authorization: `Bearer ${token}`, origin: EVIL });
    for (const s of [own, plain, viaToken]) s.ws.close();
  });
});
