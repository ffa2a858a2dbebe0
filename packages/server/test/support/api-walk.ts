import type { LightMyRequestResponse } from 'fastify';
import type { Database } from '../../src/db/tables';
import { projectObjectTables } from './backup-fixture';
import type { Client, Harness } from './harness';
import { taskRow } from './task-fixtures';

/**
 * Helpers for tests that walk every registered route: the route list, a project seeded with one object of every
 * kind (so each route can be called on real ids), the route's URL filled with them, and a snapshot of the tables
 * a refused request must leave untouched.
 */

export type Route = { method: string; url: string };

/** Routes reachable without signing in. */
export const PUBLIC = new Set([
  'GET /api/ping',
  'GET /api/auth/login',
  'POST /api/auth/login',
  'POST /api/auth/logout',
  'GET /api/auth/oidc/:provider/login',
  'GET /api/auth/oidc/:provider/redirect',
  'GET /api/auth/oidc/:provider/redirect/*',
  'GET /api/integrations/:alias',
  'POST /api/integrations/:alias',
  // The API description and its reference page (http/openapi.ts).
  'GET /api/openapi.json',
  'GET /api/docs',
  'GET /api/docs/json',
  'GET /api/docs/yaml',
  'GET /api/docs/static/index.html',
  'GET /api/docs/static/swagger-initializer.js',
  'GET /api/docs/static/theme/signalbox-theme.css',
  'GET /api/docs/static/theme/signalbox-theme.js',
  'GET /api/docs/static/theme/favicon.svg',
  'GET /api/docs/static/*',
  'GET /api/docs/*',
  // Probes for load balancers and orchestrators (features/health).
  'GET /api/health/live',
  'GET /api/health/ready',
  // Open while SIGNALBOX_METRICS_TOKEN is unset, as in these tests (http/metrics.ts).
  'GET /api/metrics',
  // Remote runners: a registration token or the runner's own token, never a session (features/runner-link).
  'POST /api/internal/runners',
  'DELETE /api/internal/runners',
  'GET /api/internal/runners/ws',
]);

/** The /api routes to walk: every method but HEAD, each path once (not its trailing-slash twin). */
export const apiRoutes = (h: Harness): Harness['app']['routeList'] =>
  h.app.routeList.filter((r) => r.url.startsWith('/api/') && r.method !== 'HEAD' && !r.url.endsWith('/'));

const tables: (keyof Database)[] = [
  'user',
  'project',
  'project_user',
  ...projectObjectTables,
  'task',
  'integration',
  'integration_alias',
  'integration_matcher',
  'integration_extract_value',
  'event',
  'option',
];

/** Every row of the tables a request could change (sessions and tokens by id and state: reads touch sessions). */
export async function snapshot(h: Harness) {
  const out: Record<string, unknown[]> = {};
  for (const table of tables)
    out[table] = await h.deps.db.selectFrom(table).selectAll().orderBy(sortKey(table)).execute();
  out.session = await h.deps.db
    .selectFrom('session')
    .select(['id', 'user_id', 'expired'])
    .orderBy('id')
    .execute();
  out.api_token = await h.deps.db.selectFrom('api_token').select(['id', 'expired']).orderBy('id').execute();
  return out;
}

const sortKey = (table: keyof Database) => (table === 'option' ? 'key' : 'id') as 'id';

export type Ids = Record<string, number | string>;

/** An integration matcher on a request header, and a value extracted from one: valid bodies of their routes. */
export const headerMatcher = {
  name: 'm',
  match_type: 'header',
  body_data_type: 'string',
  key: 'x',
  method: 'equals',
  value: 'y',
};
export const headerValue = {
  name: 'v',
  value_source: 'header',
  body_data_type: 'string',
  key: 'x',
  variable: 'X',
};

/** What a seeded project's template carries beyond the defaults, and where its repository is. */
export type SeedOptions = { templateInView?: boolean; surveyVars?: unknown[]; gitUrl?: string };

/** A project with one object of every kind, created through the API as its owner. */
export async function seedProject(
  h: Harness,
  owner: Client,
  name: string,
  options: SeedOptions = {},
): Promise<Ids> {
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
      git_url: options.gitUrl ?? '/srv/repo',
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
      ...(options.templateInView ? { view_id: view.id } : {}),
      project_id: project.id,
      ...(options.surveyVars ? { survey_vars: options.surveyVars } : {}),
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
    owner.post(`${base}/integrations/${integ.id}/matchers`, { ...headerMatcher, integration_id: integ.id }),
  );
  const value = await ok(
    owner.post(`${base}/integrations/${integ.id}/values`, { ...headerValue, integration_id: integ.id }),
  );
  // A pending invite of another user, who is not a member.
  const invitee = await h.userClient();
  const invite = await ok(owner.post(`${base}/invites`, { user_id: invitee.userId, role: 'guest' }));
  const now = new Date().toISOString();
  const task = await h.deps.db
    .insertInto('task')
    .values(
      taskRow(project.id, tpl.id, {
        user_id: owner.userId,
        created: now,
        start: now,
        end: now,
      }),
    )
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
    invite_id: invite.id,
    task_id: taskId,
    template_id: tpl.id,
    user_id: owner.userId,
  };
}

/**
 * Fills a route's path parameters from the seeded ids (`:id` takes the id of the collection it follows);
 * `replace` puts a raw (already URL-encoded) value in place of one parameter.
 */
export function fill(url: string, ids: Ids, userId: number, replace?: { param: string; value: string }) {
  return url.replace(/:(\w+)/g, (_m, param: string, offset: number) => {
    if (param === replace?.param) return replace.value;
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
