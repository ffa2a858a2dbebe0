import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { RECENT_ACCESS_MS, RecentAccess } from './recent-access';
import { tokenDigest } from './tokens.store';

describe('recent access, alone', () => {
  it('remembers a lookup for RECENT_ACCESS_MS, and nothing after forget()', () => {
    let now = 5_000_000;
    const recent = new RecentAccess<string, string>(() => now);
    recent.rememberToken('digest', 'alice');
    recent.rememberProject(1, 7, 'project 1 as owner');
    now += RECENT_ACCESS_MS - 1;
    expect([recent.token('digest'), recent.project(1, 7), recent.project(1, 8)]).toEqual([
      'alice',
      'project 1 as owner',
      undefined,
    ]);
    now += 1;
    expect([recent.token('digest'), recent.project(1, 7)]).toEqual([undefined, undefined]);
    recent.rememberToken('digest', 'alice');
    recent.forget();
    expect(recent.token('digest')).toBeUndefined();
  });

  it('one read answers every caller that asks while it runs, and is remembered', async () => {
    const recent = new RecentAccess<string, string>(() => 0);
    let reads = 0;
    let finish!: (owner: string) => void;
    const read = () => {
      reads += 1;
      return new Promise<string | undefined>((resolve) => {
        finish = resolve;
      });
    };
    const asked = [
      recent.tokenThrough('d', read),
      recent.tokenThrough('d', read),
      recent.tokenThrough('d', read),
    ];
    expect(reads).toBe(1);
    finish('alice');
    expect(await Promise.all(asked)).toEqual(['alice', 'alice', 'alice']);
    expect(await recent.tokenThrough('d', read)).toBe('alice');
    expect(reads).toBe(1);
    // Another key is another read.
    const other = recent.projectThrough(1, 7, read);
    finish('project 1');
    expect(await other).toBe('project 1');
    expect(reads).toBe(2);
  });

  it('a caller after forget() waits for a read of its own, and the older read is not remembered', async () => {
    const recent = new RecentAccess<string, string>(() => 0);
    const finishers: ((owner: string) => void)[] = [];
    const read = () =>
      new Promise<string | undefined>((resolve) => {
        finishers.push(resolve);
      });
    const before = recent.tokenThrough('d', read);
    recent.forget(); // say, the token was revoked while the first read ran
    const after = recent.tokenThrough('d', read);
    expect(finishers).toHaveLength(2);
    finishers[0]!('alice as she was');
    expect(await before).toBe('alice as she was');
    expect(recent.token('d')).toBeUndefined();
    finishers[1]!('alice now');
    expect(await after).toBe('alice now');
    expect(recent.token('d')).toBe('alice now');
  });

  it('a failed read fails its waiters, and the next caller reads again', async () => {
    const recent = new RecentAccess<string, string>(() => 0);
    let reads = 0;
    const failing = async (): Promise<string | undefined> => {
      reads += 1;
      throw new Error('connection lost');
    };
    const asked = [recent.tokenThrough('d', failing), recent.tokenThrough('d', failing)];
    for (const one of asked) await expect(one).rejects.toThrow('connection lost');
    expect(reads).toBe(1);
    expect(await recent.tokenThrough('d', async () => 'alice')).toBe('alice');
  });

  it('remembers a session only when `keep` accepts it, but shares the read either way', async () => {
    const recent = new RecentAccess<string, string, { user: string | null }>(() => 0);
    let reads = 0;
    const halfSignedIn = async () => {
      reads += 1;
      return { user: null };
    };
    const keepSignedIn = (s: { user: string | null }) => s.user !== null;
    const asked = [
      recent.sessionThrough('d', halfSignedIn, keepSignedIn),
      recent.sessionThrough('d', halfSignedIn, keepSignedIn),
    ];
    expect(await Promise.all(asked)).toEqual([{ user: null }, { user: null }]);
    expect(reads).toBe(1);
    expect(recent.session('d')).toBeUndefined();
    await recent.sessionThrough('d', halfSignedIn, keepSignedIn);
    expect(reads).toBe(2);
  });

  it('freezes what it keeps: a request cannot change what the next one reads', () => {
    const recent = new RecentAccess<{ user: { admin: boolean } }, unknown>(() => 0);
    recent.rememberToken('digest', { user: { admin: false } });
    const kept = recent.token('digest');
    expect(() => {
      if (kept) kept.user.admin = true;
    }).toThrow(TypeError);
    expect(recent.token('digest')?.user.admin).toBe(false);
  });
});

describe.each(testDialects())('remembered tokens and memberships on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  let owner: Client;
  let projectId: number;
  let members: Awaited<ReturnType<Harness['projectWithTeam']>>['members'];

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true });
    owner = await h.userClient({ can_create_project: true, username: 'owner' });
    ({ projectId, members } = await h.projectWithTeam(owner));
  });
  afterAll(async () => h?.close());
  afterEach(() => vi.useRealTimers());
  const stopClock = () => vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });

  const newToken = async (client: Client, body: Record<string, unknown> = {}) => {
    const res = await client.post('/api/user/tokens', body);
    expect(res.statusCode).toBe(201);
    // `token_id` names the stored row (the answer's `id` is the token itself, as in the peer's API).
    const { token_id: id, token } = res.json() as { token_id: string; token: string };
    return { id, token };
  };
  const withToken = (token: string, url: string) =>
    h.anonymous().request('GET', url, undefined, { authorization: `Bearer ${token}` });
  const projectTemplates = () => `/api/project/${projectId}/templates`;

  it('a token revoked through the API is refused at once, though just used', async () => {
    const { id, token } = await newToken(members.guest);
    expect((await withToken(token, projectTemplates())).statusCode).toBe(200);
    expect((await members.guest.del(`/api/user/tokens/${encodeURIComponent(id)}`)).statusCode).toBe(204);
    expect((await withToken(token, projectTemplates())).statusCode).toBe(401);
  });

  it('a member removed through the API is refused at once, though just let in', async () => {
    const { token } = await newToken(members.task_runner);
    expect((await withToken(token, projectTemplates())).statusCode).toBe(200);
    expect((await members.task_runner.get(projectTemplates())).statusCode).toBe(200);
    const removed = await owner.del(`/api/project/${projectId}/users/${members.task_runner.userId}`);
    expect(removed.statusCode).toBe(204);
    expect((await withToken(token, projectTemplates())).statusCode).toBe(403);
    expect((await members.task_runner.get(projectTemplates())).statusCode).toBe(403);
  });

  it('an admin demoted through the API loses admin routes at once', async () => {
    const other = await h.userClient({ admin: true });
    const { token } = await newToken(other);
    expect((await withToken(token, '/api/users')).statusCode).toBe(200);
    const user = (await admin.get(`/api/users/${other.userId}`)).json();
    expect((await admin.put(`/api/users/${other.userId}`, { ...user, admin: false })).statusCode).toBe(204);
    expect((await withToken(token, '/api/users')).statusCode).toBe(403);
  });

  it('a change no event announces holds for RECENT_ACCESS_MS at most; an expiry is checked on every use', async () => {
    stopClock();
    const { id, token } = await newToken(members.manager, { expires_in_days: 1 });
    expect((await withToken(token, projectTemplates())).statusCode).toBe(200);
    // Revoked behind the API (a `signalbox` command, another instance without Redis)...
    await h.deps.db.deleteFrom('api_token').where('id', '=', id).execute();
    expect((await withToken(token, projectTemplates())).statusCode).toBe(200);
    vi.setSystemTime(Date.now() + RECENT_ACCESS_MS);
    expect((await withToken(token, projectTemplates())).statusCode).toBe(401);

    // A token used a moment before its expiry is refused from the expiry on, remembered or not.
    const soon = await newToken(members.manager, { expires_in_days: 1 });
    vi.setSystemTime(Date.now() + 24 * 3600 * 1000 - 100);
    expect((await withToken(soon.token, projectTemplates())).statusCode).toBe(200);
    vi.setSystemTime(Date.now() + 100);
    expect((await withToken(soon.token, projectTemplates())).statusCode).toBe(401);
  });

  /** A new session of `username` (its own cookie), as a browser signing in. */
  const signIn = async (username: string, password: string) => {
    const res = await h.anonymous().request('POST', '/api/auth/login', { auth: username, password });
    expect(res.statusCode).toBe(204);
    const cookie = String(res.headers['set-cookie']).split(';')[0]!;
    const headers = { cookie, 'sec-fetch-site': 'same-origin' };
    const anonymous = h.anonymous();
    return {
      get: (url: string) => anonymous.request('GET', url, undefined, headers),
      post: (url: string, body: unknown) => anonymous.request('POST', url, body, headers),
    };
  };

  it('a session is read from the database once a moment, and a sign-out or password change ends it at once', async () => {
    const user = await h.userClient({ username: 'session-user', password: 'session-Passw0rd' });
    stopClock();
    expect((await user.get('/api/user')).statusCode).toBe(200);
    // Ended behind the API (a `signalbox` command): the session is remembered for the moment, then refused.
    await h.deps.db.updateTable('session').set({ expired: 1 }).where('user_id', '=', user.userId).execute();
    expect((await user.get('/api/user')).statusCode).toBe(200);
    vi.setSystemTime(Date.now() + RECENT_ACCESS_MS);
    expect((await user.get('/api/user')).statusCode).toBe(401);
    vi.useRealTimers();

    // Through the API, at once, though just used: a sign-out, and another session's password change.
    const again = await signIn('session-user', 'session-Passw0rd');
    expect((await again.get('/api/user')).statusCode).toBe(200);
    expect((await again.post('/api/auth/logout', {})).statusCode).toBe(204);
    expect((await again.get('/api/user')).statusCode).toBe(401);
    const first = await signIn('session-user', 'session-Passw0rd');
    const second = await signIn('session-user', 'session-Passw0rd');
    expect((await first.get('/api/user')).statusCode).toBe(200);
    expect((await second.get('/api/user')).statusCode).toBe(200);
    const changed = await second.post(`/api/users/${user.userId}/password`, {
      password: 'session-Passw0rd-2',
      current_password: 'session-Passw0rd',
    });
    expect(changed.statusCode).toBe(204);
    expect((await first.get('/api/user')).statusCode).toBe(401);
    expect((await second.get('/api/user')).statusCode).toBe(200);
  });

  it("forgets on another instance's announcement (the bus) and keeps tokens by digest only", async () => {
    const { id, token } = await newToken(members.manager);
    expect((await withToken(token, projectTemplates())).statusCode).toBe(200);
    await h.deps.db.deleteFrom('api_token').where('id', '=', id).execute();
    h.deps.bus.emit('tokensRevoked', { userId: members.manager.userId, tokenIds: [id] });
    expect((await withToken(token, projectTemplates())).statusCode).toBe(401);
    expect(tokenDigest(`  ${token} `)).toBe(tokenDigest(token));
    expect(tokenDigest(token)).not.toContain(token);
  });
});
