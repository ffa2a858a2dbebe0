import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../db/tables';
import { testDialects } from './dialects';
import { type Client, createHarness, type Harness } from './harness';

/**
 * API-wide checks that walk every registered route (so a route added later is covered without new code):
 * anonymous callers get 401 on every non-public route, non-members 403 on every project route, and every
 * POST/PUT route answers bad input (malformed JSON, wrong types, missing fields, 1 MB strings, unknown ids,
 * ids of another project) with a 4xx `{error}` and changes nothing in the database.
 */

const PUBLIC = new Set([
  'GET /api/ping',
  'GET /api/auth/login',
  'POST /api/auth/login',
  'POST /api/auth/logout',
  'GET /api/auth/oidc/:provider/login',
  'GET /api/auth/oidc/:provider/redirect',
  'GET /api/auth/oidc/:provider/redirect/*',
  'GET /api/integrations/:alias',
  'POST /api/integrations/:alias',
]);

/** Routes whose body is not a JSON object the route reads (their bad-body cases are only malformed JSON). */
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
]);

const MB = 'x'.repeat(1024 * 1024);
const FIELDS = [
  'name',
  'title',
  'username',
  'email',
  'password',
  'auth',
  'git_url',
  'git_branch',
  'inventory',
  'json',
  'env',
  'playbook',
  'description',
  'cron_format',
  'message',
  'role',
  'key',
  'value',
  'variable',
  'type',
  'app',
  'arguments',
  'environment',
  'start_version',
  'alert_chat',
  'auth_header',
  'match_type',
  'body_data_type',
  'method',
  'value_source',
  'login_password',
  'ssh',
  'survey_vars',
];

const tables: (keyof Database)[] = [
  'user',
  'project',
  'project_user',
  'access_key',
  'repository',
  'inventory',
  'environment',
  'view',
  'template',
  'schedule',
  'task',
  'integration',
  'integration_alias',
  'integration_matcher',
  'integration_extract_value',
];

async function snapshot(h: Harness) {
  const out: Record<string, unknown[]> = {};
  for (const table of tables)
    out[table] = await h.deps.db.selectFrom(table).selectAll().orderBy('id').execute();
  return out;
}

function expect4xx(res: LightMyRequestResponse, what: string) {
  expect(res.statusCode, `${what}: ${res.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
  expect(res.statusCode, `${what}: ${res.body.slice(0, 200)}`).toBeLessThan(500);
  expect(res.json(), what).toHaveProperty('error');
  expect(typeof res.json().error, what).toBe('string');
}

type Ids = Record<string, number | string>;

/** A project with one object of every kind, created through the API as its owner. */
async function seedProject(h: Harness, owner: Client, name: string): Promise<Ids> {
  const ok = async (res: Promise<LightMyRequestResponse>) => {
    const r = await res;
    if (r.statusCode >= 300) throw new Error(`seed failed: ${r.statusCode} ${r.body}`);
    return r.statusCode === 204 ? {} : r.json();
  };
  const project = await ok(owner.post('/api/projects', { name }));
  const base = `/api/project/${project.id}`;
  const key = await ok(
    owner.post(`${base}/keys`, {
      name: 'k',
      type: 'login_password',
      project_id: project.id,
      login_password: { login: 'u', password: 'p4ss' },
    }),
  );
  const repo = await ok(
    owner.post(`${base}/repositories`, {
      name: 'r',
      git_url: '/srv/repo',
      git_branch: '',
      ssh_key_id: key.id,
      project_id: project.id,
    }),
  );
  const inv = await ok(
    owner.post(`${base}/inventory`, {
      name: 'i',
      type: 'static',
      inventory: 'localhost',
      ssh_key_id: key.id,
      project_id: project.id,
    }),
  );
  const env = await ok(
    owner.post(`${base}/environment`, { name: 'e', json: '{}', env: '{}', project_id: project.id }),
  );
  const view = await ok(owner.post(`${base}/views`, { title: 'v', position: 0, project_id: project.id }));
  const tpl = await ok(
    owner.post(`${base}/templates`, {
      name: 't',
      app: 'bash',
      playbook: 'run.sh',
      repository_id: repo.id,
      inventory_id: inv.id,
      environment_id: env.id,
      project_id: project.id,
    }),
  );
  const schedule = await ok(
    owner.post(`${base}/schedules`, {
      template_id: tpl.id,
      cron_format: '0 0 * * *',
      project_id: project.id,
    }),
  );
  const integ = await ok(
    owner.post(`${base}/integrations`, { name: 'in', template_id: tpl.id, project_id: project.id }),
  );
  const alias = await ok(owner.post(`${base}/integrations/${integ.id}/aliases`, {}));
  const matcher = await ok(
    owner.post(`${base}/integrations/${integ.id}/matchers`, {
      name: 'm',
      match_type: 'header',
      body_data_type: 'string',
      key: 'x',
      method: 'equals',
      value: 'y',
      integration_id: integ.id,
    }),
  );
  const value = await ok(
    owner.post(`${base}/integrations/${integ.id}/values`, {
      name: 'v',
      value_source: 'header',
      body_data_type: 'string',
      key: 'x',
      variable: 'X',
      integration_id: integ.id,
    }),
  );
  const now = new Date().toISOString();
  const task = await h.deps.db
    .insertInto('task')
    .values({
      project_id: project.id,
      template_id: tpl.id,
      status: 'success',
      message: '',
      user_id: owner.userId,
      created: now,
      start: now,
      end: now,
      playbook: '',
      environment: '{}',
      params: '{}',
      debug: 0,
      dry_run: 0,
      diff: 0,
    })
    .executeTakeFirst();
  const taskId = Number(
    task.insertId ??
      (await h.deps.db.selectFrom('task').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow()).id,
  );
  return {
    project_id: project.id,
    key: key.id,
    repositories: repo.id,
    inventory: inv.id,
    environment: env.id,
    views: view.id,
    templates: tpl.id,
    schedules: schedule.id,
    integrations: integ.id,
    alias_id: alias.id,
    matcher_id: matcher.id,
    value_id: value.id,
    task_id: taskId,
    template_id: tpl.id,
    user_id: owner.userId,
  };
}

/** Fills a route's path parameters from the seeded ids (`:id` takes the id of the collection it follows). */
function fill(url: string, ids: Ids, userId: number) {
  return url.replace(/:(\w+)/g, (_m, param: string, offset: number) => {
    if (param === 'id') {
      const collection = url
        .slice(0, offset - 1)
        .split('/')
        .pop()!;
      if (collection === 'users') return String(userId);
      if (collection === 'tokens') return 'no-such-token';
      return String(ids[collection === 'keys' ? 'key' : collection] ?? 999_999);
    }
    return String(ids[param] ?? 999_999);
  });
}

describe.each(testDialects())('API-wide robustness on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  let outsider: Client;
  let ids: Ids;
  let other: Ids;
  let routes: { method: string; url: string }[];

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true, can_create_project: true });
    outsider = await h.userClient();
    ids = await seedProject(h, admin, 'Main');
    other = await seedProject(h, admin, 'Other');
    routes = h.app.routeList.filter(
      (r) => r.url.startsWith('/api/') && r.method !== 'HEAD' && !r.url.endsWith('/'),
    );
  });
  afterAll(async () => h?.close());

  it('covers the whole API', () => {
    expect(routes.length).toBeGreaterThan(80);
  });

  it('answers 401 to anonymous callers on every non-public route', async () => {
    for (const route of routes) {
      const key = `${route.method} ${route.url}`;
      if (PUBLIC.has(key) || route.url === '/api/ws') continue;
      const res = await h
        .anonymous()
        .request(
          route.method as 'GET',
          fill(route.url, ids, admin.userId),
          route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
        );
      expect(res.statusCode, key).toBe(401);
      expect(res.json(), key).toEqual({ error: expect.any(String) });
    }
  });

  it('answers 403 to non-members on every project route and changes nothing', async () => {
    const before = await snapshot(h);
    for (const route of routes) {
      if (!route.url.startsWith('/api/project/:project_id')) continue;
      const res = await outsider.request(
        route.method as 'GET',
        fill(route.url, ids, admin.userId),
        route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
      );
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(403);
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('refuses bad input on every POST/PUT route with a 4xx and changes nothing', async () => {
    const before = await snapshot(h);
    const writes = routes.filter(
      (r) => (r.method === 'POST' || r.method === 'PUT') && !PUBLIC.has(`${r.method} ${r.url}`),
    );
    expect(writes.length).toBeGreaterThan(30);
    for (const route of writes) {
      const key = `${route.method} ${route.url}`;
      const url = fill(route.url, ids, admin.userId);
      const send = (body: unknown) => admin.request(route.method as 'POST', url, body);
      expect4xx(await send('{"name": "broken'), `${key} malformed JSON`);
      if (!BODYLESS.has(key)) {
        expect4xx(await send('[]'), `${key} array body`);
        expect4xx(await send('"text"'), `${key} string body`);
        expect4xx(
          await send(Object.fromEntries(FIELDS.map((f) => [f, { nested: true }]))),
          `${key} wrong types`,
        );
        expect4xx(await send(Object.fromEntries(FIELDS.map((f) => [f, MB]))), `${key} 1 MB strings`);
      }
      // The same route on an id that does not exist, and on ids of another project.
      if (/:(?!project_id\b)\w+/.test(route.url)) {
        const unknown = route.url.replace(/:(\w+)/g, (_m, p: string) =>
          p === 'project_id' ? String(ids.project_id) : '999999',
        );
        expect4xx(await admin.request(route.method as 'POST', unknown, {}), `${key} unknown id`);
        const crossed = fill(route.url, other, admin.userId).replace(
          `/project/${other.project_id}`,
          `/project/${ids.project_id}`,
        );
        if (route.url.startsWith('/api/project/:project_id/') && crossed !== url) {
          expect4xx(await admin.request(route.method as 'POST', crossed, {}), `${key} id of another project`);
        }
      }
    }
    expect(await snapshot(h)).toEqual(before);
  });
});
