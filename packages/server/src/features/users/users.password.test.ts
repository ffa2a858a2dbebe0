import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { signInLimits } from '../../access/sign-in-throttle';

describe.each(testDialects())('changing a password on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true });
  });
  afterAll(async () => h?.close());

  const signIn = (auth: string, password: string) =>
    h.anonymous().post('/api/auth/login', { auth, password });
  /** A second session of the user, as another browser would have. */
  async function otherSession(user: Client) {
    const res = await signIn(user.username, user.password);
    expect(res.statusCode).toBe(204);
    const cookie = String(res.headers['set-cookie']).split(';')[0]!;
    return () => h.anonymous().request('GET', '/api/user', undefined, { cookie });
  }
  async function apiToken(user: Client) {
    const token = (await user.post('/api/user/tokens', { name: 'ci' })).json().token as string;
    return () => h.anonymous().request('GET', '/api/user', undefined, { authorization: `Bearer ${token}` });
  }
  const passwordUrl = (user: Client) => `/api/users/${user.userId}/password`;
  const required = {
    error: 'Current password is required',
    fields: { current_password: 'Current password is required' },
  };
  const incorrect = {
    error: 'Current password is incorrect',
    fields: { current_password: 'Current password is incorrect' },
  };

  it('needs the current password from users changing their own (POST …/password and PUT)', async () => {
    const user = await h.userClient();
    const base = { name: 'Me', username: user.username, email: `${user.username}@example.test` };
    for (const [method, url, body] of [
      ['POST', passwordUrl(user), { password: 'stolen-1' }],
      ['POST', passwordUrl(user), { password: 'stolen-1', current_password: '' }],
      ['PUT', `/api/users/${user.userId}`, { ...base, password: 'stolen-1' }],
    ] as const) {
      const res = await user.request(method, url, body);
      expect(res.statusCode, `${method} ${JSON.stringify(body)}`).toBe(400);
      expect(res.json()).toMatchObject(required);
    }
    for (const [method, url, body] of [
      ['POST', passwordUrl(user), { password: 'stolen-1', current_password: 'a-guess' }],
      ['PUT', `/api/users/${user.userId}`, { ...base, password: 'stolen-1', current_password: 'a-guess' }],
    ] as const) {
      const res = await user.request(method, url, body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject(incorrect);
    }
    expect((await signIn(user.username, 'stolen-1')).statusCode).toBe(401);
    expect((await signIn(user.username, user.password)).statusCode).toBe(204);

    const ok = await user.put(`/api/users/${user.userId}`, {
      ...base,
      password: 'via-put-1',
      current_password: user.password,
    });
    expect(ok.statusCode).toBe(204);
    expect((await signIn(user.username, 'via-put-1')).statusCode).toBe(204);
  });

  it('needs it from an administrator changing their own, not when resetting someone else’s', async () => {
    const other = await h.userClient({ admin: true });
    const res = await other.post(passwordUrl(other), { password: 'admin-new-1' });
    expect(res.json()).toMatchObject(required);
    const target = await h.userClient();
    expect((await other.post(passwordUrl(target), { password: 'reset-by-admin' })).statusCode).toBe(204);
    expect((await signIn(target.username, 'reset-by-admin')).statusCode).toBe(204);
    expect(
      (await other.post(passwordUrl(other), { password: 'admin-new-1', current_password: other.password }))
        .statusCode,
    ).toBe(204);
  });

  it('counts a wrong current password as a failed sign-in: the pair then waits, 429 with Retry-After', async () => {
    const user = await h.userClient();
    for (let i = 0; i <= signInLimits.pairFreeFailures; i++) {
      const res = await user.post(passwordUrl(user), { password: 'new-pw', current_password: `guess-${i}` });
      expect(res.json()).toMatchObject(incorrect);
    }
    // Stretch the 1 s wait, as further failures would, so a slow machine does not outlast it.
    await h.deps.db
      .updateTable('sign_in_throttle')
      .set({ blocked_until: new Date(Date.now() + 10 * 60 * 1000).toISOString() })
      .where('user_id', '=', user.userId)
      .execute();
    // Even the right current password now waits, unread; so does signing in from the same address.
    const blocked = await user.post(passwordUrl(user), {
      password: 'new-pw',
      current_password: user.password,
    });
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await signIn(user.username, user.password)).statusCode).toBe(429);
    expect(
      h.logLines.some((l) => l.includes('sign-in locked') && l.includes(`"login":"${user.username}"`)),
    ).toBe(true);
    // From another address they sign in.
    const elsewhere = await h.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { auth: user.username, password: user.password },
      remoteAddress: '192.0.2.200',
    });
    expect(elsewhere.statusCode).toBe(204);
  });

  it('ends the other sessions and revokes API tokens by default, keeping the caller’s session', async () => {
    const user = await h.userClient();
    const second = await otherSession(user);
    const token = await apiToken(user);
    expect((await token()).statusCode).toBe(200);
    const res = await user.post(passwordUrl(user), {
      password: 'rotated-1',
      current_password: user.password,
    });
    expect(res.statusCode).toBe(204);
    expect((await user.get('/api/user')).statusCode).toBe(200);
    expect((await second()).statusCode).toBe(401);
    expect((await token()).statusCode).toBe(401);
    expect((await user.get('/api/user/tokens')).json()).toEqual([]);
  });

  it('keeps API tokens when asked (revoke_tokens: false), still ending the other sessions', async () => {
    const user = await h.userClient();
    const second = await otherSession(user);
    const token = await apiToken(user);
    const res = await user.post(passwordUrl(user), {
      password: 'rotated-2',
      current_password: user.password,
      revoke_tokens: false,
    });
    expect(res.statusCode).toBe(204);
    expect((await second()).statusCode).toBe(401);
    expect((await token()).statusCode).toBe(200);

    // The same through PUT.
    const base = { name: 'Me', username: user.username, email: `${user.username}@example.test` };
    const put = await user.put(`/api/users/${user.userId}`, {
      ...base,
      password: 'rotated-3',
      current_password: 'rotated-2',
      revoke_tokens: false,
    });
    expect(put.statusCode).toBe(204);
    expect((await token()).statusCode).toBe(200);
  });

  it('lets an administrator reset a password: every session of the user ends, tokens as chosen', async () => {
    const user = await h.userClient();
    const keep = await apiToken(user);
    expect(
      (await admin.post(passwordUrl(user), { password: 'reset-1', revoke_tokens: false })).statusCode,
    ).toBe(204);
    expect((await user.get('/api/user')).statusCode).toBe(401);
    expect((await keep()).statusCode).toBe(200);
    expect((await admin.post(passwordUrl(user), { password: 'reset-2' })).statusCode).toBe(204);
    expect((await keep()).statusCode).toBe(401);
    expect((await admin.get('/api/user')).statusCode).toBe(200);
  });

  it('names wrongly typed fields', async () => {
    const user = await h.userClient();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ password: 'x', current_password: 7 }, 'current_password', 'Current password must be a string'],
      [
        { password: 'x', current_password: 'p'.repeat(256) },
        'current_password',
        'Current password must be at most 255 characters',
      ],
      [
        { password: 'x', current_password: user.password, revoke_tokens: 'no' },
        'revoke_tokens',
        'Revoke tokens must be true or false',
      ],
    ];
    for (const [body, field, error] of cases) {
      const res = await user.post(passwordUrl(user), body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error, fields: { [field]: error } });
    }
    expect((await signIn(user.username, user.password)).statusCode).toBe(204);
  });
});
