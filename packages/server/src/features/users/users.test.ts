import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { findUserById } from '../../access/principals.store';
import { createSession } from '../../access/sessions.store';
import { deleteUser, insertUser } from './users.service';

const newUser = (username: string, extra: Record<string, unknown> = {}) => ({
  name: `Name ${username}`,
  username,
  email: `${username}@example.test`,
  password: `pw-${username}`,
  ...extra,
});

describe.each(testDialects())('users on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true });
  });
  afterAll(async () => h?.close());

  const signIn = (auth: string, password: string) =>
    h.anonymous().post('/api/auth/login', { auth, password });
  const userCount = async () => (await h.deps.db.selectFrom('user').select('id').execute()).length;
  const userEvents = (objectId: number) =>
    h.deps.db
      .selectFrom('event')
      .selectAll()
      .where('object_type', '=', 'user')
      .where('object_id', '=', objectId)
      .orderBy('id')
      .execute();

  describe('create', () => {
    it('creates a user: 201 with the user, never the password', async () => {
      const res = await admin.post('/api/users', newUser('newbie', { alert: true }));
      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(body).toMatchObject({
        username: 'newbie',
        name: 'Name newbie',
        email: 'newbie@example.test',
        admin: false,
        alert: true,
        external: false,
        can_create_project: false,
      });
      expect(body.id).toBeGreaterThan(0);
      expect(body).not.toHaveProperty('password');
      expect(res.body).not.toContain('pw-newbie');
      expect((await signIn('newbie', 'pw-newbie')).statusCode).toBe(204);
      const events = await userEvents(body.id);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        project_id: null,
        user_id: admin.userId,
        description: 'User newbie created',
      });
    });

    it('names each missing field with the exact message', async () => {
      const before = await userCount();
      for (const [field, message] of [
        ['name', 'Name is required'],
        ['username', 'Username is required'],
        ['email', 'Email is required'],
      ] as const) {
        const body: Record<string, unknown> = newUser(`missing_${field}`);
        delete body[field];
        const res = await admin.post('/api/users', body);
        expect(res.statusCode).toBe(400);
        expect(res.json().error).toBe(message);
        expect(res.json().fields[field]).toBe(message);
        const blank = await admin.post('/api/users', { ...newUser(`blank_${field}`), [field]: '   ' });
        expect(blank.statusCode).toBe(400);
        expect(blank.json().error).toBe(message);
      }
      const typed = await admin.post('/api/users', newUser('typed_password', { password: 42 }));
      expect([typed.statusCode, typed.json().fields?.password]).toEqual([400, 'Password must be a string']);
      expect(await userCount()).toBe(before);
    });

    it('creates a user without a password, as Semaphore does: no password signs in until one is set', async () => {
      for (const [login, password] of [
        ['nopw_absent', undefined],
        ['nopw_null', null],
        ['nopw_empty', ''],
      ] as const) {
        const body: Record<string, unknown> = { ...newUser(login), password };
        if (password === undefined) delete body.password;
        const res = await admin.post('/api/users', body);
        expect(res.statusCode, res.body).toBe(201);
        expect(res.json()).toMatchObject({ username: login, external: false });
        const row = await h.deps.db
          .selectFrom('user')
          .select('password')
          .where('id', '=', res.json().id)
          .executeTakeFirstOrThrow();
        expect(row.password, 'no hash is stored').toBe('');
        // Whatever is tried: the empty password, a guess, its login; each is the same 401 as a wrong password.
        for (const tried of ['', 'x', login]) {
          const attempt = await signIn(login, tried);
          expect(attempt.statusCode, `sign in with ${JSON.stringify(tried)}`).toBe(tried ? 401 : 400);
        }
      }
      // Once an administrator sets one, it signs in.
      const id = (await admin.get('/api/users'))
        .json()
        .find((u: { username: string }) => u.username === 'nopw_null').id;
      expect((await admin.post(`/api/users/${id}/password`, { password: 'now-set-pw' })).statusCode).toBe(
        204,
      );
      expect((await signIn('nopw_null', 'now-set-pw')).statusCode).toBe(204);
    });

    it('answers 409 naming the taken username or e-mail', async () => {
      await admin.post('/api/users', newUser('taken'));
      const byName = await admin.post('/api/users', newUser('TAKEN', { email: 'other@example.test' }));
      expect(byName.statusCode).toBe(409);
      expect(byName.json().error).toBe('Username TAKEN is already taken');
      const byEmail = await admin.post('/api/users', newUser('fresh', { email: 'taken@example.test' }));
      expect(byEmail.statusCode).toBe(409);
      expect(byEmail.json().error).toBe('Email taken@example.test is already taken');
    });

    it('rejects malformed JSON, wrong types and 1 MB strings with 4xx and changes nothing', async () => {
      const before = await userCount();
      const bad = [
        await admin.request('POST', '/api/users', '{"name": "x",'),
        await admin.post('/api/users', newUser('typed', { admin: 'yes' })),
        await admin.post('/api/users', newUser('typed2', { name: 42 })),
        await admin.post('/api/users', newUser('bad email', { email: 'not-an-email' })),
        await admin.post('/api/users', newUser('huge', { name: 'x'.repeat(1024 * 1024) })),
        await admin.post('/api/users', newUser('x'.repeat(1024 * 1024))),
        await admin.post('/api/users', newUser('hugepw', { password: 'p'.repeat(1024 * 1024) })),
        await admin.request('POST', '/api/users', '[]'),
      ];
      for (const res of bad) {
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
        expect(res.statusCode).toBeLessThan(500);
        expect(typeof res.json().error).toBe('string');
      }
      expect(bad[0]!.json().error).toBe('Request body is not valid JSON');
      expect(bad[1]!.json().error).toBe('Admin must be true or false');
      expect(bad[3]!.json().error).toBe('Username must not contain spaces');
      expect(bad[2]!.json().error).toBe('Name must be a string');
      expect(await userCount()).toBe(before);
      const local = await admin.post('/api/users', newUser('localmail', { email: 'localmail@localhost' }));
      expect(local.statusCode).toBe(201);
      const noAt = await admin.post('/api/users', newUser('noat', { email: 'noat.example.test' }));
      expect(noAt.json().error).toBe('Email must be a valid e-mail address');
      expect(await userCount()).toBe(before + 1);
    });
  });

  describe('list and get', () => {
    it('lists every user sorted by name', async () => {
      await admin.post('/api/users', { ...newUser('zed'), name: 'Aaron Zed' });
      await admin.post('/api/users', { ...newUser('amy'), name: 'Zoe Amy' });
      const res = await admin.get('/api/users');
      expect(res.statusCode).toBe(200);
      const names = (res.json() as { name: string }[]).map((u) => u.name);
      // Collations differ between databases in punctuation and case; initials order the same everywhere.
      const initials = names.map((n) => n[0]!.toLowerCase());
      expect(initials).toEqual([...initials].sort());
      expect(names[0]).toBe('Aaron Zed');
      expect(names.at(-1)).toBe('Zoe Amy');
      expect(res.body).not.toMatch(/\$2[aby]\$/);
      for (const u of res.json()) expect(u).not.toHaveProperty('password');
    });

    it('gets one user (also with the trailing slash of the peer API); unknown id 404, bad id 400', async () => {
      const me = await h.userClient();
      const res = await admin.get(`/api/users/${me.userId}/`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: me.userId, username: me.username });
      expect(res.json()).not.toHaveProperty('password');
      const missing = await admin.get('/api/users/999999');
      expect(missing.statusCode).toBe(404);
      expect(missing.json().error).toBe('User not found');
      expect((await admin.get('/api/users/abc')).statusCode).toBe(400);
      expect((await admin.get('/api/users/-1')).statusCode).toBe(400);
    });
  });

  describe('permission matrix', () => {
    // admin, self, other non-admin, anonymous — for every route.
    it('GET /api/users and POST /api/users are admin-only', async () => {
      const user = await h.userClient();
      expect((await admin.get('/api/users')).statusCode).toBe(200);
      expect((await user.get('/api/users')).statusCode).toBe(403);
      expect((await h.anonymous().get('/api/users')).statusCode).toBe(401);
      const before = await userCount();
      const asUser = await user.post('/api/users', newUser('sneaky'));
      expect(asUser.statusCode).toBe(403);
      expect(asUser.json().error).toBe('Only administrators can do this');
      expect((await h.anonymous().post('/api/users', newUser('sneaky2'))).statusCode).toBe(401);
      expect(await userCount()).toBe(before);
    });

    it('GET /api/users/{id}: admin or self', async () => {
      const self = await h.userClient();
      const other = await h.userClient();
      const url = `/api/users/${self.userId}`;
      expect((await admin.get(url)).statusCode).toBe(200);
      expect((await self.get(url)).statusCode).toBe(200);
      expect((await other.get(url)).statusCode).toBe(403);
      expect((await other.get('/api/users/999999')).statusCode).toBe(403);
      expect((await h.anonymous().get(url)).statusCode).toBe(401);
    });

    it('PUT /api/users/{id}: admin or self', async () => {
      const self = await h.userClient();
      const other = await h.userClient();
      const url = `/api/users/${self.userId}`;
      const body = { name: 'Renamed', username: self.username, email: `${self.username}@example.test` };
      expect((await admin.put(url, body)).statusCode).toBe(204);
      expect((await self.put(url, { ...body, name: 'By self' })).statusCode).toBe(204);
      const res = await other.put(url, { ...body, name: 'By other' });
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('You can only edit your own account');
      // Permission is checked before the body: an invalid body from a stranger is still 403.
      expect((await other.put(url, {})).statusCode).toBe(403);
      expect((await h.anonymous().put(url, body)).statusCode).toBe(401);
      expect((await findUserById(h.deps.db, self.userId))!.name).toBe('By self');
    });

    it('DELETE /api/users/{id}: admin only', async () => {
      const self = await h.userClient();
      const other = await h.userClient();
      const url = `/api/users/${self.userId}`;
      expect((await self.del(url)).statusCode).toBe(403);
      expect((await other.del(url)).statusCode).toBe(403);
      expect((await h.anonymous().del(url)).statusCode).toBe(401);
      expect(await findUserById(h.deps.db, self.userId)).toBeDefined();
      expect((await admin.del(url)).statusCode).toBe(204);
      expect(await findUserById(h.deps.db, self.userId)).toBeUndefined();
    });

    it('POST /api/users/{id}/password: admin or self', async () => {
      const self = await h.userClient();
      const other = await h.userClient();
      const url = `/api/users/${self.userId}/password`;
      expect(
        (await self.post(url, { password: 'by-self', current_password: self.password })).statusCode,
      ).toBe(204);
      expect((await admin.post(url, { password: 'by-admin' })).statusCode).toBe(204);
      const res = await other.post(url, { password: 'by-other' });
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('You can only change your own password');
      expect((await h.anonymous().post(url, { password: 'anon' })).statusCode).toBe(401);
      expect((await signIn(self.username, 'by-admin')).statusCode).toBe(204);
      expect((await signIn(self.username, 'by-other')).statusCode).toBe(401);
    });
  });

  describe('update', () => {
    it('lets an admin change every field, including admin and can_create_project, and records an event', async () => {
      const target = await h.userClient();
      const res = await admin.put(`/api/users/${target.userId}`, {
        name: 'Promoted',
        username: `${target.username}_x`,
        email: `${target.username}_x@example.test`,
        admin: true,
        alert: true,
        can_create_project: true,
      });
      expect(res.statusCode).toBe(204);
      const row = (await findUserById(h.deps.db, target.userId))!;
      expect(row).toMatchObject({
        name: 'Promoted',
        username: `${target.username}_x`,
        admin: 1,
        alert: 1,
        can_create_project: 1,
      });
      const events = await userEvents(target.userId);
      expect(events.at(-1)).toMatchObject({
        project_id: null,
        user_id: admin.userId,
        description: `User ${target.username}_x updated`,
      });
      // Absent flags keep their stored values.
      await admin.put(`/api/users/${target.userId}`, {
        name: 'Kept',
        username: row.username,
        email: row.email,
      });
      expect(await findUserById(h.deps.db, target.userId)).toMatchObject({
        name: 'Kept',
        admin: 1,
        can_create_project: 1,
      });
    });

    it('lets a user change their own name, e-mail, alert and password, but not admin, can_create_project or username', async () => {
      const self = await h.userClient();
      const url = `/api/users/${self.userId}`;
      const email = `${self.username}@example.test`;
      const base = { name: 'Me', username: self.username, email };
      expect(
        (await self.put(url, { ...base, email: `new-${email}`, alert: true, admin: false })).statusCode,
      ).toBe(204);
      expect(await findUserById(h.deps.db, self.userId)).toMatchObject({
        name: 'Me',
        email: `new-${email}`,
        alert: 1,
      });

      const toAdmin = await self.put(url, { ...base, admin: true });
      expect(toAdmin.statusCode).toBe(403);
      expect(toAdmin.json().error).toBe('Only administrators can change the admin flag');
      const toCreator = await self.put(url, { ...base, can_create_project: true });
      expect(toCreator.statusCode).toBe(403);
      expect(toCreator.json().error).toBe('Only administrators can change who may create projects');
      const rename = await self.put(url, { ...base, username: `${self.username}_renamed` });
      expect(rename.statusCode).toBe(403);
      expect(rename.json().error).toBe('Only administrators can change a username');
      expect(await findUserById(h.deps.db, self.userId)).toMatchObject({
        admin: 0,
        can_create_project: 0,
        username: self.username,
      });

      expect(
        (await self.put(url, { ...base, password: 'new-own-password', current_password: self.password }))
          .statusCode,
      ).toBe(204);
      expect((await signIn(self.username, 'new-own-password')).statusCode).toBe(204);
      // An empty password field means "unchanged".
      expect((await self.put(url, { ...base, password: '' })).statusCode).toBe(204);
      expect((await signIn(self.username, 'new-own-password')).statusCode).toBe(204);
    });

    it('validates with the exact messages; password is not required', async () => {
      const target = await h.userClient();
      const url = `/api/users/${target.userId}`;
      const base = { name: 'N', username: target.username, email: `${target.username}@example.test` };
      for (const [field, message] of [
        ['name', 'Name is required'],
        ['username', 'Username is required'],
        ['email', 'Email is required'],
      ] as const) {
        const body: Record<string, unknown> = { ...base };
        delete body[field];
        const res = await admin.put(url, body);
        expect(res.statusCode).toBe(400);
        expect(res.json().error).toBe(message);
      }
      expect((await admin.put(url, base)).statusCode).toBe(204);
      const bad = [
        await admin.request('PUT', url, '{"name":'),
        await admin.put(url, { ...base, alert: 'on' }),
        await admin.put(url, { ...base, name: 'x'.repeat(1024 * 1024) }),
        await admin.put(url, { ...base, email: 'e'.repeat(1024 * 1024) }),
      ];
      for (const res of bad) {
        expect(res.statusCode).toBe(400);
        expect(typeof res.json().error).toBe('string');
      }
      expect((await findUserById(h.deps.db, target.userId))!.name).toBe('N');
      expect((await admin.put('/api/users/999999', base)).statusCode).toBe(404);
    });

    it('answers 409 when the new username or e-mail belongs to someone else', async () => {
      const a = await h.userClient();
      const b = await h.userClient();
      const url = `/api/users/${a.userId}`;
      const base = { name: 'A', username: a.username, email: `${a.username}@example.test` };
      const byName = await admin.put(url, { ...base, username: b.username });
      expect(byName.statusCode).toBe(409);
      expect(byName.json().error).toBe(`Username ${b.username} is already taken`);
      const byEmail = await a.put(url, { ...base, email: `${b.username}@example.test` });
      expect(byEmail.statusCode).toBe(409);
      expect(byEmail.json().error).toBe(`Email ${b.username}@example.test is already taken`);
      // Keeping one's own username and e-mail is not a conflict.
      expect((await a.put(url, base)).statusCode).toBe(204);
    });
  });

  describe('external users', () => {
    let ext: { id: number; username: string; email: string };
    let extClient: Client;
    beforeAll(async () => {
      const res = await admin.post('/api/users', newUser('ext', { external: true }));
      expect(res.statusCode).toBe(201);
      expect(res.json().external).toBe(true);
      ext = res.json();
      // External users cannot sign in with a password; give them a session as their provider would.
      const token = await createSession(h.deps.db, ext.id, '127.0.0.1', 'test');
      const anon = h.anonymous();
      const request: Client['request'] = (method, url, body, headers = {}) =>
        anon.request(method, url, body, { cookie: `signalbox=${token}`, ...headers });
      extClient = {
        ...anon,
        userId: ext.id,
        request,
        put: (url, body) => request('PUT', url, body ?? {}),
        post: (url, body) => request('POST', url, body ?? {}),
      };
    });

    it('cannot sign in with a password', async () => {
      expect((await signIn('ext', 'pw-ext')).statusCode).toBe(401);
    });

    it('keeps username, e-mail and password read-only (400 naming the field), name editable', async () => {
      const url = `/api/users/${ext.id}`;
      const base = { name: 'External person', username: 'ext', email: 'ext@example.test' };
      for (const client of [admin, extClient]) {
        const username = await client.put(url, { ...base, username: 'ext2' });
        expect(username.statusCode).toBe(400);
        expect(username.json().error).toBe('Username cannot be changed for external users');
        expect(username.json().fields).toHaveProperty('username');
        const email = await client.put(url, { ...base, email: 'ext2@example.test' });
        expect(email.statusCode).toBe(400);
        expect(email.json().error).toBe('Email cannot be changed for external users');
        const password = await client.put(url, { ...base, password: 'newpass' });
        expect(password.statusCode).toBe(400);
        expect(password.json().error).toBe('Password cannot be changed for external users');
        const viaPassword = await client.post(`${url}/password`, { password: 'newpass' });
        expect(viaPassword.statusCode).toBe(400);
        expect(viaPassword.json().error).toBe('Password cannot be changed for external users');
      }
      expect((await extClient.put(url, base)).statusCode).toBe(204);
      expect(await findUserById(h.deps.db, ext.id)).toMatchObject({
        name: 'External person',
        username: 'ext',
        email: 'ext@example.test',
        password: '',
      });
    });
  });

  describe('password', () => {
    it('requires a password with the exact message', async () => {
      const self = await h.userClient();
      const url = `/api/users/${self.userId}/password`;
      for (const body of [{}, { password: '' }]) {
        const res = await self.post(url, body);
        expect(res.statusCode).toBe(400);
        expect(res.json().error).toBe('Password is required');
      }
      expect((await self.post(url, { password: 7 })).statusCode).toBe(400);
      expect((await self.request('POST', url, '{"password"')).statusCode).toBe(400);
      expect((await self.post(url, { password: 'p'.repeat(1024 * 1024) })).statusCode).toBe(400);
      expect((await signIn(self.username, self.password)).statusCode).toBe(204);
      expect((await admin.post('/api/users/999999/password', { password: 'x' })).statusCode).toBe(404);
    });

    it('expires the other sessions of the user, keeping the caller’s own', async () => {
      const self = await h.userClient();
      const second = await signIn(self.username, self.password);
      const secondCookie = String(second.headers['set-cookie']).split(';')[0]!;
      const asSecond = (url: string) =>
        h.anonymous().request('GET', url, undefined, { cookie: secondCookie });
      expect((await asSecond('/api/user')).statusCode).toBe(200);

      expect(
        (
          await self.post(`/api/users/${self.userId}/password`, {
            password: 'rotated-1',
            current_password: self.password,
          })
        ).statusCode,
      ).toBe(204);
      expect((await self.get('/api/user')).statusCode).toBe(200);
      expect((await asSecond('/api/user')).statusCode).toBe(401);

      // An admin changing it signs the user out everywhere.
      expect(
        (await admin.post(`/api/users/${self.userId}/password`, { password: 'rotated-2' })).statusCode,
      ).toBe(204);
      expect((await self.get('/api/user')).statusCode).toBe(401);
      expect((await signIn(self.username, 'rotated-2')).statusCode).toBe(204);
      expect((await admin.get('/api/user')).statusCode).toBe(200);
    });
  });

  describe('delete', () => {
    it('nobody deletes themselves', async () => {
      const res = await admin.del(`/api/users/${admin.userId}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('You cannot delete your own account');
      expect(await findUserById(h.deps.db, admin.userId)).toBeDefined();
    });

    it('removes memberships, sessions and tokens, and records an event', async () => {
      const owner = await h.userClient({ can_create_project: true });
      const { projectId, members } = await h.projectWithTeam(owner, 'Deletions');
      const gone = members.manager;
      const token = (await gone.post('/api/user/tokens', { name: 't' })).json().token as string;
      expect(
        (await h.anonymous().request('GET', '/api/user', undefined, { authorization: `Bearer ${token}` }))
          .statusCode,
      ).toBe(200);

      expect((await admin.del(`/api/users/${gone.userId}`)).statusCode).toBe(204);
      const db = h.deps.db;
      expect(
        await db.selectFrom('project_user').selectAll().where('user_id', '=', gone.userId).execute(),
      ).toEqual([]);
      expect(await db.selectFrom('session').selectAll().where('user_id', '=', gone.userId).execute()).toEqual(
        [],
      );
      expect(
        await db.selectFrom('api_token').selectAll().where('user_id', '=', gone.userId).execute(),
      ).toEqual([]);
      expect((await gone.get('/api/user')).statusCode).toBe(401);
      expect(
        (await h.anonymous().request('GET', '/api/user', undefined, { authorization: `Bearer ${token}` }))
          .statusCode,
      ).toBe(401);
      expect((await owner.get(`/api/project/${projectId}/role`)).statusCode).toBe(200);
      const events = await userEvents(gone.userId);
      expect(events.at(-1)).toMatchObject({
        project_id: null,
        user_id: admin.userId,
        description: `User ${gone.username} deleted`,
      });
      expect((await admin.del(`/api/users/${gone.userId}`)).statusCode).toBe(404);
      expect((await admin.del('/api/users/abc')).statusCode).toBe(400);
    });

    it('refuses to delete the only owner of a project (400 listing it) until someone else owns it', async () => {
      const owner = await h.userClient({ can_create_project: true });
      const { projectId, members } = await h.projectWithTeam(owner, 'Solo owned');
      const res = await admin.del(`/api/users/${owner.userId}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe(
        `User ${owner.username} is the only owner of project Solo owned: make someone else owner or delete the project first`,
      );
      expect(res.json().projects).toEqual([{ id: projectId, name: 'Solo owned' }]);
      expect(await findUserById(h.deps.db, owner.userId)).toBeDefined();

      await h.deps.db
        .updateTable('project_user')
        .set({ role: 'owner' })
        .where('project_id', '=', projectId)
        .where('user_id', '=', members.manager.userId)
        .execute();
      expect((await admin.del(`/api/users/${owner.userId}`)).statusCode).toBe(204);
    });

    it('keeps at least one administrator', async () => {
      const h2 = await createHarness(dialect);
      try {
        const only = await h2.userClient({ admin: true });
        const res = await only.put(`/api/users/${only.userId}`, {
          name: 'x',
          username: only.username,
          email: `${only.username}@example.test`,
          admin: false,
        });
        expect(res.statusCode).toBe(400);
        expect(res.json().error).toBe('At least one administrator must remain');
        // The server console may delete anyone but the last administrator.
        await expect(deleteUser(h2.deps, { user: null }, only.userId)).rejects.toThrow(
          'Cannot delete the last administrator',
        );
      } finally {
        await h2.close();
      }
    });
  });

  describe('can_create_project', () => {
    it('lets a user with it create projects; one without gets 403', async () => {
      const creator = await h.userClient({ can_create_project: true });
      const plain = await h.userClient();
      const created = await creator.post('/api/projects', { name: 'Mine' });
      expect(created.statusCode).toBe(201);
      const denied = await plain.post('/api/projects', { name: 'Not mine' });
      expect(denied.statusCode).toBe(403);
      // Granting it through the users API takes effect at once.
      const row = (await findUserById(h.deps.db, plain.userId))!;
      await admin.put(`/api/users/${plain.userId}`, {
        name: row.name,
        username: row.username,
        email: row.email,
        can_create_project: true,
      });
      expect((await plain.post('/api/projects', { name: 'Now mine' })).statusCode).toBe(201);
    });
  });

  it('a user inserted by the service with a racing duplicate gets 409, not 500', async () => {
    await insertUser(h.deps.db, h.deps.dialect, {
      ...newUser('race'),
      admin: false,
      alert: false,
      external: false,
      can_create_project: false,
    });
    await expect(
      insertUser(h.deps.db, h.deps.dialect, {
        ...newUser('race'),
        admin: false,
        alert: false,
        external: false,
        can_create_project: false,
      }),
    ).rejects.toMatchObject({ statusCode: 409 });
  });
});
