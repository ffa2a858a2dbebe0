import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  type Caller,
  createTeam,
  expectMatrix,
  readCodes,
  type Team,
} from '../../../test/support/permission-matrix';
import { sha256 } from '../../lib/crypto';

/** Inviting needs manageProjectUsers: owners hold it, admins bypass. */
const inviteCodes = (ok: number): Record<Caller, number> => ({
  admin: ok,
  owner: ok,
  manager: 403,
  task_runner: 403,
  guest: 403,
  outsider: 403,
  anonymous: 401,
});

const DAY_MS = 24 * 60 * 60 * 1000;

describe.each(testDialects())('project invites on $name', (dialect) => {
  let h: Harness;
  let team: Team;
  const invites = (path = '') => `${team.base}/invites${path}`;

  /** A fresh user who is no member, and the invite of them the owner makes. */
  async function invited(role = 'task_runner') {
    const user = await h.userClient();
    const res = await team.owner.post(invites(), { user_id: user.userId, role });
    expect(res.statusCode, res.body).toBe(201);
    return { user, invite: res.json() as { id: number; token: string; status: string } };
  }

  const memberRole = async (userId: number) =>
    (
      await h.deps.db
        .selectFrom('project_user')
        .select('role')
        .where('project_id', '=', team.projectId)
        .where('user_id', '=', userId)
        .executeTakeFirst()
    )?.role;

  const inviteRow = (id: number) =>
    h.deps.db.selectFrom('project_invite').selectAll().where('id', '=', id).executeTakeFirst();

  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createTeam(h, 'Invites');
  });
  afterAll(async () => h?.close());

  it('lets owners and admins invite; other members and outsiders are refused', async () => {
    await expectMatrix(team, inviteCodes(201), async (c) => {
      const user = await h.userClient();
      return c.post(invites(), { user_id: user.userId, role: 'guest' });
    });
  });

  it('lets every member read the invites, one by one and as a list', async () => {
    const { invite } = await invited();
    await expectMatrix(team, readCodes(), (c) => c.get(invites()));
    await expectMatrix(team, readCodes(), (c) => c.get(invites(`/${invite.id}`)));
  });

  it('describes the invite with both users, and shows its token only when it is made', async () => {
    const user = await h.userClient();
    const before = Date.now();
    const res = await team.owner.post(invites(), { email: `${user.username}@example.test`, role: 'manager' });
    expect(res.statusCode, res.body).toBe(201);
    const made = res.json();
    expect(made).toMatchObject({
      project_id: team.projectId,
      user_id: user.userId,
      email: `${user.username}@example.test`,
      role: 'manager',
      status: 'pending',
      inviter_user_id: team.owner.userId,
      user: { id: user.userId, username: user.username, name: `Name ${user.username}` },
      inviter_user: { id: team.owner.userId, username: team.owner.username },
    });
    // Not accepted yet: no accepted_at at all, as Semaphore answers (not null).
    expect(made).not.toHaveProperty('accepted_at');
    // No flags of either user: a member who is no administrator reads this too.
    expect(Object.keys(made.user).sort()).toEqual(['email', 'id', 'name', 'username']);
    // The default expiry is a week.
    const expires = new Date(made.expires_at).getTime();
    expect(expires - before).toBeGreaterThanOrEqual(7 * DAY_MS - 1000);
    expect(expires - Date.now()).toBeLessThanOrEqual(7 * DAY_MS);
    expect(made.token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    // Stored as its hash only; never shown again.
    const row = await inviteRow(made.id);
    expect(row?.token_hash).toBe(sha256(made.token));
    expect(JSON.stringify(row)).not.toContain(made.token);
    const read = await team.guest.get(invites(`/${made.id}`));
    expect(read.json()).toEqual(Object.fromEntries(Object.entries(made).filter(([k]) => k !== 'token')));
    const list = await team.guest.get(invites());
    expect(list.body).not.toContain(made.token);
    expect((list.json() as { id: number }[]).map((i) => i.id)).toContain(made.id);
  });

  it('finds the user by id, e-mail address or username, and needs exactly one of them', async () => {
    const user = await h.userClient();
    const byUsername = await team.owner.post(invites(), {
      username: user.username.toUpperCase(),
      role: 'guest',
    });
    expect(byUsername.statusCode, byUsername.body).toBe(201);
    expect(byUsername.json().user_id).toBe(user.userId);
    const other = await h.userClient();
    const refused: [unknown, number, string][] = [
      [{ role: 'guest' }, 400, 'Name the user to invite'],
      [{ user_id: other.userId, email: `${other.username}@example.test`, role: 'guest' }, 400, 'not several'],
      [{ user_id: 999_999, role: 'guest' }, 400, 'User 999999 does not exist'],
      // A username is not an e-mail address (and the other way round); an address nobody has is invited as it
      // is (email-invites.test.ts), a username nobody has is not.
      [{ email: other.username, role: 'guest' }, 400, 'Email must be a valid e-mail address'],
      [{ username: `${other.username}@example.test`, role: 'guest' }, 400, 'No user has the username'],
      [{ user_id: other.userId }, 400, 'Role is required'],
      [{ user_id: other.userId, role: 'admin' }, 400, 'Role must be one of'],
      [{ user_id: other.userId, role: 'guest', expires_at: 'tomorrow' }, 400, 'Expires at must be a date'],
      [{ user_id: other.userId, role: 'guest', expires_at: '2001-01-01T00:00:00Z' }, 400, 'in the future'],
      [
        {
          user_id: other.userId,
          role: 'guest',
          expires_at: new Date(Date.now() + 400 * DAY_MS).toISOString(),
        },
        400,
        'within 365 days',
      ],
      // Already a member, or already invited.
      [{ user_id: team.guest.userId, role: 'owner' }, 409, 'already a member'],
      [{ user_id: user.userId, role: 'owner' }, 409, 'already has a pending invite'],
    ];
    for (const [body, status, message] of refused) {
      const res = await team.owner.post(invites(), body);
      expect([res.statusCode, res.json().error], JSON.stringify(body)).toEqual([
        status,
        expect.stringContaining(message),
      ]);
    }
    const later = new Date(Date.now() + 30 * DAY_MS).toISOString();
    const res = await team.owner.post(invites(), { user_id: other.userId, role: 'guest', expires_at: later });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().expires_at).toBe(later);
  });

  it('lets the invited user accept by id: they join with the invite role, once', async () => {
    const { user, invite } = await invited('manager');
    expect((await user.get(team.base)).statusCode).toBe(403);
    const mine = await user.get('/api/user/invites');
    expect(mine.statusCode).toBe(200);
    expect(mine.json()).toEqual([
      expect.objectContaining({ id: invite.id, project_name: 'Invites', role: 'manager', status: 'pending' }),
    ]);
    // Nobody else answers it, not even an owner or an administrator.
    for (const other of [team.owner, team.admin, team.outsider])
      expect((await other.post(`/api/user/invites/${invite.id}/accept`)).statusCode).toBe(404);
    const accepted = await user.post(`/api/user/invites/${invite.id}/accept`);
    expect(accepted.statusCode, accepted.body).toBe(204);
    expect(await memberRole(user.userId)).toBe('manager');
    expect((await user.get(team.base)).statusCode).toBe(200);
    const read = (await team.owner.get(invites(`/${invite.id}`))).json();
    expect(read.status).toBe('accepted');
    expect(Date.now() - new Date(read.accepted_at).getTime()).toBeLessThan(60_000);
    expect((await user.get('/api/user/invites')).json()).toEqual([]);
    const again = await user.post(`/api/user/invites/${invite.id}/accept`);
    expect([again.statusCode, again.json().error]).toEqual([400, 'This invite was already accepted']);
    const declineAfter = await user.post(`/api/user/invites/${invite.id}/decline`);
    expect(declineAfter.statusCode).toBe(400);
    expect(await memberRole(user.userId)).toBe('manager');
  });

  it('lets the invited user accept or decline with the token; another user cannot use it', async () => {
    const first = await invited('guest');
    const second = await invited('task_runner');
    const stranger = await h.userClient();
    const withToken = (c: Client, action: string, token: string) =>
      c.post(`/api/invites/${action}`, { token });
    expect((await withToken(stranger, 'accept', first.invite.token)).statusCode).toBe(403);
    expect((await withToken(second.user, 'accept', first.invite.token)).statusCode).toBe(403);
    expect((await withToken(first.user, 'accept', 'not-a-token')).statusCode).toBe(404);
    expect((await first.user.post('/api/invites/accept', {})).statusCode).toBe(400);
    expect(await memberRole(stranger.userId)).toBeUndefined();

    expect((await withToken(first.user, 'accept', first.invite.token)).statusCode).toBe(204);
    expect(await memberRole(first.user.userId)).toBe('guest');

    expect((await withToken(second.user, 'decline', second.invite.token)).statusCode).toBe(204);
    expect(await memberRole(second.user.userId)).toBeUndefined();
    const declined = (await team.owner.get(invites(`/${second.invite.id}`))).json();
    expect(declined.status).toBe('declined');
    expect(declined).not.toHaveProperty('accepted_at');
    const late = await withToken(second.user, 'accept', second.invite.token);
    expect([late.statusCode, late.json().error]).toEqual([400, 'This invite was already declined']);
    // A declined invite does not stop a new one.
    expect(
      (await team.owner.post(invites(), { user_id: second.user.userId, role: 'guest' })).statusCode,
    ).toBe(201);
  });

  it('reads an invite past its expiry as expired: it cannot be accepted, and the user may be invited again', async () => {
    const { user, invite } = await invited();
    await h.deps.db
      .updateTable('project_invite')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', invite.id)
      .execute();
    expect((await team.owner.get(invites(`/${invite.id}`))).json().status).toBe('expired');
    expect((await user.get('/api/user/invites')).json()).toEqual([]);
    const res = await user.post(`/api/user/invites/${invite.id}/accept`);
    expect([res.statusCode, res.json().error]).toEqual([400, 'This invite has expired; ask for a new one']);
    expect(await memberRole(user.userId)).toBeUndefined();
    expect((await team.owner.post(invites(), { user_id: user.userId, role: 'guest' })).statusCode).toBe(201);
  });

  it('lets owners and admins withdraw an invite, which then cannot be answered', async () => {
    await expectMatrix(team, inviteCodes(204), async (c) =>
      c.del(invites(`/${(await invited()).invite.id}`)),
    );
    const { user, invite } = await invited();
    expect((await team.owner.del(invites(`/${invite.id}`))).statusCode).toBe(204);
    expect((await team.owner.get(invites(`/${invite.id}`))).statusCode).toBe(404);
    expect((await user.post('/api/invites/accept', { token: invite.token })).statusCode).toBe(404);
    expect(await memberRole(user.userId)).toBeUndefined();
  });

  it('keeps invites within their project', async () => {
    const { invite } = await invited();
    const other = (await team.admin.post('/api/projects', { name: 'Elsewhere' })).json().id as number;
    expect((await team.admin.get(`/api/project/${other}/invites/${invite.id}`)).statusCode).toBe(404);
    expect((await team.admin.del(`/api/project/${other}/invites/${invite.id}`)).statusCode).toBe(404);
    expect((await team.admin.get(`/api/project/${other}/invites`)).json()).toEqual([]);
    expect(await inviteRow(invite.id)).toBeDefined();
  });

  it('sorts the list by created, status or role in both directions', async () => {
    const roleOrder = ['owner', 'manager', 'task_runner', 'guest'];
    const get = async (query: string) =>
      (await team.owner.get(invites(query))).json() as { id: number; role: string; status: string }[];
    const byRole = await get('?sort=role&order=asc');
    const ranks = byRole.map((i) => roleOrder.indexOf(i.role));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect((await get('?sort=role&order=desc')).map((i) => i.role)[0]).toBe('guest');
    const newestFirst = (await get('')).map((i) => i.id);
    expect(newestFirst).toEqual([...newestFirst].sort((a, b) => b - a));
    expect((await get('?sort=created&order=asc')).map((i) => i.id)).toEqual([...newestFirst].reverse());
    const byStatus = (await get('?sort=status&order=asc')).map((i) => i.status);
    expect(byStatus[0]).toBe('pending');
    expect((await team.owner.get(invites('?sort=name'))).statusCode).toBe(400);
  });

  it('records who invited whom and how the invite was answered in the project events', async () => {
    const { user, invite } = await invited('guest');
    await user.post(`/api/user/invites/${invite.id}/decline`);
    const events = (await team.owner.get(`${team.base}/events`)).json() as { description: string }[];
    const texts = events.map((e) => e.description);
    expect(texts).toContain(`User ${user.username} invited to the team as guest`);
    expect(texts).toContain(`User ${user.username} declined the invite`);
  });

  it('removes the invites of a deleted user and forgets a deleted inviter', async () => {
    const inviter = await h.userClient();
    await team.admin.post(`${team.base}/users`, { user_id: inviter.userId, role: 'owner' });
    const invitee = await h.userClient();
    const made = (await inviter.post(invites(), { user_id: invitee.userId, role: 'guest' })).json();
    const { user, invite } = await invited();
    expect((await team.admin.del(`/api/users/${inviter.userId}`)).statusCode).toBe(204);
    expect((await team.owner.get(invites(`/${made.id}`))).json()).toMatchObject({
      inviter_user_id: null,
      inviter_user: null,
      user_id: invitee.userId,
    });
    expect((await team.admin.del(`/api/users/${user.userId}`)).statusCode).toBe(204);
    expect(await inviteRow(invite.id)).toBeUndefined();
  });

  it('removes the invites of a deleted project', async () => {
    const project = (await team.admin.post('/api/projects', { name: 'Short-lived' })).json().id as number;
    const user = await h.userClient();
    const made = await team.admin.post(`/api/project/${project}/invites`, {
      user_id: user.userId,
      role: 'guest',
    });
    expect(made.statusCode).toBe(201);
    expect((await team.admin.del(`/api/project/${project}`)).statusCode).toBe(204);
    expect(await inviteRow(made.json().id)).toBeUndefined();
    expect((await user.post('/api/invites/accept', { token: made.json().token })).statusCode).toBe(404);
  });
});
