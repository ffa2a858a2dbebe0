import type { ProjectRole } from '@signalbox/contracts';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  type Actor,
  createProjectActors,
  expectCodesByActor,
  memberCodes,
  ownerCodes,
  type ProjectActors,
} from '../../../test/support/project-actors';

describe.each(testDialects())('team on $name', (dialect) => {
  let h: Harness;
  let team: ProjectActors;

  const membership = (pid: number) =>
    h.deps.db
      .selectFrom('project_user')
      .select(['user_id', 'role'])
      .where('project_id', '=', pid)
      .orderBy('user_id')
      .execute();

  const addRow = async (pid: number, userId: number, role: ProjectRole) =>
    h.deps.db
      .insertInto('project_user')
      .values({ project_id: pid, user_id: userId, role, created: new Date().toISOString() })
      .execute();

  /** A fresh user, added to the team's project as a guest. */
  const newGuest = async () => {
    const user = await h.userClient();
    await addRow(team.projectId, user.userId, 'guest');
    return user;
  };

  /**
   * The owners-only matrix of a call on a user: each actor calls once, on a fresh user from `target`; `check` then
   * looks at that user, knowing whether the call was allowed (204).
   */
  const expectOwnerMatrixOn = async (
    target: () => Promise<Client>,
    call: (client: Client, target: Client) => Promise<LightMyRequestResponse>,
    check: (target: Client, allowed: boolean, actor: Actor) => Promise<void>,
  ) => {
    const expected = ownerCodes(204);
    let user: Client;
    await expectCodesByActor(
      h,
      team,
      expected,
      async (c) => {
        user = await target();
        return call(c, user);
      },
      (_res, actor) => check(user, expected[actor] === 204, actor),
    );
  };

  /** The description of the project's latest event about `objectId`. */
  const latestEventAbout = async (objectId: number) =>
    (
      await h.deps.db
        .selectFrom('event')
        .select('description')
        .where('project_id', '=', team.projectId)
        .where('object_id', '=', objectId)
        .orderBy('id', 'desc')
        .executeTakeFirst()
    )?.description;

  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createProjectActors(h);
  });
  afterAll(async () => h?.close());

  it('lists members with id, user_id, name, username, email and role, sorted by name by default', async () => {
    const res = await team.members.guest.get(`/api/project/${team.projectId}/users`);
    expect(res.statusCode).toBe(200);
    const list = res.json() as Array<Record<string, unknown>>;
    expect(list).toHaveLength(4);
    const owner = list.find((m) => m.role === 'owner')!;
    expect(owner).toEqual({
      id: team.members.owner.userId,
      user_id: team.members.owner.userId,
      name: `Name ${team.members.owner.username}`,
      username: team.members.owner.username,
      email: `${team.members.owner.username}@example.test`,
      role: 'owner',
    });
    // By name as people read it: case aside, and the numbers in names by their value ("user96" before "user100").
    const byName = new Intl.Collator('en', { sensitivity: 'base', numeric: true });
    const names = list.map((m) => String(m.name));
    expect(names).toEqual([...names].sort(byName.compare));
  });

  it('sorts by name, username, email and role in both directions', async () => {
    const pid = (await team.admin.post('/api/projects', { name: 'Sorting' })).json().id as number;
    const users: Client[] = [];
    for (const u of ['carol', 'Alice', 'bob']) users.push(await h.userClient({ username: `${u}_${pid}` }));
    await addRow(pid, users[0]!.userId, 'guest');
    await addRow(pid, users[1]!.userId, 'task_runner');
    await addRow(pid, users[2]!.userId, 'manager');
    const get = async (query: string) => {
      const res = await team.admin.get(`/api/project/${pid}/users${query}`);
      expect(res.statusCode).toBe(200);
      return (res.json() as Array<{ username: string }>).map((m) => /^[A-Za-z]+/.exec(m.username)![0]);
    };
    // The admin who created the project is its owner; its username starts with "user".
    expect(await get('')).toEqual(['Alice', 'bob', 'carol', 'user']);
    expect(await get('?sort=name&order=asc')).toEqual(['Alice', 'bob', 'carol', 'user']);
    expect(await get('?sort=name&order=desc')).toEqual(['user', 'carol', 'bob', 'Alice']);
    expect(await get('?sort=username&order=desc')).toEqual(['user', 'carol', 'bob', 'Alice']);
    expect(await get('?sort=email&order=asc')).toEqual(['Alice', 'bob', 'carol', 'user']);
    expect(await get('?sort=role&order=asc')).toEqual(['carol', 'bob', 'user', 'Alice']);
    expect(await get('?sort=role&order=desc')).toEqual(['Alice', 'user', 'bob', 'carol']);

    const bad = await team.admin.get(`/api/project/${pid}/users?sort=password`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('Sort must be one of name, username, email, role');
    const badOrder = await team.admin.get(`/api/project/${pid}/users?order=up`);
    expect(badOrder.statusCode).toBe(400);
    expect(badOrder.json().error).toBe('Order must be one of asc, desc');
  });

  it('GET users: permission matrix', async () => {
    await expectCodesByActor(h, team, memberCodes(200), (c) => c.get(`/api/project/${team.projectId}/users`));
    expect((await team.admin.get('/api/project/999999/users')).statusCode).toBe(404);
  });

  it('GET users/candidates: users outside the team, by name, id/name/username only; needs manageProjectUsers', async () => {
    const zed = await h.userClient();
    const res = await team.members.owner.get(`/api/project/${team.projectId}/users/candidates`);
    expect(res.statusCode).toBe(200);
    const list = res.json() as Array<Record<string, unknown>>;
    const ids = list.map((u) => u.id);
    for (const m of Object.values(team.members)) expect(ids).not.toContain(m.userId);
    expect(ids).toContain(team.outsider.userId);
    expect(ids).toContain(zed.userId);
    expect(list.find((u) => u.id === zed.userId)).toEqual({
      id: zed.userId,
      name: `Name ${zed.username}`,
      username: zed.username,
    });
    const names = list.map((u) => String(u.name));
    expect(names).toEqual(
      [...names].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base', numeric: true })),
    );
    await expectCodesByActor(h, team, ownerCodes(200), (c) =>
      c.get(`/api/project/${team.projectId}/users/candidates`),
    );
  });

  it('adds a member (204, then listed) and records an event', async () => {
    const newcomer = await h.userClient();
    const res = await team.members.owner.post(`/api/project/${team.projectId}/users`, {
      user_id: newcomer.userId,
      role: 'task_runner',
    });
    expect(res.statusCode).toBe(204);
    const listed = (await team.members.owner.get(`/api/project/${team.projectId}/users`)).json() as Array<
      Record<string, unknown>
    >;
    expect(listed.find((m) => m.user_id === newcomer.userId)).toMatchObject({
      id: newcomer.userId,
      role: 'task_runner',
    });
    expect((await membership(team.projectId)).find((m) => m.user_id === newcomer.userId)?.role).toBe(
      'task_runner',
    );
    expect((await newcomer.get(`/api/project/${team.projectId}`)).statusCode).toBe(200);
    const events = await h.deps.db
      .selectFrom('event')
      .selectAll()
      .where('project_id', '=', team.projectId)
      .where('object_type', '=', 'user')
      .where('object_id', '=', newcomer.userId)
      .execute();
    expect(events.map((e) => e.description)).toEqual([
      `User ${newcomer.username} added to the team as task_runner`,
    ]);
  });

  it('validates the new member: user and role required, role known, user exists, not yet a member', async () => {
    const before = await membership(team.projectId);
    const url = `/api/project/${team.projectId}/users`;
    const cases: Array<[unknown, number, string]> = [
      [{ role: 'guest' }, 400, 'User is required'],
      [{ user_id: null, role: 'guest' }, 400, 'User is required'],
      [{ user_id: team.outsider.userId }, 400, 'Role is required'],
      [{ user_id: team.outsider.userId, role: '' }, 400, 'Role is required'],
      [
        { user_id: team.outsider.userId, role: 'admin' },
        400,
        'Role must be one of owner, manager, task_runner, guest',
      ],
      [{ user_id: 'x', role: 'guest' }, 400, 'User must be a number'],
      [{ user_id: 1.5, role: 'guest' }, 400, 'User must be an integer'],
      [
        { user_id: team.outsider.userId, role: 7 },
        400,
        'Role must be one of owner, manager, task_runner, guest',
      ],
      [{ user_id: 987654, role: 'guest' }, 400, 'User 987654 does not exist'],
      [
        { user_id: team.members.guest.userId, role: 'guest' },
        409,
        `User ${team.members.guest.username} is already a member of this project`,
      ],
      [
        { user_id: team.outsider.userId, role: 'x'.repeat(1024 * 1024) },
        400,
        'Role must be one of owner, manager, task_runner, guest',
      ],
      [[], 400, 'Request body must be a JSON object'],
    ];
    for (const [body, status, error] of cases) {
      const res = await team.members.owner.post(url, body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(res.json().error).toBe(error);
    }
    const malformed = await team.members.owner.request('POST', url, '{"user_id": 3,');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ error: 'Request body is not valid JSON' });
    expect(await membership(team.projectId)).toEqual(before);
  });

  it('POST users: permission matrix', async () => {
    await expectOwnerMatrixOn(
      () => h.userClient(),
      (c, target) =>
        c.post(`/api/project/${team.projectId}/users`, { user_id: target.userId, role: 'guest' }),
      async (target, allowed, actor) => {
        const added = (await membership(team.projectId)).some((m) => m.user_id === target.userId);
        expect(added, actor).toBe(allowed);
      },
    );
  });

  it('changes a role (204), refuses unknown members and bad roles', async () => {
    const target = await h.userClient();
    await addRow(team.projectId, target.userId, 'guest');
    const url = `/api/project/${team.projectId}/users/${target.userId}`;
    const res = await team.members.owner.put(url, { role: 'manager' });
    expect(res.statusCode).toBe(204);
    expect((await membership(team.projectId)).find((m) => m.user_id === target.userId)?.role).toBe('manager');
    expect((await target.get(`/api/project/${team.projectId}/role`)).json()).toEqual({
      role: 'manager',
      permissions: 5,
    });
    expect(await latestEventAbout(target.userId)).toBe(
      `User ${target.username} role changed from guest to manager`,
    );

    expect((await team.members.owner.put(url, {})).json().error).toBe('Role is required');
    expect((await team.members.owner.put(url, { role: 'boss' })).statusCode).toBe(400);
    expect((await team.members.owner.request('PUT', url, '{bad')).statusCode).toBe(400);
    expect((await team.members.owner.put(url, { role: 'g'.repeat(1024 * 1024) })).statusCode).toBe(400);
    // A user who is not in this project (a member of another one) is not found here.
    const elsewhere = await h.userClient({ can_create_project: true });
    await elsewhere.post('/api/projects', { name: 'Elsewhere' });
    const notHere = await team.members.owner.put(`/api/project/${team.projectId}/users/${elsewhere.userId}`, {
      role: 'guest',
    });
    expect(notHere.statusCode).toBe(404);
    expect(notHere.json().error).toBe('Project member not found');
    expect(
      (await team.members.owner.put(`/api/project/${team.projectId}/users/abc`, { role: 'guest' }))
        .statusCode,
    ).toBe(400);
    expect((await membership(team.projectId)).find((m) => m.user_id === target.userId)?.role).toBe('manager');
  });

  it('PUT users/{id}: permission matrix', async () => {
    await expectOwnerMatrixOn(
      newGuest,
      (c, target) => c.put(`/api/project/${team.projectId}/users/${target.userId}`, { role: 'task_runner' }),
      async (target, allowed, actor) => {
        const role = (await membership(team.projectId)).find((m) => m.user_id === target.userId)?.role;
        expect(role, actor).toBe(allowed ? 'task_runner' : 'guest');
      },
    );
  });

  it('removes a member (204) and answers 404 for a non-member', async () => {
    const target = await h.userClient();
    await addRow(team.projectId, target.userId, 'task_runner');
    const url = `/api/project/${team.projectId}/users/${target.userId}`;
    expect((await team.members.owner.del(url)).statusCode).toBe(204);
    expect((await membership(team.projectId)).some((m) => m.user_id === target.userId)).toBe(false);
    expect((await target.get(`/api/project/${team.projectId}`)).statusCode).toBe(403);
    expect((await team.members.owner.del(url)).statusCode).toBe(404);
    expect(await latestEventAbout(target.userId)).toBe(`User ${target.username} removed from the team`);
  });

  it('DELETE users/{id}: permission matrix', async () => {
    await expectOwnerMatrixOn(
      newGuest,
      (c, target) => c.del(`/api/project/${team.projectId}/users/${target.userId}`),
      async (target, allowed, actor) => {
        const still = (await membership(team.projectId)).some((m) => m.user_id === target.userId);
        expect(still, actor).toBe(!allowed);
      },
    );
  });

  it('never removes or demotes the last owner; a second owner makes both possible', async () => {
    const owner = await h.userClient({ can_create_project: true });
    const pid = (await owner.post('/api/projects', { name: 'Owners' })).json().id as number;
    const base = `/api/project/${pid}/users`;
    const demote = await owner.put(`${base}/${owner.userId}`, { role: 'manager' });
    expect(demote.statusCode).toBe(400);
    expect(demote.json().error).toBe('A project must keep at least one owner');
    const remove = await team.admin.del(`${base}/${owner.userId}`);
    expect(remove.statusCode).toBe(400);
    expect(remove.json().error).toBe('A project must keep at least one owner');
    expect(await membership(pid)).toEqual([{ user_id: owner.userId, role: 'owner' }]);

    const second = await h.userClient();
    expect((await owner.post(base, { user_id: second.userId, role: 'owner' })).statusCode).toBe(204);
    expect((await second.put(`${base}/${owner.userId}`, { role: 'guest' })).statusCode).toBe(204);
    expect((await owner.put(`${base}/${owner.userId}`, { role: 'owner' })).statusCode).toBe(403);
    expect((await second.del(`${base}/${second.userId}`)).statusCode).toBe(400);
  });

  it('lets members leave with DELETE me; the owner cannot leave', async () => {
    const owner = await h.userClient({ can_create_project: true });
    const { projectId: pid, members: leaving } = await h.projectWithTeam(owner, 'Leaving');
    const expected: Record<Actor, number> = {
      owner: 400,
      admin: 400,
      manager: 204,
      task_runner: 204,
      guest: 204,
      'non-member': 403,
      anonymous: 401,
    };
    await expectCodesByActor(h, { ...team, members: leaving }, expected, (c) =>
      c.del(`/api/project/${pid}/me`),
    );
    expect((await owner.del(`/api/project/${pid}/me`)).json().error).toBe(
      'The owner cannot leave the project',
    );
    expect((await team.admin.del(`/api/project/${pid}/me`)).json().error).toBe(
      'You are not a member of this project',
    );
    expect(await membership(pid)).toEqual([{ user_id: owner.userId, role: 'owner' }]);
    const left = await h.deps.db
      .selectFrom('event')
      .select('description')
      .where('project_id', '=', pid)
      .where('description', 'like', '%left the project')
      .execute();
    expect(left).toHaveLength(3);
    expect((await leaving.guest.get(`/api/project/${pid}/users`)).statusCode).toBe(403);
  });
});
