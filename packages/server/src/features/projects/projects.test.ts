import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillProject, projectObjectTables } from '../../../test/support/backup-fixture';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  type Actor,
  actorClient,
  actors,
  createProjectActors,
  expectCodesByActor,
  memberCodes,
  ownerCodes,
  type ProjectActors,
} from '../../../test/support/project-actors';
import { taskRow } from '../../../test/support/task-fixtures';
import { insertReturningId, now } from '../../db/values';

/** Every table with a project_id column. */
const projectTables = [
  'project_user',
  ...projectObjectTables,
  'task',
  'event',
  'integration',
  'integration_alias',
] as const;

describe.each(testDialects())('projects on $name', (dialect) => {
  let h: Harness;
  let team: ProjectActors;

  const as = (actor: Actor): Client => actorClient(h, team, actor);

  const projectCount = async () =>
    Number(
      (
        await h.deps.db
          .selectFrom('project')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createProjectActors(h, 'Main project');
  });
  afterAll(async () => h?.close());

  it('creates a project owned by its creator, with the None key, the Empty environment and an event', async () => {
    const res = await team.creator.post('/api/projects', {
      name: '  Fresh  ',
      alert: true,
      alert_chat: 'chat-1',
      max_parallel_tasks: 4,
    });
    expect(res.statusCode).toBe(201);
    const project = res.json();
    expect(project).toEqual({
      id: expect.any(Number),
      created: expect.any(String),
      name: 'Fresh',
      alert: true,
      alert_chat: 'chat-1',
      max_parallel_tasks: 4,
      type: '',
      task_retention_days: 0,
      agent_runs_need_approval: true,
    });
    const db = h.deps.db;
    expect(
      await db
        .selectFrom('project_user')
        .select(['user_id', 'role'])
        .where('project_id', '=', project.id)
        .execute(),
    ).toEqual([{ user_id: team.creator.userId, role: 'owner' }]);
    expect(
      await db
        .selectFrom('access_key')
        .select(['name', 'type', 'secret', 'owner'])
        .where('project_id', '=', project.id)
        .execute(),
    ).toEqual([{ name: 'None', type: 'none', secret: null, owner: '' }]);
    expect(
      await db
        .selectFrom('environment')
        .select(['name', 'json', 'env'])
        .where('project_id', '=', project.id)
        .execute(),
    ).toEqual([{ name: 'Empty', json: '{}', env: '{}' }]);
    expect(
      await db.selectFrom('template').select('id').where('project_id', '=', project.id).execute(),
    ).toEqual([]);
    const event = await db
      .selectFrom('event')
      .selectAll()
      .where('project_id', '=', project.id)
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({
      user_id: team.creator.userId,
      object_type: 'project',
      description: 'Project Fresh created',
    });
    expect((await team.creator.get(`/api/project/${project.id}`)).json()).toEqual(project);
  });

  it('POST projects: admins and users with can_create_project only', async () => {
    const plain = await h.userClient();
    const cases: Array<[string, Client, number]> = [
      ['admin', team.admin, 201],
      ['can_create_project', team.creator, 201],
      ['project owner without can_create_project', team.members.guest, 403],
      ['plain user', plain, 403],
      ['anonymous', h.anonymous(), 401],
    ];
    for (const [label, client, status] of cases) {
      const before = await projectCount();
      const res = await client.post('/api/projects', { name: `By ${label}` });
      expect(res.statusCode, label).toBe(status);
      if (status === 403) expect(res.json().error).toBe('You are not allowed to create projects');
      expect(await projectCount(), label).toBe(before + (status === 201 ? 1 : 0));
    }
  });

  it('validates the project: name required, max parallel tasks a non-negative integer', async () => {
    const before = await projectCount();
    const cases: Array<[unknown, string, string]> = [
      [{}, 'Name is required', 'name'],
      [{ name: '' }, 'Name is required', 'name'],
      [{ name: '   ' }, 'Name is required', 'name'],
      [{ name: 5 }, 'Name must be a string', 'name'],
      [{ name: 'x'.repeat(1024 * 1024) }, 'Name must be at most 100 characters', 'name'],
      [{ name: 'P', max_parallel_tasks: 'two' }, 'Max parallel tasks must be a number', 'max_parallel_tasks'],
      [{ name: 'P', max_parallel_tasks: 1.5 }, 'Max parallel tasks must be an integer', 'max_parallel_tasks'],
      [
        { name: 'P', max_parallel_tasks: -1 },
        'Max parallel tasks must be 0 or greater',
        'max_parallel_tasks',
      ],
      [{ name: 'P', alert: 'yes' }, 'Alert must be true or false', 'alert'],
      [
        { name: 'P', alert_chat: 'c'.repeat(1024 * 1024) },
        'Alert chat must be at most 30 characters',
        'alert_chat',
      ],
    ];
    for (const [body, error, field] of cases) {
      for (const [method, url] of [
        ['POST', '/api/projects'],
        ['PUT', `/api/project/${team.projectId}`],
      ] as const) {
        const res = await team.creator.request(method, url, body);
        expect(res.statusCode, `${method} ${JSON.stringify(body).slice(0, 60)}`).toBe(400);
        expect(res.json().error).toBe(error);
        expect(res.json().fields[field]).toBe(error);
      }
    }
    for (const [method, url] of [
      ['POST', '/api/projects'],
      ['PUT', `/api/project/${team.projectId}`],
    ] as const) {
      const malformed = await team.creator.request(method, url, '{"name": "x"');
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json()).toMatchObject({ error: 'Request body is not valid JSON' });
      const notObject = await team.creator.request(method, url, []);
      expect(notObject.statusCode).toBe(400);
      expect(notObject.json().error).toBe('Request body must be a JSON object');
    }
    expect(await projectCount()).toBe(before);
    expect((await team.creator.get(`/api/project/${team.projectId}`)).json().name).toBe('Main project');
  });

  it('task_retention_days: set on create, read back, changed by PUT, kept when a PUT omits it', async () => {
    const res = await team.creator.post('/api/projects', { name: 'Retained', task_retention_days: 14 });
    expect(res.statusCode).toBe(201);
    const pid = res.json().id as number;
    expect(res.json().task_retention_days).toBe(14);
    const stored = async () =>
      (
        await h.deps.db
          .selectFrom('project')
          .select('task_retention_days')
          .where('id', '=', pid)
          .executeTakeFirstOrThrow()
      ).task_retention_days;
    expect(await stored()).toBe(14);
    expect((await team.creator.get(`/api/project/${pid}`)).json().task_retention_days).toBe(14);
    expect(
      (await team.creator.get('/api/projects')).json().find((p: { id: number }) => p.id === pid)
        .task_retention_days,
    ).toBe(14);

    expect(
      (await team.creator.put(`/api/project/${pid}`, { name: 'Retained', task_retention_days: 3 }))
        .statusCode,
    ).toBe(204);
    expect(await stored()).toBe(3);
    // A client that predates the field (Semaphore's) sends the rest of the project: retention stays.
    expect(
      (await team.creator.put(`/api/project/${pid}`, { name: 'Renamed', max_parallel_tasks: 1 })).statusCode,
    ).toBe(204);
    expect(await stored()).toBe(3);
    expect(
      (await team.creator.put(`/api/project/${pid}`, { name: 'Renamed', task_retention_days: null }))
        .statusCode,
    ).toBe(204);
    expect(await stored()).toBe(3);
    expect(
      (await team.creator.put(`/api/project/${pid}`, { name: 'Renamed', task_retention_days: 0 })).statusCode,
    ).toBe(204);
    expect(await stored()).toBe(0);
    expect(
      (await team.creator.post('/api/projects', { name: 'Default retention' })).json().task_retention_days,
    ).toBe(0);
  });

  it('task_retention_days must be a whole number of days from 0 to 36500; nothing changes otherwise', async () => {
    const pid = (await team.creator.post('/api/projects', { name: 'Keep 9', task_retention_days: 9 })).json()
      .id as number;
    const before = await projectCount();
    const cases: Array<[unknown, string]> = [
      [-1, 'Task retention days must be 0 or greater'],
      [1.5, 'Task retention days must be an integer'],
      ['30', 'Task retention days must be a number'],
      [true, 'Task retention days must be a number'],
      [36_501, 'Task retention days must be at most 36500'],
      [1e12, 'Task retention days must be at most 36500'],
    ];
    for (const [value, error] of cases) {
      for (const [method, url] of [
        ['POST', '/api/projects'],
        ['PUT', `/api/project/${pid}`],
      ] as const) {
        const res = await team.creator.request(method, url, { name: 'Changed', task_retention_days: value });
        expect(res.statusCode, `${method} ${String(value)}`).toBe(400);
        expect(res.json().error).toBe(error);
        expect(res.json().fields.task_retention_days).toBe(error);
      }
    }
    expect(await projectCount()).toBe(before);
    expect((await team.creator.get(`/api/project/${pid}`)).json()).toMatchObject({
      name: 'Keep 9',
      task_retention_days: 9,
    });
    expect(
      (await team.creator.put(`/api/project/${pid}`, { name: 'Keep 9', task_retention_days: 36_500 }))
        .statusCode,
    ).toBe(204);
  });

  it('lists the projects a user is a member of; admins see every project', async () => {
    const other = await h.userClient({ can_create_project: true });
    const mine = (await other.post('/api/projects', { name: 'Other only' })).json();
    const names = (client: Client) =>
      client.get('/api/projects').then((r) => (r.json() as Array<{ name: string }>).map((p) => p.name));
    expect(await names(other)).toEqual(['Other only']);
    expect(await names(team.members.guest)).toEqual(['Main project']);
    expect(await names(team.outsider)).toEqual([]);
    const all = await names(team.admin);
    expect(all).toEqual(expect.arrayContaining(['Main project', 'Other only', 'Fresh']));
    const res = await other.get('/api/projects');
    expect(res.statusCode).toBe(200);
    expect(res.json()[0]).toEqual({
      id: mine.id,
      created: mine.created,
      name: 'Other only',
      alert: false,
      alert_chat: null,
      max_parallel_tasks: 0,
      type: '',
      task_retention_days: 0,
      agent_runs_need_approval: true,
    });
    expect((await h.anonymous().get('/api/projects')).statusCode).toBe(401);
  });

  it('GET project: permission matrix, unknown and malformed ids', async () => {
    await expectCodesByActor(
      h,
      team,
      memberCodes(200),
      (c) => c.get(`/api/project/${team.projectId}`),
      (res) => {
        if (res.statusCode === 200)
          expect(res.json()).toMatchObject({ id: team.projectId, name: 'Main project' });
      },
    );
    expect((await team.admin.get('/api/project/999999')).statusCode).toBe(404);
    expect((await team.admin.get('/api/project/999999')).json().error).toBe('Project not found');
    expect((await team.admin.get('/api/project/abc')).statusCode).toBe(400);
    expect((await team.admin.get('/api/project/-1')).statusCode).toBe(400);
  });

  it('GET role: the role and its permission bits; an admin outside the team gets all bits', async () => {
    const expected: Record<Actor, [number, unknown]> = {
      admin: [200, { role: '', permissions: 15 }],
      owner: [200, { role: 'owner', permissions: 15 }],
      manager: [200, { role: 'manager', permissions: 5 }],
      task_runner: [200, { role: 'task_runner', permissions: 1 }],
      guest: [200, { role: 'guest', permissions: 0 }],
      'non-member': [403, undefined],
      anonymous: [401, undefined],
    };
    for (const actor of actors) {
      const res = await as(actor).get(`/api/project/${team.projectId}/role`);
      expect(res.statusCode, actor).toBe(expected[actor][0]);
      if (res.statusCode === 200) expect(res.json(), actor).toEqual(expected[actor][1]);
    }
    expect((await team.admin.get('/api/project/999999/role')).statusCode).toBe(404);
  });

  it('updates a project (204) and records an event', async () => {
    const pid = (await team.creator.post('/api/projects', { name: 'To update' })).json().id as number;
    const res = await team.creator.put(`/api/project/${pid}`, {
      id: pid,
      name: 'Updated',
      alert: true,
      alert_chat: '42',
      max_parallel_tasks: 2,
    });
    expect(res.statusCode).toBe(204);
    expect((await team.creator.get(`/api/project/${pid}`)).json()).toMatchObject({
      name: 'Updated',
      alert: true,
      alert_chat: '42',
      max_parallel_tasks: 2,
    });
    const event = await h.deps.db
      .selectFrom('event')
      .select('description')
      .where('project_id', '=', pid)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(event.description).toBe('Project Updated updated');
  });

  it('PUT project: permission matrix', async () => {
    const expected = ownerCodes(204);
    const name = (actor: Actor) => `Renamed by ${actor}`;
    await expectCodesByActor(
      h,
      team,
      expected,
      (c, actor) => c.put(`/api/project/${team.projectId}`, { name: name(actor) }),
      async (_res, actor) => {
        const stored = await h.deps.db
          .selectFrom('project')
          .select('name')
          .where('id', '=', team.projectId)
          .executeTakeFirstOrThrow();
        if (expected[actor] === 204) expect(stored.name).toBe(name(actor));
        else expect(stored.name).not.toBe(name(actor));
      },
    );
    await team.admin.put(`/api/project/${team.projectId}`, { name: 'Main project' });
    expect((await team.admin.put('/api/project/999999', { name: 'x' })).statusCode).toBe(404);
  });

  it('DELETE project: permission matrix', async () => {
    const owner = await h.userClient({ can_create_project: true });
    const { projectId: pid, members: doomed } = await h.projectWithTeam(owner, 'Doomed');
    const client = (actor: Actor) => actorClient(h, { ...team, members: doomed }, actor);
    const denied: Array<[Actor, number]> = [
      ['anonymous', 401],
      ['non-member', 403],
      ['guest', 403],
      ['task_runner', 403],
      ['manager', 403],
    ];
    for (const [actor, status] of denied) {
      expect((await client(actor).del(`/api/project/${pid}`)).statusCode, actor).toBe(status);
      expect((await owner.get(`/api/project/${pid}`)).statusCode, actor).toBe(200);
    }
    expect((await owner.del(`/api/project/${pid}`)).statusCode).toBe(204);
    expect((await owner.get(`/api/project/${pid}`)).statusCode).toBe(404);
    const second = (await owner.post('/api/projects', { name: 'Doomed too' })).json().id as number;
    expect((await team.admin.del(`/api/project/${second}`)).statusCode).toBe(204);
    expect((await team.admin.del(`/api/project/${second}`)).statusCode).toBe(404);
  });

  it('a role without the permission gets a 403 naming the missing permission by code', async () => {
    const cases: Array<[Actor, string, string, unknown, string]> = [
      ['guest', 'post', 'tasks', { template_id: 1 }, 'runProjectTasks'],
      ['task_runner', 'post', 'keys', { name: 'k', type: 'none' }, 'manageProjectResources'],
      ['manager', 'put', '', { name: 'x' }, 'updateProject'],
      ['manager', 'post', 'users', { user_id: 1, role: 'guest' }, 'manageProjectUsers'],
    ];
    for (const [actor, method, path, body, permission] of cases) {
      const url = `/api/project/${team.projectId}${path ? `/${path}` : ''}`;
      const client = as(actor);
      const res = method === 'put' ? await client.put(url, body) : await client.post(url, body);
      expect(res.statusCode, `${actor} ${path}`).toBe(403);
      // The English message stays as it was (Semaphore's clients show it); the code and params are added.
      expect(res.json()).toMatchObject({
        error: `You need the ${permission} permission in this project`,
        code: 'missing_permission',
        params: { permission },
      });
    }
  });

  it('DELETE removes every row of the project in every table and nothing of another project', async () => {
    const owner = await h.userClient({ can_create_project: true });
    const { projectId: pid } = await h.projectWithTeam(owner, 'Full');
    const keep = (await owner.post('/api/projects', { name: 'Kept' })).json().id as number;
    const db = h.deps.db;
    const snapshotOf = async (id: number) => {
      const out: Record<string, number> = {};
      for (const table of projectTables) {
        const row = await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('project_id', '=', id)
          .executeTakeFirstOrThrow();
        out[table] = Number(row.n);
      }
      return out;
    };
    for (const [id, prefix] of [
      [pid, `del-${dialect.name}`],
      [keep, `keep-${dialect.name}`],
    ] as const) {
      const ids = await fillProject(h.deps, id, prefix);
      const taskId = await insertReturningId(
        db,
        h.deps.dialect,
        'task',
        taskRow(id, ids.build, {
          user_id: owner.userId,
          start: now(),
          end: now(),
          version: '1.0.0',
          playbook: 'build.yml',
        }),
      );
      await db
        .insertInto('task_output')
        .values([
          { task_id: taskId, time: now(), output: 'line 1' },
          { task_id: taskId, time: now(), output: 'line 2' },
        ])
        .execute();
    }
    const before = await snapshotOf(pid);
    for (const table of projectTables) expect(before[table], table).toBeGreaterThan(0);
    const keptBefore = await snapshotOf(keep);
    const childCount = async (id: number) => {
      const integrations = db.selectFrom('integration').select('id').where('project_id', '=', id);
      const tasks = db.selectFrom('task').select('id').where('project_id', '=', id);
      const count = async (q: Promise<{ n: unknown }>) => Number((await q).n);
      return {
        matchers: await count(
          db
            .selectFrom('integration_matcher')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('integration_id', 'in', integrations)
            .executeTakeFirstOrThrow(),
        ),
        values: await count(
          db
            .selectFrom('integration_extract_value')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('integration_id', 'in', integrations)
            .executeTakeFirstOrThrow(),
        ),
        output: await count(
          db
            .selectFrom('task_output')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('task_id', 'in', tasks)
            .executeTakeFirstOrThrow(),
        ),
      };
    };
    const integrationIds = (
      await db.selectFrom('integration').select('id').where('project_id', '=', pid).execute()
    ).map((r) => r.id);
    const taskIds = (await db.selectFrom('task').select('id').where('project_id', '=', pid).execute()).map(
      (r) => r.id,
    );
    expect(await childCount(pid)).toEqual({ matchers: 1, values: 1, output: 2 });
    const keptChildren = await childCount(keep);

    expect((await owner.del(`/api/project/${pid}`)).statusCode).toBe(204);

    expect(await db.selectFrom('project').select('id').where('id', '=', pid).execute()).toEqual([]);
    const after = await snapshotOf(pid);
    for (const table of projectTables) expect(after[table], table).toBe(0);
    expect(
      await db
        .selectFrom('integration_matcher')
        .select('id')
        .where('integration_id', 'in', integrationIds)
        .execute(),
    ).toEqual([]);
    expect(
      await db
        .selectFrom('integration_extract_value')
        .select('id')
        .where('integration_id', 'in', integrationIds)
        .execute(),
    ).toEqual([]);
    expect(await db.selectFrom('task_output').select('id').where('task_id', 'in', taskIds).execute()).toEqual(
      [],
    );
    // The other project is untouched (its creation event included).
    expect(await snapshotOf(keep)).toEqual(keptBefore);
    expect(await childCount(keep)).toEqual(keptChildren);
    // The deletion itself is recorded outside the deleted project.
    const event = await db
      .selectFrom('event')
      .selectAll()
      .where('object_type', '=', 'project')
      .where('object_id', '=', pid)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({
      project_id: null,
      user_id: owner.userId,
      description: 'Project Full deleted',
    });
  });
});

describe.each(testDialects())('projects with non-admin project creation on $name', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect, { nonAdminCanCreateProject: true });
  });
  afterAll(async () => h?.close());

  it('lets any signed-in user create a project', async () => {
    const plain = await h.userClient();
    const res = await plain.post('/api/projects', { name: 'Anyone may' });
    expect(res.statusCode).toBe(201);
    expect((await plain.get(`/api/project/${res.json().id}/role`)).json()).toEqual({
      role: 'owner',
      permissions: 15,
    });
    expect((await h.anonymous().post('/api/projects', { name: 'Nobody' })).statusCode).toBe(401);
  });
});
