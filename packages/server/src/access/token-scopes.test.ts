import type { TokenScope } from '@signalbox/contracts';
import type { InjectOptions } from 'fastify';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { gitRepo, insertRepository, insertTemplate, waitForStatus } from '../../test/support/task-fixtures';
import { ansibleBody, type TemplateFixtures, templateFixtures } from '../../test/support/template-fixtures';
import { tokenScopes } from '../db/migrations/0020-token-scopes';
import { RECENT_ACCESS_MS } from './recent-access';
import { tokenDigest } from './tokens.store';

type Limits = { scopes?: TokenScope[] | null; project_ids?: number[] | null };

describe.each(testDialects())('API tokens limited to scopes and projects on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  let owner: Client;
  let members: Record<'manager' | 'task_runner' | 'guest', Client>;
  let projectA: number;
  let projectB: number;
  let fx: TemplateFixtures;
  let template: number;
  let sleeper: number;
  const a = (path = '') => `/api/project/${projectA}${path}`;
  const b = (path = '') => `/api/project/${projectB}${path}`;

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true });
    owner = await h.userClient({ can_create_project: true });
    const team = await h.projectWithTeam(owner, 'Alpha');
    projectA = team.projectId;
    members = team.members;
    ({ projectId: projectB } = await h.projectWithTeam(owner, 'Beta'));
    fx = await templateFixtures(h, projectA);
    const made = await owner.post(a('/templates'), ansibleBody(fx));
    expect(made.statusCode, made.body).toBe(201);
    template = made.json().id;
    const repository = await insertRepository(h.deps, projectA, {
      git_url: gitRepo({ 'wait.sh': 'sleep 30\n' }),
    });
    sleeper = await insertTemplate(h.deps, projectA, {
      name: 'Sleeper',
      repository_id: repository,
      playbook: 'wait.sh',
      allow_parallel_tasks: 1,
    });
  });
  afterAll(async () => h?.close());

  /** A new token of `client` with these limits; the secret to send as its bearer. */
  async function tokenOf(client: Client, limits: Limits = {}): Promise<string> {
    const res = await client.post('/api/user/tokens', { name: 'limited', ...limits });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().token;
  }
  const as = (token: string, method: InjectOptions['method'], url: string, body?: unknown) =>
    h.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  const missingScope = (scope: TokenScope) => ({
    code: 'missing_token_scope',
    params: { scope },
    error: `This API token does not have the ${scope} scope`,
  });
  const changeTemplate = (token: string, name: string) =>
    as(token, 'PUT', a(`/templates/${template}`), { ...ansibleBody(fx, { name }), id: template });
  const startTask = (token: string) => as(token, 'POST', a('/tasks'), { template_id: sleeper });

  it('creates tokens with scopes and projects, shows them, and keeps old-style tokens at full rights', async () => {
    const res = await owner.post('/api/user/tokens', {
      name: 'ci',
      scopes: ['run', 'read', 'run'],
      project_ids: [projectA],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ name: 'ci', scopes: ['read', 'run'], project_ids: [projectA] });
    const plain = (await owner.post('/api/user/tokens', { name: 'plain' })).json();
    expect(plain).toMatchObject({ scopes: ['read', 'run', 'write', 'admin'], project_ids: null });
    // Every scope is the owner's full rights: stored as a token without limits.
    const every = await owner.post('/api/user/tokens', {
      name: 'every',
      scopes: ['admin', 'write', 'run', 'read'],
    });
    expect(every.json()).toMatchObject({ scopes: ['read', 'run', 'write', 'admin'], project_ids: null });
    const stored = await h.deps.db
      .selectFrom('api_token')
      .select(['name', 'scopes', 'project_ids'])
      .where('user_id', '=', owner.userId)
      .orderBy('name')
      .execute();
    expect(stored).toEqual([
      { name: 'ci', scopes: 'read,run', project_ids: `[${projectA}]` },
      { name: 'every', scopes: null, project_ids: null },
      { name: 'plain', scopes: null, project_ids: null },
    ]);
    const listed = (await owner.get('/api/user/tokens')).json() as { name: string }[];
    expect(listed.find((t) => t.name === 'ci')).toMatchObject({
      scopes: ['read', 'run'],
      project_ids: [projectA],
    });
    expect(listed.find((t) => t.name === 'plain')).toMatchObject({
      scopes: ['read', 'run', 'write', 'admin'],
    });
  });

  it('refuses scopes and projects the owner cannot give, naming them', async () => {
    const stranger = await h.userClient({ can_create_project: true });
    const { projectId: foreign } = await h.projectWithTeam(stranger, 'Foreign');
    const unknown = await owner.post('/api/user/tokens', { scopes: ['read', 'root'] });
    expect(unknown.json()).toMatchObject({
      code: 'not_one_of',
      error: 'Scopes must be one of read, run, write, admin',
    });
    const cases: [unknown, number, string][] = [
      [{ scopes: ['read', 'root'] }, 400, 'scopes'],
      [{ scopes: [] }, 400, 'scopes'],
      [{ scopes: 'read' }, 400, 'scopes'],
      [{ project_ids: [] }, 400, 'project_ids'],
      [{ project_ids: [String(projectA)] }, 400, 'project_ids'],
      [{ project_ids: [2 ** 40] }, 400, 'project_ids'],
      [{ project_ids: [-1] }, 400, 'project_ids'],
    ];
    for (const [body, status, field] of cases) {
      const res = await owner.post('/api/user/tokens', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      const keys = Object.keys(res.json().fields ?? {}).map((key) => key.split('.')[0]);
      expect(keys, JSON.stringify(body)).toContain(field);
    }
    for (const id of [foreign, 999_999]) {
      const res = await owner.post('/api/user/tokens', { project_ids: [projectA, id] });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'project_not_found',
        params: { id },
        fields: { project_ids: `Project ${id} does not exist` },
      });
    }
    // An administrator may limit a token to any project.
    expect((await admin.post('/api/user/tokens', { project_ids: [foreign] })).statusCode).toBe(201);
    expect(
      await h.deps.db.selectFrom('api_token').select('id').where('user_id', '=', owner.userId).execute(),
    ).toHaveLength(3);
  });

  it('lets a read token see projects, templates, tasks and logs but not start a task or change a template', async () => {
    const read = await tokenOf(owner, { scopes: ['read'] });
    for (const path of [
      '',
      '/templates',
      `/templates/${template}`,
      '/tasks',
      '/inventory',
      '/keys',
      '/users',
    ])
      expect((await as(read, 'GET', a(path))).statusCode, path).toBe(200);
    expect((await as(read, 'GET', '/api/projects')).statusCode).toBe(200);
    // Within a project the token's role info shows what its scopes leave of the owner's permissions.
    expect((await as(read, 'GET', a('/role'))).json()).toEqual({ role: 'owner', permissions: 0 });
    const start = await startTask(read);
    expect(start.statusCode).toBe(403);
    expect(start.json()).toMatchObject(missingScope('run'));
    const change = await changeTemplate(read, 'by read');
    expect(change.statusCode).toBe(403);
    expect(change.json()).toMatchObject(missingScope('write'));
    expect((await as(read, 'DELETE', a(`/templates/${template}`))).json()).toMatchObject(
      missingScope('write'),
    );
    expect((await as(read, 'POST', a('/views'), { title: 'v' })).json()).toMatchObject(missingScope('write'));
    expect((await as(read, 'PUT', a(), { name: 'Renamed' })).json()).toMatchObject(missingScope('write'));
    expect((await owner.get(a(`/templates/${template}`))).json().name).toBe('Deploy app');
  });

  it('lets a run token start and stop a task but not change a template, and nothing without read', async () => {
    const run = await tokenOf(members.task_runner, { scopes: ['read', 'run'] });
    const started = await startTask(run);
    expect(started.statusCode, started.body).toBe(201);
    const taskId = started.json().id as number;
    await waitForStatus(h.deps, taskId, ['running']);
    expect((await as(run, 'POST', a(`/tasks/${taskId}/stop`), { force: true })).statusCode).toBe(204);
    await waitForStatus(h.deps, taskId, ['stopped']);
    const change = await changeTemplate(run, 'by run');
    expect(change.statusCode).toBe(403);
    expect(change.json()).toMatchObject(missingScope('write'));
    // The run scope of a guest adds nothing: a guest may not run tasks.
    const guestRun = await tokenOf(members.guest, { scopes: ['read', 'run'] });
    expect((await startTask(guestRun)).json()).toMatchObject({ code: 'missing_permission' });
    const runOnly = await tokenOf(owner, { scopes: ['run'] });
    expect((await as(runOnly, 'GET', a('/templates'))).json()).toMatchObject(missingScope('read'));
  });

  it('lets a write token change project resources but not run tasks or manage users', async () => {
    const write = await tokenOf(members.manager, { scopes: ['read', 'write'] });
    expect((await changeTemplate(write, 'by write')).statusCode).toBe(204);
    expect((await owner.get(a(`/templates/${template}`))).json().name).toBe('by write');
    const view = await as(write, 'POST', a('/views'), { title: 'Written' });
    expect(view.statusCode, view.body).toBe(201);
    expect((await startTask(write)).json()).toMatchObject(missingScope('run'));
    // The write scope of a manager adds nothing: managers may not change the project's settings.
    expect((await as(write, 'PUT', a(), { name: 'Renamed' })).json()).toMatchObject({
      code: 'missing_permission',
    });
    const adminWrite = await tokenOf(admin, { scopes: ['read', 'run', 'write'] });
    for (const [method, url, body] of [
      ['GET', '/api/users', undefined],
      ['POST', '/api/users', { name: 'N', username: 'n1', email: 'n1@example.test', password: 'pw-123456' }],
      ['DELETE', `/api/users/${members.guest.userId}`, undefined],
      ['PUT', `/api/users/${members.guest.userId}`, { name: 'X', username: 'x', email: 'x@example.test' }],
      ['GET', '/api/runners', undefined],
    ] as const) {
      const res = await as(adminWrite, method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json(), `${method} ${url}`).toMatchObject(missingScope('admin'));
    }
    expect((await admin.get(`/api/users/${members.guest.userId}`)).json().username).toBe(
      members.guest.username,
    );
  });

  it('gives an admin-scoped token of a user who is no administrator no admin rights', async () => {
    const mine = await tokenOf(owner, { scopes: ['read', 'admin'] });
    const users = await as(mine, 'GET', '/api/users');
    expect(users.statusCode).toBe(403);
    expect(users.json()).toMatchObject({ code: 'admin_only' });
    const edit = await as(mine, 'PUT', `/api/users/${members.guest.userId}`, {
      name: 'Taken',
      username: members.guest.username,
      email: `${members.guest.username}@example.test`,
    });
    expect(edit.statusCode).toBe(403);
    const stranger = await h.userClient({ can_create_project: true });
    const { projectId: foreign } = await h.projectWithTeam(stranger, 'Elsewhere');
    expect((await as(mine, 'GET', `/api/project/${foreign}`)).statusCode).toBe(404);
    // An administrator's token reaches other projects and users only with the admin scope.
    const adminRead = await tokenOf(admin, { scopes: ['read'] });
    expect((await as(adminRead, 'GET', `/api/project/${foreign}`)).statusCode).toBe(404);
    expect((await as(adminRead, 'GET', '/api/projects')).json()).toEqual([]);
    expect((await as(adminRead, 'GET', '/api/user')).json()).toMatchObject({ admin: false });
    const adminFull = await tokenOf(admin, { scopes: ['read', 'admin'] });
    expect((await as(adminFull, 'GET', `/api/project/${foreign}`)).statusCode).toBe(200);
    expect((await as(adminFull, 'GET', '/api/users')).statusCode).toBe(200);
  });

  it('answers 404 for projects a project-limited token does not reach and lists only its projects', async () => {
    const limited = await tokenOf(owner, { project_ids: [projectA] });
    expect((await as(limited, 'GET', a('/templates'))).statusCode).toBe(200);
    for (const [method, url] of [
      ['GET', b()],
      ['GET', b('/templates')],
      ['PUT', b()],
      ['POST', b('/tasks')],
      ['DELETE', b()],
    ] as const) {
      const res = await as(limited, method, url, method === 'GET' || method === 'DELETE' ? undefined : {});
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found', params: { what: 'project' } });
    }
    const projects = (await as(limited, 'GET', '/api/projects')).json() as { id: number }[];
    expect(projects.map((p) => p.id)).toEqual([projectA]);
    expect(((await owner.get('/api/projects')).json() as { id: number }[]).map((p) => p.id).sort()).toEqual(
      [projectA, projectB].sort(),
    );
    // Events of other projects stay out of the lists that span projects.
    expect((await owner.post(b('/views'), { title: 'Beta view' })).statusCode).toBe(201);
    for (const path of ['/api/events', '/api/events/last']) {
      const events = (await as(limited, 'GET', path)).json() as { project_id: number | null }[];
      expect(events.length, path).toBeGreaterThan(0);
      expect(new Set(events.map((e) => e.project_id)), path).toEqual(new Set([projectA]));
    }
    const exported = await as(limited, 'GET', '/api/events/export?format=jsonl');
    expect(exported.statusCode, exported.body).toBe(200);
    expect(exported.body).not.toContain(`"project_id":${projectB}`);
    // An administrator's project-limited token too.
    const adminLimited = await tokenOf(admin, { project_ids: [projectB] });
    expect(
      ((await as(adminLimited, 'GET', '/api/projects')).json() as { id: number }[]).map((p) => p.id),
    ).toEqual([projectB]);
    expect((await as(adminLimited, 'GET', a())).statusCode).toBe(404);
  });

  it('takes rights from a token at once when its owner is demoted or removed', async () => {
    // Global admin rights: a token with the admin scope, its owner demoted by another administrator.
    const demoted = await h.userClient({ admin: true });
    const scoped = await tokenOf(demoted, { scopes: ['read', 'admin'] });
    const legacy = await tokenOf(demoted);
    // Each lookup is remembered (recent-access.ts): the demotion must reach a remembered one.
    expect((await as(scoped, 'GET', '/api/users')).statusCode).toBe(200);
    expect((await as(legacy, 'GET', '/api/users')).statusCode).toBe(200);
    const demotedAt = Date.now();
    const demote = await admin.put(`/api/users/${demoted.userId}`, {
      name: `Name ${demoted.username}`,
      username: demoted.username,
      email: `${demoted.username}@example.test`,
      admin: false,
    });
    expect(demote.statusCode, demote.body).toBe(204);
    expect((await as(scoped, 'GET', '/api/users')).json()).toMatchObject({ code: 'admin_only' });
    expect((await as(legacy, 'GET', '/api/users')).json()).toMatchObject({ code: 'admin_only' });
    expect(Date.now() - demotedAt).toBeLessThan(RECENT_ACCESS_MS);

    // A project role: a manager's write token, the manager made a guest, then removed from the project.
    const manager = await h.userClient();
    const added = await owner.post(a('/users'), { user_id: manager.userId, role: 'manager' });
    expect(added.statusCode, added.body).toBe(204);
    const write = await tokenOf(manager, { scopes: ['read', 'write'], project_ids: [projectA] });
    const full = await tokenOf(manager);
    expect((await as(write, 'POST', a('/views'), { title: 'Before' })).statusCode).toBe(201);
    expect((await as(full, 'POST', a('/views'), { title: 'Before too' })).statusCode).toBe(201);
    const changedAt = Date.now();
    expect((await owner.put(a(`/users/${manager.userId}`), { role: 'guest' })).statusCode).toBe(204);
    for (const token of [write, full]) {
      const res = await as(token, 'POST', a('/views'), { title: 'After' });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'missing_permission' });
      expect((await as(token, 'GET', a('/views'))).statusCode).toBe(200);
    }
    expect((await owner.del(a(`/users/${manager.userId}`))).statusCode).toBe(204);
    // A limited token answers 404 for the project; an old-style token keeps the peer's 403.
    expect((await as(write, 'GET', a('/views'))).json()).toMatchObject({ code: 'not_found' });
    expect((await as(write, 'GET', '/api/projects')).json()).toEqual([]);
    const old = await as(full, 'GET', a('/views'));
    expect(old.statusCode).toBe(403);
    expect(old.json()).toMatchObject({ code: 'not_project_member' });
    expect(Date.now() - changedAt).toBeLessThan(RECENT_ACCESS_MS * 2);
  });

  it('keeps tokens without limits at their owner full rights, and limited ones off their owner account', async () => {
    const full = await tokenOf(owner);
    expect((await changeTemplate(full, 'by full')).statusCode).toBe(204);
    const started = await startTask(full);
    expect(started.statusCode, started.body).toBe(201);
    expect((await as(full, 'POST', a(`/tasks/${started.json().id}/stop`), { force: true })).statusCode).toBe(
      204,
    );
    // A token stored before the migration that added limits: the table as it was, then migrated.
    const old = 'old-style-token-secret';
    const migration = tokenScopes();
    const db = h.deps.db as unknown as Kysely<unknown>;
    await migration.down(db);
    await sql`insert into api_token (id, token_hash, name, user_id, created, expired, expires)
      values ('oldstyle', ${tokenDigest(old)}, 'old', ${owner.userId}, ${new Date().toISOString()}, 0, null)`.execute(
      db,
    );
    await migration.up(db);
    expect((await changeTemplate(old, 'by old')).statusCode).toBe(204);
    expect((await as(old, 'GET', b())).statusCode).toBe(200);
    const minted = await as(old, 'POST', '/api/user/tokens', { name: 'from a token' });
    expect(minted.statusCode).toBe(201);
    expect(minted.json()).toMatchObject({ scopes: ['read', 'run', 'write', 'admin'], project_ids: null });

    // A limited token lists its owner's tokens but makes, or revokes, none (it would make a broader one).
    const limited = await tokenOf(owner, {
      scopes: ['read', 'run', 'write', 'admin'],
      project_ids: [projectA],
    });
    expect((await as(limited, 'GET', '/api/user/tokens')).statusCode).toBe(200);
    for (const [method, url] of [
      ['POST', '/api/user/tokens'],
      ['DELETE', `/api/user/tokens/${minted.json().token_id}`],
      ['POST', `/api/users/${owner.userId}/2fas/totp`],
    ] as const) {
      const res = await as(limited, method, url, method === 'POST' ? {} : undefined);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json()).toMatchObject({
        code: 'token_needs_full_rights',
        error: 'Only a session or an API token with full rights can do this',
      });
    }
    // Session cookies are not limited.
    expect((await owner.get(b('/templates'))).statusCode).toBe(200);
  });
});
