import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isErrorCode } from '@signalbox/contracts';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRoutes, fill, type Ids, PUBLIC, type Route, seedProject, snapshot } from './support/api-walk';
import { testDialects } from './support/dialects';
import { type Client, createHarness, type Harness } from './support/harness';
import {
  BAD_PATH_VALUES,
  encodeHostile,
  FIELDS,
  hostileStrings,
  invalidBodies,
  LEAKS,
  numbered,
  pathParams,
  QUERY_KEYS,
  stringPaths,
  validBodies,
  withValue,
} from './support/hostile-input';

/**
 * API-wide checks that walk every registered route (so a route added later is covered without new code):
 * - anonymous callers get 401 on every non-public route, non-members 403 on every project route;
 * - invalid input (malformed or deeply nested JSON, NUL characters anywhere, wrong types, missing fields, 1 MB
 *   strings, bad ids in path parameters, unknown ids, ids of another project) gets a 4xx `{error}` and changes
 *   nothing in the database;
 * - hostile but valid text (control characters, path traversal, git transport tricks) in every string field,
 *   query parameter and path parameter is accepted or refused, never failed on, and runs no program.
 * Every answer is also checked: no 5xx, none slower than 5 s, no stack trace or SQL text in the body.
 */

/** Routes whose body is not a JSON object the route reads (their bad-body cases are only the unparsable ones). */
const BODYLESS = new Set([
  'POST /api/auth/logout',
  'POST /api/project/:project_id/tasks/:task_id/confirm',
  'POST /api/project/:project_id/tasks/:task_id/reject',
  'POST /api/project/:project_id/tasks/:task_id/rerun',
  'POST /api/project/:project_id/notifications/test',
  'POST /api/project/:project_id/integrations/aliases',
  'POST /api/project/:project_id/integrations/:id/aliases',
  'POST /api/project/:project_id/templates/:template_id/stop_all_tasks',
  'POST /api/project/:project_id/tasks/:task_id/stop',
  'POST /api/user/tokens',
  'POST /api/user/invites/:invite_id/accept',
  'POST /api/user/invites/:invite_id/decline',
  'POST /api/runners/registration-tokens',
  'POST /api/project/:project_id/runners/registration-tokens',
]);

/** Routes whose body is a map, where `{}` is a valid request for nothing. */
const EMPTY_BODY_OK = new Set(['POST /api/project/:project_id/views/positions']);

const SLOW_MS = 5000;
/** The walks send a few thousand requests each: a busy machine (load 10 on 2 cores) needs more than a minute. */
const WALK_TIMEOUT = 240_000;
const keyOf = (r: Route) => `${r.method} ${r.url}`;
const hasBody = (method: string) => method === 'POST' || method === 'PUT' || method === 'PATCH';

describe.each(testDialects())('API-wide robustness on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  let outsider: Client;
  let ids: Ids;
  let other: Ids;
  let routes: Route[];
  /** Failures of the current walk, reported together. */
  let problems: string[] = [];
  const marker = join(tmpdir(), `signalbox-git-trick-${randomBytes(6).toString('hex')}`);

  /** Sends one request and records a 5xx, a slow answer or a leak in its body. */
  async function send(
    client: Client,
    method: string,
    url: string,
    body?: unknown,
    what = `${method} ${url}`,
  ) {
    const started = performance.now();
    const res = await client.request(method as 'POST', url, body);
    const ms = performance.now() - started;
    const text = res.body.slice(0, 200);
    if (res.statusCode >= 500) problems.push(`${what}: ${res.statusCode} ${text}`);
    if (ms > SLOW_MS) problems.push(`${what}: took ${Math.round(ms)} ms`);
    const leak = LEAKS.find((re) => re.test(res.body));
    if (leak) problems.push(`${what}: body matches ${leak}: ${text}`);
    return res;
  }

  /** Records an answer that is not a 4xx `{error: string, code}` with a code the catalogue words. */
  function expect4xx(res: LightMyRequestResponse, what: string) {
    let error: unknown;
    let code: unknown;
    try {
      ({ error, code } = res.json());
    } catch {}
    if (res.statusCode < 400 || res.statusCode >= 500 || typeof error !== 'string' || !isErrorCode(code))
      problems.push(`${what}: wanted a 4xx {error, code}, got ${res.statusCode} ${res.body.slice(0, 200)}`);
  }

  /** Fails with every problem of the walk; the admin must still be signed in, or the walk proved nothing. */
  async function report() {
    const found = problems;
    problems = [];
    expect(found).toEqual([]);
    expect((await admin.get('/api/user')).statusCode, 'the walking session is still signed in').toBe(200);
  }

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true, can_create_project: true });
    outsider = await h.userClient();
    ids = await seedProject(h, admin, 'Main');
    other = await seedProject(h, admin, 'Other');
    // The WebSockets (live events, remote runners) have tests of their own.
    routes = apiRoutes(h).filter((r) => r.url !== '/api/ws' && r.url !== '/api/internal/runners/ws');
  });
  afterAll(async () => h?.close());

  it('covers the whole API', () => {
    expect(routes.length).toBeGreaterThan(80);
  });

  it('answers 401 to anonymous callers on every non-public route', async () => {
    for (const route of routes) {
      if (PUBLIC.has(keyOf(route))) continue;
      const body = hasBody(route.method) ? {} : undefined;
      const res = await send(h.anonymous(), route.method, fill(route.url, ids, admin.userId), body);
      expect(res.statusCode, keyOf(route)).toBe(401);
      expect(res.json(), keyOf(route)).toMatchObject({ error: 'Not signed in', code: 'not_signed_in' });
    }
    await report();
  });

  it('answers 403 to non-members on every project route and changes nothing', async () => {
    const before = await snapshot(h);
    for (const route of routes) {
      if (!route.url.startsWith('/api/project/:project_id')) continue;
      const body = hasBody(route.method) ? {} : undefined;
      const res = await send(outsider, route.method, fill(route.url, ids, admin.userId), body);
      expect(res.statusCode, keyOf(route)).toBe(403);
      // Refused as an outsider, or (routes only administrators may use) as no administrator.
      expect(['not_project_member', 'admin_only'], keyOf(route)).toContain(res.json().code);
    }
    await report();
    expect(await snapshot(h)).toEqual(before);
  });

  it(
    'refuses invalid input on every route with a 4xx and changes nothing',
    async () => {
      const before = await snapshot(h);
      for (const route of routes) {
        const key = keyOf(route);
        const url = fill(route.url, ids, admin.userId);
        const emptyBody = hasBody(route.method) ? {} : undefined;
        const check = async (target: string, body: unknown, what: string) =>
          expect4xx(await send(admin, route.method, target, body, what), what);
        // Bodies: DELETE and body-less routes only get the ones refused before any handler runs.
        if (route.method !== 'GET') {
          const readsBody = hasBody(route.method) && !BODYLESS.has(key);
          for (const c of invalidBodies(readsBody))
            if (!(c.label === 'missing fields' && EMPTY_BODY_OK.has(key)))
              await check(url, c.body, `${key} ${c.label}`);
        }
        // A NUL in every query parameter.
        await check(
          `${url}?${QUERY_KEYS.map((k) => `${k}=a%00b`).join('&')}`,
          emptyBody,
          `${key} NUL in the query`,
        );
        // Each path parameter: out of range, negative, fractional, non-numeric, NUL, traversal.
        for (const param of pathParams(route.url))
          for (const value of BAD_PATH_VALUES)
            await check(
              fill(route.url, ids, admin.userId, { param, value }),
              emptyBody,
              `${key} :${param}=${value.slice(0, 40)}`,
            );
        // The same route on an id that does not exist, and on ids of another project.
        if (/:(?!project_id\b)\w+/.test(route.url)) {
          const unknown = route.url.replace(/:(\w+)/g, (_m, p: string) =>
            p === 'project_id' ? String(ids.project_id) : '999999',
          );
          await check(unknown, {}, `${key} unknown id`);
          const crossed = fill(route.url, other, admin.userId).replace(
            `/project/${other.project_id}`,
            `/project/${ids.project_id}`,
          );
          if (route.url.startsWith('/api/project/:project_id/') && crossed !== url)
            await check(crossed, {}, `${key} id of another project`);
        }
      }
      await report();
      expect(await snapshot(h)).toEqual(before);
    },
    WALK_TIMEOUT,
  );

  // Last: what is accepted here is stored, so the walks above see the seeded data only.
  it(
    'answers hostile text in every field, query and path parameter without failing or running it',
    async () => {
      const hostile = hostileStrings(marker);
      const bodies = validBodies(ids, outsider, admin);
      // Counted across routes: a name made unique by `{n}` on a create is not taken again by the update after it.
      let n = 0;
      for (const route of routes) {
        const key = keyOf(route);
        const url = fill(route.url, ids, admin.userId);
        const emptyBody = hasBody(route.method) ? {} : undefined;
        const valid = bodies[key];
        if (valid) {
          const accepted = await send(admin, route.method, url, numbered(valid, n++));
          if (accepted.statusCode >= 400)
            problems.push(`${key}: the valid body was refused: ${accepted.body}`);
          // One field at a time, so the others are valid and the hostile value reaches the route's own code.
          for (const path of stringPaths(valid))
            for (const value of hostile)
              await send(admin, route.method, url, withValue(numbered(valid, n++), path, value));
          for (const field of Object.keys(valid))
            await send(admin, route.method, url, withValue(numbered(valid, n++), [field], undefined));
        } else if (hasBody(route.method) && !BODYLESS.has(key)) {
          for (const value of hostile)
            await send(admin, route.method, url, Object.fromEntries(FIELDS.map((f) => [f, value])));
        }
        for (const value of hostile) {
          // Query parameters on reads only: a write on real ids would do what it says.
          if (route.method === 'GET')
            await send(
              admin,
              'GET',
              `${url}?${QUERY_KEYS.map((k) => `${k}=${encodeHostile(value)}`).join('&')}`,
            );
          for (const param of pathParams(route.url)) {
            const bad = fill(route.url, ids, admin.userId, { param, value: encodeHostile(value) });
            // A hostile path parameter never names an object, so even a DELETE here removes nothing.
            expect4xx(await send(admin, route.method, bad, emptyBody), `${key} :${param}=${value}`);
          }
        }
      }
      await report();
      expect(existsSync(marker), 'a git transport trick ran a program').toBe(false);
    },
    WALK_TIMEOUT,
  );
});
