import { type TokenScope, tokenScopes } from '@signalbox/contracts';
import type { FastifyRequest, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRoutes } from '../../test/support/api-walk';
import { testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { type RouteScope, routeScope } from '../http/route-scopes';
import { checkTokenScope } from './token-limits';

/** Writes that change nothing and that any member may ask for, so a read token may too. */
const READ_WRITES = new Set([
  'POST /api/project/:project_id/schedules/validate',
  // The MCP endpoint opens to every token; each of its tools asks for its own scope (run to start or stop a task).
  'POST /api/mcp',
  'DELETE /api/mcp',
]);

const ID_OF_NOTHING = '999999';

/** A route's path with every parameter filled: the project's id for `:project_id`, `id` for the others. */
const pathOf = (url: string, projectId: string, id: string) =>
  url
    .replace(':project_id', projectId)
    .replace(/:[a-z_]+/g, id)
    .replace('*', 'x');

describe('the scope of a route', () => {
  it('comes from its config, its permission, or a project read; nothing else is open to a limited token', () => {
    expect(routeScope('GET', '/api/x', { tokenScope: 'run' })).toBe('run');
    expect(routeScope('POST', '/api/x', { admin: true })).toBe('admin');
    expect(routeScope('POST', '/api/project/:project_id/x', { permission: 'runProjectTasks' })).toBe('run');
    expect(routeScope('PUT', '/api/project/:project_id/x', { permission: 'manageProjectResources' })).toBe(
      'write',
    );
    expect(routeScope('GET', '/api/project/:project_id/x', {})).toBe('read');
    expect(routeScope('POST', '/api/project/:project_id/x', {})).toBeUndefined();
    expect(routeScope('GET', '/api/x', {})).toBeUndefined();
    expect(routeScope('GET', '/api/projectx', {})).toBeUndefined();
  });

  it('refuses a limited token on a route no rule maps, and lets sessions and full tokens through', () => {
    const request = (tokenLimits: FastifyRequest['tokenLimits']) =>
      ({
        method: 'POST',
        tokenLimits,
        routeOptions: { method: 'POST', url: '/api/new-thing', config: {} },
      }) as unknown as FastifyRequest;
    expect(() => checkTokenScope(request({ scopes: [...tokenScopes], projectIds: [1] }))).toThrow(
      expect.objectContaining({ statusCode: 403, code: 'token_needs_full_rights' }),
    );
    expect(() => checkTokenScope(request({ scopes: null, projectIds: null }))).not.toThrow();
    expect(() => checkTokenScope(request(null))).not.toThrow();
  });
});

describe.each(testDialects())('every route and API token scopes on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  let projectId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true, can_create_project: true });
    projectId = (await admin.post('/api/projects', { name: 'Walked' })).json().id;
  });
  afterAll(async () => h?.close());

  const routes = () => apiRoutes(h).filter((route) => !route.config?.public);
  const scopeOf = (route: ReturnType<typeof routes>[number]) =>
    routeScope(route.method, route.url, route.config);

  async function tokenOf(scopes: TokenScope[], projectIds: number[] | null = null) {
    const res = await admin.post('/api/user/tokens', { scopes, project_ids: projectIds });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().token as string;
  }
  const call = (token: string, method: string, url: string) =>
    h.app.inject({
      method: method as InjectOptions['method'],
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(method === 'GET' || method === 'DELETE' ? {} : { payload: {} }),
    });

  it('maps every registered route to a scope, and no change to read', () => {
    const all = routes();
    expect(all.length).toBeGreaterThan(100);
    const unmapped = all.filter((route) => scopeOf(route) === undefined).map((r) => `${r.method} ${r.url}`);
    expect(unmapped).toEqual([]);
    const writesAsReads = all
      .filter((r) => r.method !== 'GET' && scopeOf(r) === 'read')
      .map((r) => `${r.method} ${r.url}`)
      .filter((route) => !READ_WRITES.has(route));
    expect(writesAsReads).toEqual([]);
  });

  it('describes token scopes and projects in the API document, and the scope each operation needs', async () => {
    const doc = (await admin.get('/api/openapi.json')).json();
    const tokens = doc.paths['/api/user/tokens'];
    const body = JSON.stringify(tokens.post.requestBody);
    expect(body).toContain('"scopes"');
    expect(body).toContain('"project_ids"');
    const listed = tokens.get.responses['200'].content['application/json'].schema.items;
    expect(Object.keys(listed.properties)).toEqual(expect.arrayContaining(['scopes', 'project_ids']));
    expect(tokens.post.description).toContain('only a session or a token with full rights');
    expect(doc.paths['/api/project/{project_id}/tasks'].post.description).toContain('needs the `run` scope');
    expect(doc.paths['/api/project/{project_id}/templates'].get.description).toContain(
      'needs the `read` scope',
    );
    expect(doc.paths['/api/users'].get.description).toContain('needs the `admin` scope');
  });

  it('refuses each route to a token without its scope, before anything else is looked at', async () => {
    const without = new Map<RouteScope, string>();
    for (const scope of tokenScopes)
      without.set(scope, await tokenOf(tokenScopes.filter((s) => s !== scope)));
    // Every scope, but limited to a project: no full rights.
    without.set('account', await tokenOf([...tokenScopes], [projectId]));
    const wrong: string[] = [];
    for (const route of routes()) {
      const scope = scopeOf(route) as RouteScope;
      const res = await call(
        without.get(scope) as string,
        route.method,
        pathOf(route.url, String(projectId), ID_OF_NOTHING),
      );
      const expected =
        scope === 'account'
          ? { code: 'token_needs_full_rights' }
          : { code: 'missing_token_scope', params: { scope } };
      const body = res.json() as { code?: string; params?: unknown };
      const got = scope === 'account' ? { code: body.code } : { code: body.code, params: body.params };
      if (res.statusCode !== 403 || JSON.stringify(got) !== JSON.stringify(expected))
        wrong.push(`${route.method} ${route.url}: ${res.statusCode} ${res.body.slice(0, 120)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('lets each route through to a token with only its scope (on ids of nothing)', async () => {
    const only = new Map<TokenScope, string>();
    for (const scope of tokenScopes) only.set(scope, await tokenOf([scope]));
    const refused: string[] = [];
    for (const route of routes()) {
      const scope = scopeOf(route);
      if (scope === 'account' || scope === undefined) continue;
      const res = await call(
        only.get(scope) as string,
        route.method,
        pathOf(route.url, ID_OF_NOTHING, ID_OF_NOTHING),
      );
      const code = res.headers['content-type']?.includes('json')
        ? (res.json() as { code?: string }).code
        : '';
      if (code === 'missing_token_scope' || code === 'token_needs_full_rights' || res.statusCode >= 500)
        refused.push(`${route.method} ${route.url}: ${res.statusCode} ${res.body.slice(0, 120)}`);
    }
    expect(refused).toEqual([]);
  });
});
