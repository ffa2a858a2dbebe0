import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { buildApp } from '../app';
import { openDb } from '../db';
import { runUserCommand } from '../features/users/users.cli';
import { addressKey, pairDelayMs, signInAttempt, signInLimits } from './sign-in-throttle';

describe('sign-in throttle rules', () => {
  it('lets four failures pass, then doubles the wait from 1 s up to 15 minutes', () => {
    expect([1, 2, 3, 4].map(pairDelayMs)).toEqual([0, 0, 0, 0]);
    expect([5, 6, 7, 8, 9].map(pairDelayMs)).toEqual([1000, 2000, 4000, 8000, 16000]);
    expect(pairDelayMs(14)).toBe(512_000);
    expect(pairDelayMs(15)).toBe(15 * 60 * 1000);
    expect(pairDelayMs(10_000)).toBe(15 * 60 * 1000);
  });

  it('counts IPv4 addresses one by one and IPv6 addresses by their /64 network', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});

describe.each(testDialects())('sign-in throttle on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true });
  });
  afterAll(async () => h?.close());

  let hosts = 0;
  /** A client address of its own per call, so tests never share an address's count. */
  const freshAddress = () => {
    hosts += 1;
    return `198.51.${Math.floor(hosts / 250)}.${hosts % 250}`;
  };
  const signIn = (address: string, auth: string, password: string) =>
    h.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { auth, password },
      remoteAddress: address,
    });
  const retryAfter = (res: LightMyRequestResponse) => Number(res.headers['retry-after']);
  /** Lets every wait of the user's pairs run out, as if the time had passed. */
  const letWaitPass = (userId: number) =>
    h.deps.db
      .updateTable('sign_in_throttle')
      .set({ blocked_until: new Date(Date.now() - 1000).toISOString() })
      .where('user_id', '=', userId)
      .execute();
  /**
   * Fails until the pair must wait (the fifth failure in a row: 1 s), then stretches that wait to ten minutes,
   * as further failures would, so that a slow machine does not outlast it before the next request.
   */
  async function lockOut(address: string, victim: Client) {
    for (let i = 0; i < signInLimits.pairFreeFailures + 1; i++)
      expect((await signIn(address, victim.username, `wrong-${i}`)).statusCode).toBe(401);
    await h.deps.db
      .updateTable('sign_in_throttle')
      .set({ blocked_until: new Date(Date.now() + 10 * 60 * 1000).toISOString() })
      .where('user_id', '=', victim.userId)
      .where('address', '=', address)
      .execute();
  }

  it('throttles the attacking address but lets the right password in from an address that has not failed', async () => {
    const victim = await h.userClient();
    const attacker = freshAddress();
    await lockOut(attacker, victim);

    // While it waits, the attacker's wrong and right guesses get the same 429: the password is not checked.
    const wrong = await signIn(attacker, victim.username, 'wrong-again');
    const right = await signIn(attacker, victim.username, victim.password);
    for (const res of [wrong, right]) {
      expect(res.statusCode).toBe(429);
      expect(res.json()).toMatchObject({
        error: 'Too many failed sign-in attempts. Try again in 10 minutes.',
      });
      expect(retryAfter(res)).toBeGreaterThan(9 * 60);
      expect(retryAfter(res)).toBeLessThanOrEqual(10 * 60);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    // Their e-mail is the same login: no fresh count for it.
    expect((await signIn(attacker, `${victim.username}@example.test`, victim.password)).statusCode).toBe(429);

    const home = await signIn(freshAddress(), victim.username, victim.password);
    expect(home.statusCode).toBe(204);
    expect(String(home.headers['set-cookie'])).toMatch(/^signalbox=/);
    // The attacker still waits.
    expect((await signIn(attacker, victim.username, victim.password)).statusCode).toBe(429);

    // The lock is logged at warn level with login and address, never a password.
    const locks = h.logLines.filter((l) => l.includes('sign-in locked for this login'));
    const line = locks.map((l) => JSON.parse(l)).find((l) => l.login === victim.username);
    expect(line).toMatchObject({ level: 40, login: victim.username, address: attacker, retry_after_s: 1 });
    for (const l of h.logLines) {
      expect(l).not.toContain(victim.password);
      expect(l).not.toContain('wrong-again');
    }
  });

  it('makes each further failure wait twice as long, up to 15 minutes; the right password starts over', async () => {
    const victim = await h.userClient();
    const attacker = freshAddress();
    const pair = () =>
      h.deps.db
        .selectFrom('sign_in_throttle')
        .selectAll()
        .where('user_id', '=', victim.userId)
        .where('address', '=', attacker)
        .executeTakeFirstOrThrow();
    for (let i = 0; i < signInLimits.pairFreeFailures; i++) {
      expect((await signIn(attacker, victim.username, `typo-${i}`)).statusCode).toBe(401);
      expect((await pair()).blocked_until).toBeNull();
    }
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      expect((await signIn(attacker, victim.username, `guess-${i}`)).statusCode).toBe(401);
      const row = await pair();
      const wait = (Date.parse(row.blocked_until!) - Date.parse(row.last_failure)) / 1000;
      waits.push(wait);
      // Inside a wait long enough for any machine: the next attempt is refused with the time left.
      if (wait >= 16) {
        const blocked = await signIn(attacker, victim.username, 'guess');
        expect(blocked.statusCode).toBe(429);
        expect(retryAfter(blocked)).toBeGreaterThan(wait - 5);
        expect(retryAfter(blocked)).toBeLessThanOrEqual(wait);
      }
      await letWaitPass(victim.userId);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]);
    expect((await signIn(attacker, victim.username, 'guess')).statusCode).toBe(401);
    const capped = await signIn(attacker, victim.username, 'guess');
    expect(capped.json().error).toBe('Too many failed sign-in attempts. Try again in 15 minutes.');

    // Once the wait is over the right password gets in, and the pair starts over with four free failures.
    await letWaitPass(victim.userId);
    expect((await signIn(attacker, victim.username, victim.password)).statusCode).toBe(204);
    for (let i = 0; i < signInLimits.pairFreeFailures; i++)
      expect((await signIn(attacker, victim.username, 'typo')).statusCode).toBe(401);
  });

  it('throttles an address failing across many logins as a whole; right passwords do not count', async () => {
    const user = await h.userClient();
    const sprayer = freshAddress();
    // The address already failed all but six times in this window (each failure is a slow bcrypt check).
    const earlier = signInLimits.addressFailures - 6;
    const t = new Date().toISOString();
    await h.deps.db
      .insertInto('sign_in_throttle')
      .values({
        ...signInAttempt('', null, sprayer).addressRow,
        failures: earlier,
        first_failure: t,
        last_failure: t,
        blocked_until: null,
      })
      .execute();
    for (let i = 0; i < 5; i++) {
      // Never more than the free failures per login, so only the address count can stop it.
      expect((await signIn(sprayer, `nobody-${i % 2}`, `guess-${i}`)).statusCode).toBe(401);
      // Signing in rightly in between changes nothing.
      expect((await signIn(sprayer, user.username, user.password)).statusCode).toBe(204);
    }
    expect((await signIn(sprayer, 'nobody-last', 'guess')).statusCode).toBe(401);
    for (const [login, password] of [
      ['nobody-after', 'guess'],
      [user.username, user.password],
    ]) {
      const res = await signIn(sprayer, login!, password!);
      expect(res.statusCode).toBe(429);
      expect(retryAfter(res)).toBeGreaterThan(14 * 60);
      expect(retryAfter(res)).toBeLessThanOrEqual(15 * 60);
    }
    // Everyone else is unaffected.
    expect((await signIn(freshAddress(), user.username, user.password)).statusCode).toBe(204);
    const line = h.logLines
      .filter((l) => l.includes('every login from this address'))
      .map((l) => JSON.parse(l))
      .find((l) => l.address === sprayer);
    expect(line).toMatchObject({ level: 40, login: 'nobody-last', failures: signInLimits.addressFailures });
  });

  it('lets many sign-ins from one address at once through (a proxy), counting none of them', async () => {
    const users = await Promise.all(Array.from({ length: 6 }, () => h.userClient()));
    const proxy = freshAddress();
    const results = await Promise.all(
      users.flatMap((u) => [1, 2, 3].map(() => signIn(proxy, u.username, u.password))),
    );
    expect(results.map((r) => r.statusCode)).toEqual(results.map(() => 204));
    const row = await h.deps.db
      .selectFrom('sign_in_throttle')
      .select('failures')
      .where('id', '=', signInAttempt('', null, proxy).addressRow.id)
      .executeTakeFirstOrThrow();
    expect(row.failures).toBe(0);
  });

  it('lets parallel guesses past the count no more than sequential ones', async () => {
    const victim = await h.userClient();
    const attacker = freshAddress();
    // A first wait of a minute: however slowly this machine serves the burst, it cannot outlast it.
    const first = signInLimits.firstDelayMs;
    signInLimits.firstDelayMs = 60_000;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => signIn(attacker, victim.username, `parallel-${i}`)),
    ).finally(() => {
      signInLimits.firstDelayMs = first;
    });
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c !== 401 && c !== 429)).toEqual([]);
    expect(codes).toContain(401);
    // The fifth failure starts the wait: at most five guesses were checked.
    expect(codes.filter((c) => c === 401).length).toBeLessThanOrEqual(signInLimits.pairFreeFailures + 1);
    expect(codes.filter((c) => c === 429).length).toBeGreaterThanOrEqual(
      20 - signInLimits.pairFreeFailures - 1,
    );
  });

  it('lets an administrator see and clear a lock; others get 403', async () => {
    const victim = await h.userClient();
    const bystander = await h.userClient();
    const attacker = freshAddress();
    await lockOut(attacker, victim);

    const seen = await admin.get(`/api/users/${victim.userId}`);
    expect(seen.statusCode).toBe(200);
    const until = Date.parse(seen.json().sign_in_locked_until);
    expect(until).toBeGreaterThan(Date.now());
    expect((await admin.get(`/api/users/${bystander.userId}`)).json().sign_in_locked_until).toBeNull();
    // Users looking at themselves do not get the field.
    expect((await victim.get(`/api/users/${victim.userId}`)).json()).not.toHaveProperty(
      'sign_in_locked_until',
    );

    const url = `/api/users/${victim.userId}/sign-in-lock`;
    for (const caller of [victim, bystander]) {
      const res = await caller.del(url);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ error: 'Only administrators can do this' });
    }
    expect((await h.anonymous().del(url)).statusCode).toBe(401);
    expect((await signIn(attacker, victim.username, victim.password)).statusCode).toBe(429);

    expect((await admin.del(url)).statusCode).toBe(204);
    expect((await admin.get(`/api/users/${victim.userId}`)).json().sign_in_locked_until).toBeNull();
    expect((await signIn(attacker, victim.username, victim.password)).statusCode).toBe(204);
    const event = await h.deps.db
      .selectFrom('event')
      .selectAll()
      .where('object_type', '=', 'user')
      .where('object_id', '=', victim.userId)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({
      user_id: admin.userId,
      description: `Sign-in lock of user ${victim.username} cleared`,
    });

    expect((await admin.del('/api/users/999999/sign-in-lock')).statusCode).toBe(404);
    const bad = await admin.del('/api/users/abc/sign-in-lock');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBeTruthy();
  });

  it('lets the server console clear a lock: signalbox user unlock --login', async () => {
    const victim = await h.userClient();
    const attacker = freshAddress();
    await lockOut(attacker, victim);
    const handle = { db: h.deps.db, dialect: h.deps.dialect, destroy: async () => {} };
    const printed: string[] = [];
    const log = console.log;
    const error = console.error;
    console.log = (line: string) => void printed.push(line);
    console.error = (line: string) => void printed.push(line);
    try {
      expect(await runUserCommand(handle, ['unlock', '--login', 'no-such-user'])).toBe(1);
      expect(await runUserCommand(handle, ['unlock'])).toBe(1);
      expect(await runUserCommand(handle, ['unlock', '--login', `${victim.username}@example.test`])).toBe(0);
    } finally {
      console.log = log;
      console.error = error;
    }
    expect(printed).toEqual([
      'User no-such-user not found',
      '--login is required',
      `Sign-in lock of user ${victim.username} cleared`,
    ]);
    expect((await signIn(attacker, victim.username, victim.password)).statusCode).toBe(204);
  });

  it('is shared by every instance on the database', async () => {
    const second = openDb(h.config.dbUrl);
    const { app } = await buildApp(h.config, { db: second, background: false, logger: false });
    try {
      const victim = await h.userClient();
      const attacker = freshAddress();
      await lockOut(attacker, victim);
      const elsewhere = await app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { auth: victim.username, password: victim.password },
        remoteAddress: attacker,
      });
      expect(elsewhere.statusCode).toBe(429);
    } finally {
      await app.close();
      await second.destroy();
    }
  });

  it('forgets rows a day quiet', async () => {
    const old = new Date(Date.now() - signInLimits.forgetMs - 60_000).toISOString();
    await h.deps.db
      .insertInto('sign_in_throttle')
      .values({
        id: 'f'.repeat(64),
        user_id: null,
        login: 'long-gone',
        address: '192.0.2.1',
        failures: 9,
        first_failure: old,
        last_failure: old,
        blocked_until: old,
      })
      .execute();
    const every = signInLimits.pruneEveryMs;
    signInLimits.pruneEveryMs = 0;
    try {
      expect((await signIn(freshAddress(), 'someone', 'wrong')).statusCode).toBe(401);
    } finally {
      signInLimits.pruneEveryMs = every;
    }
    const left = await h.deps.db
      .selectFrom('sign_in_throttle')
      .select('id')
      .where('id', '=', 'f'.repeat(64))
      .execute();
    expect(left).toEqual([]);
  });
});
