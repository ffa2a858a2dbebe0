import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';

describe.each(testDialects())('auth on $name', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(async () => h?.close());

  it('answers ping without a session', async () => {
    const res = await h.anonymous().get('/api/ping');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('pong');
  });

  it('signs in by username or e-mail and sets an HttpOnly SameSite=Lax cookie', async () => {
    const alice = await h.userClient({ username: 'alice' });
    for (const auth of ['alice', 'ALICE', 'alice@example.test']) {
      const res = await h.anonymous().post('/api/auth/login', { auth, password: alice.password });
      expect(res.statusCode).toBe(204);
      const cookie = String(res.headers['set-cookie']);
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Lax/i);
    }
    const me = await alice.get('/api/user');
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ username: 'alice', admin: false });
    expect(me.json()).not.toHaveProperty('password');
  });

  it('refuses a wrong password with 401 "Incorrect login or password"', async () => {
    await h.userClient({ username: 'bob' });
    const res = await h.anonymous().post('/api/auth/login', { auth: 'bob', password: 'nope' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'Incorrect login or password' });
  });

  it('names the missing field', async () => {
    const res = await h.anonymous().post('/api/auth/login', { auth: 'bob' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('Password is required');
    const res2 = await h.anonymous().post('/api/auth/login', { password: 'x' });
    expect(res2.json().error).toBe('Username is required');
  });

  it('logs out and the cookie stops working', async () => {
    const dave = await h.userClient({ username: 'dave' });
    expect((await dave.get('/api/user')).statusCode).toBe(200);
    expect((await dave.post('/api/auth/logout')).statusCode).toBe(204);
    expect((await dave.get('/api/user')).statusCode).toBe(401);
  });

  it('expires a session idle for 7 days', async () => {
    const erin = await h.userClient({ username: 'erin' });
    await h.deps.db
      .updateTable('session')
      .set({ last_active: new Date(Date.now() - 8 * 24 * 3600 * 1000).toISOString() })
      .where('user_id', '=', erin.userId)
      .execute();
    expect((await erin.get('/api/user')).statusCode).toBe(401);
  });

  it('issues API tokens shown once, stored hashed, accepted as Bearer and revocable', async () => {
    const fay = await h.userClient({ username: 'fay' });
    const created = await fay.post('/api/user/tokens', { name: 'ci' });
    expect(created.statusCode).toBe(201);
    const { token, token_id: id } = created.json();
    expect(token).toMatch(/^[a-z0-9_-]{43}$/);
    const stored = await h.deps.db
      .selectFrom('api_token')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(stored.token_hash).not.toContain(token);
    const list = await fay.get('/api/user/tokens');
    expect(list.json()).toHaveLength(1);
    expect(JSON.stringify(list.json())).not.toContain(token);
    const bearer = await h
      .anonymous()
      .request('GET', '/api/user', undefined, { authorization: `Bearer ${token}` });
    expect(bearer.statusCode).toBe(200);
    expect(bearer.json().username).toBe('fay');
    expect((await fay.del(`/api/user/tokens/${id}`)).statusCode).toBe(204);
    const after = await h
      .anonymous()
      .request('GET', '/api/user', undefined, { authorization: `Bearer ${token}` });
    expect(after.statusCode).toBe(401);
  });

  // Semaphore's token is its own id, so its clients do `POST /api/user/tokens | jq -r .id` and send that.
  it("serves Semaphore's clients: the answer's id is the bearer, and delete takes the listed id or the token", async () => {
    const ivy = await h.userClient({ username: 'ivy' });
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const asToken = (token: string, method: 'GET' | 'DELETE', url: string) =>
      h.anonymous().request(method, url, undefined, bearer(token));

    // Created with the session, as a first script would; then everything else is done with `.id`.
    const first = (await ivy.post('/api/user/tokens')).json();
    expect(first.id).toBe(first.token);
    const me = await asToken(first.id, 'GET', '/api/user');
    expect(me.statusCode).toBe(200);
    expect(me.json().username).toBe('ivy');
    const second = (
      await h.anonymous().request('POST', '/api/user/tokens', { name: 'second' }, bearer(first.id))
    ).json();
    expect(second.id).toBe(second.token);
    expect(second.id).not.toBe(first.id);

    // The list shows stable identifiers, never a token.
    const listed = (await asToken(first.id, 'GET', '/api/user/tokens')).json() as { id: string }[];
    expect(listed.map((t) => t.id).sort()).toEqual([first.token_id, second.token_id].sort());
    expect(JSON.stringify(listed)).not.toContain(first.token);
    expect(JSON.stringify(listed)).not.toContain(second.token);
    expect((await asToken(first.id, 'GET', '/api/user/tokens')).json()).toEqual(listed);

    // Deleted by the id from the list: that token stops working, the other goes on.
    const byListedId = await asToken(first.id, 'DELETE', `/api/user/tokens/${second.token_id}`);
    expect(byListedId.statusCode).toBe(204);
    expect((await asToken(second.id, 'GET', '/api/user')).statusCode).toBe(401);
    expect((await asToken(first.id, 'GET', '/api/user')).statusCode).toBe(200);

    // Deleted by the token itself (what the peer's clients hold): it revokes itself.
    const byToken = await asToken(first.id, 'DELETE', `/api/user/tokens/${first.id}`);
    expect(byToken.statusCode).toBe(204);
    expect((await asToken(first.id, 'GET', '/api/user')).statusCode).toBe(401);
    expect((await ivy.get('/api/user/tokens')).json()).toEqual([]);

    // Another user's token cannot be deleted by either name; an unknown one is a 404.
    const other = await h.userClient({ username: 'jon' });
    const jons = (await other.post('/api/user/tokens', { name: 'jons' })).json();
    expect((await ivy.del(`/api/user/tokens/${jons.id}`)).statusCode).toBe(404);
    expect((await ivy.del(`/api/user/tokens/${jons.token_id}`)).statusCode).toBe(404);
    expect((await ivy.del('/api/user/tokens/no-such-token')).statusCode).toBe(404);
    expect((await asToken(jons.id, 'GET', '/api/user')).statusCode).toBe(200);
  });

  it('gives tokens an optional lifetime: expired ones stop working and stay listed as expired', async () => {
    const gus = await h.userClient({ username: 'gus' });
    const bearer = (token: string) =>
      h.anonymous().request('GET', '/api/user', undefined, { authorization: `Bearer ${token}` });
    const forever = (await gus.post('/api/user/tokens', { name: 'forever' })).json();
    expect(forever.expires).toBeNull();
    const before = Date.now();
    const res = await gus.post('/api/user/tokens', { name: 'week', expires_in_days: 7 });
    expect(res.statusCode).toBe(201);
    const week = res.json();
    const expires = Date.parse(week.expires);
    expect(expires - before).toBeGreaterThanOrEqual(7 * 24 * 3600 * 1000 - 1000);
    expect(expires - before).toBeLessThan(7 * 24 * 3600 * 1000 + 60_000);
    expect((await bearer(week.token)).statusCode).toBe(200);
    expect(
      (await gus.get('/api/user/tokens'))
        .json()
        .map((t: { name: string }) => t.name)
        .sort(),
    ).toEqual(['forever', 'week']);

    expect(
      (await gus.get('/api/user/tokens')).json().map((t: { expired: boolean }) => t.expired),
      'both work',
    ).toEqual([false, false]);

    // Its time passes: it no longer authenticates (though used a moment ago), and is listed as expired, as
    // Semaphore lists its expired tokens, until its owner deletes it.
    vi.useFakeTimers({ toFake: ['Date'], now: expires + 1000 });
    try {
      expect((await bearer(week.token)).statusCode).toBe(401);
      expect((await bearer(forever.token)).statusCode).toBe(200);
      // (A week later gus's session has ended too: the list is read with the lasting token.)
      const viaForever = (method: 'GET' | 'DELETE', url: string) =>
        h.anonymous().request(method, url, undefined, { authorization: `Bearer ${forever.token}` });
      const listed = (await viaForever('GET', '/api/user/tokens')).json();
      expect(listed).toHaveLength(2);
      expect(listed).toContainEqual(
        expect.objectContaining({ id: week.token_id, name: 'week', expired: true, expires: week.expires }),
      );
      expect(listed).toContainEqual(expect.objectContaining({ id: forever.token_id, expired: false }));
      expect((await viaForever('DELETE', `/api/user/tokens/${week.token_id}`)).statusCode).toBe(204);
      const after = (await viaForever('GET', '/api/user/tokens')).json();
      expect(after.map((t: { id: string }) => t.id)).toEqual([forever.token_id]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('names a bad token lifetime and creates nothing', async () => {
    const hal = await h.userClient({ username: 'hal' });
    const cases: [unknown, string][] = [
      [0, 'Expires in days must be 1 or greater'],
      [1.5, 'Expires in days must be an integer'],
      ['7', 'Expires in days must be a number'],
      [3651, 'Expires in days must be at most 3650'],
    ];
    for (const [value, error] of cases) {
      const res = await hal.post('/api/user/tokens', { name: 'x', expires_in_days: value });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error, fields: { expires_in_days: error } });
    }
    expect((await hal.get('/api/user/tokens')).json()).toEqual([]);
  });

  it('lists login options', async () => {
    const res = await h.anonymous().get('/api/auth/login');
    expect(res.json()).toEqual({ oidc_providers: [], login_with_password: true, auth_methods: {} });
  });
});
