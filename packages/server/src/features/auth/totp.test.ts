import type { LightMyRequestResponse } from 'fastify';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { createSession } from '../../access/sessions.store';

/** The code an authenticator app shows for `secret`, `steps` 30-second steps from now. */
const codeFor = (secret: string, steps = 0) =>
  generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

const cookieOf = (res: LightMyRequestResponse) => String(res.headers['set-cookie']).split(';')[0] ?? '';

type Enabled = { totpId: number; secret: string; recoveryCodes: string[] };

describe.each(testDialects())('two-factor sign-in (TOTP) on $name', (dialect) => {
  let h: Harness;
  let admin: Client;

  beforeAll(async () => {
    h = await createHarness(dialect, { totpEnabled: true, totpAllowRecovery: true });
    admin = await h.userClient({ admin: true });
  });
  afterAll(async () => h?.close());

  /** Turns TOTP on for the client's user through the API, with a code of the current step. */
  async function enable(client: Client): Promise<Enabled> {
    const started = await client.post(`/api/users/${client.userId}/2fas/totp`);
    expect(started.statusCode).toBe(200);
    const { id, secret } = started.json();
    const confirmed = await client.post(`/api/users/${client.userId}/2fas/totp/${id}/confirm`, {
      passcode: await codeFor(secret),
    });
    expect(confirmed.statusCode).toBe(200);
    return { totpId: id, secret, recoveryCodes: confirmed.json().recovery_codes };
  }

  /** Signs in with the password (from `remoteAddress` when given): a client whose session waits for a code. */
  async function passwordOnly(client: Client, remoteAddress = '127.0.0.1') {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { auth: client.username, password: client.password },
      remoteAddress,
    });
    expect(res.statusCode).toBe(204);
    const cookie = cookieOf(res);
    const send = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) =>
      h.app.inject({
        method,
        url,
        remoteAddress,
        headers: { cookie, 'sec-fetch-site': 'same-origin' },
        ...(body === undefined ? {} : { payload: body as object }),
      });
    return { cookie, send };
  }

  it('offers TOTP with recovery on the sign-in page', async () => {
    const res = await h.anonymous().get('/api/auth/login');
    expect(res.json().auth_methods).toEqual({ totp: { allow_recovery: true } });
  });

  it('sets up TOTP: a secret shown once, a QR code of it, a first code, recovery codes shown once', async () => {
    const alice = await h.userClient({ username: 'alice' });
    const base = `/api/users/${alice.userId}/2fas/totp`;
    expect((await alice.get(base)).statusCode).toBe(404);

    const started = await alice.post(base);
    expect(started.statusCode).toBe(200);
    expect(started.headers['cache-control']).toBe('no-store');
    const enrollment = started.json();
    expect(enrollment).toMatchObject({
      user_id: alice.userId,
      secret: expect.stringMatching(/^[A-Z2-7]{32}$/),
    });
    const url = new URL(enrollment.url);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toBe('/Signalbox:alice');
    expect(url.searchParams.get('secret')).toBe(enrollment.secret);
    expect(url.searchParams.get('issuer')).toBe('Signalbox');

    // Stored sealed, never as the secret itself.
    const row = await h.deps.db
      .selectFrom('user_totp')
      .selectAll()
      .where('user_id', '=', alice.userId)
      .executeTakeFirstOrThrow();
    expect(row.secret).not.toContain(enrollment.secret);
    expect(h.deps.box.open(row.secret)).toBe(enrollment.secret);

    const qr = await alice.get(`${base}/${enrollment.id}/qr`);
    expect(qr.statusCode).toBe(200);
    expect(qr.headers['content-type']).toBe('image/png');
    expect(qr.rawPayload.subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );

    // Not on yet: signing in asks for no code.
    expect((await alice.get(base)).json()).toMatchObject({ confirmed: false, recovery_codes_left: 0 });
    const meanwhile = await passwordOnly(alice);
    expect((await meanwhile.send('GET', '/api/user')).statusCode).toBe(200);

    const wrong = await alice.post(`${base}/${enrollment.id}/confirm`, { passcode: '000000' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toMatchObject({ error: 'Incorrect code', fields: { passcode: 'Incorrect code' } });
    const malformed = await alice.post(`${base}/${enrollment.id}/confirm`, { passcode: '12ab56' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error).toBe('Code must be 6 digits');

    const confirmed = await alice.post(`${base}/${enrollment.id}/confirm`, {
      passcode: await codeFor(enrollment.secret),
    });
    expect(confirmed.statusCode).toBe(200);
    const codes: string[] = confirmed.json().recovery_codes;
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(/^[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}$/);
    expect(new Set(codes).size).toBe(10);
    const hashes = await h.deps.db
      .selectFrom('user_totp_recovery')
      .select('code_hash')
      .where('totp_id', '=', enrollment.id)
      .execute();
    expect(hashes).toHaveLength(10);
    for (const { code_hash } of hashes) {
      expect(code_hash).toMatch(/^\$2[aby]\$/);
      for (const code of codes) expect(code_hash).not.toContain(code.replaceAll('-', ''));
    }

    // The secret is not shown again, nor the codes; the user objects say TOTP is on.
    expect((await alice.get(`${base}/${enrollment.id}/qr`)).statusCode).toBe(404);
    expect((await alice.get(base)).json()).toEqual({
      id: enrollment.id,
      created: expect.any(String),
      user_id: alice.userId,
      confirmed: true,
      recovery_codes_left: 10,
    });
    expect(JSON.stringify((await alice.get(base)).json())).not.toContain(enrollment.secret);
    const me = (await alice.get('/api/user')).json();
    expect(me.totp).toEqual({ id: enrollment.id, created: expect.any(String), user_id: alice.userId });
    const listed = (await admin.get('/api/users')).json().find((u: { id: number }) => u.id === alice.userId);
    expect(listed.totp.id).toBe(enrollment.id);
    expect((await admin.get(`/api/users/${admin.userId}`)).json()).not.toHaveProperty('totp');
    const again = await alice.post(base);
    expect(again.statusCode).toBe(400);
    expect(again.json().error).toBe('Two-factor sign-in is already on: turn it off first');
  });

  it('keeps a password sign-in half signed in until a code is given: every other route answers TOTP_REQUIRED', async () => {
    const bob = await h.userClient({ username: 'bob', admin: true, can_create_project: true });
    const { secret } = await enable(bob);
    const half = await passwordOnly(bob);
    const before = await h.deps.db.selectFrom('project').select('id').execute();
    for (const [method, url, body] of [
      ['GET', '/api/user'],
      ['GET', '/api/projects'],
      ['POST', '/api/projects', { name: 'sneaky' }],
      ['GET', '/api/users'],
      ['GET', `/api/users/${bob.userId}/2fas/totp`],
      ['DELETE', `/api/users/${bob.userId}/2fas/totp/1`, { password: bob.password }],
      ['POST', '/api/user/tokens', { name: 'sneaky' }],
      ['GET', '/api/info'],
      ['GET', '/api/ws'],
    ] as const) {
      const res = await half.send(method, url, body);
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      expect(res.json(), `${method} ${url}`).toMatchObject({ error: 'TOTP_REQUIRED', code: 'totp_required' });
    }
    expect(await h.deps.db.selectFrom('project').select('id').execute()).toEqual(before);
    expect(
      await h.deps.db.selectFrom('api_token').selectAll().where('user_id', '=', bob.userId).execute(),
    ).toEqual([]);

    const wrong = await half.send('POST', '/api/auth/verify', { passcode: '000000' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toMatchObject({ error: 'Incorrect code', code: 'incorrect_passcode' });
    expect((await half.send('POST', '/api/auth/verify', { passcode: 'x' })).statusCode).toBe(400);
    expect((await half.send('GET', '/api/user')).statusCode).toBe(401);

    // A code of the next step (the one set-up took this step's): the session is replaced by a signed-in one.
    const verified = await half.send('POST', '/api/auth/verify', { passcode: await codeFor(secret, 1) });
    expect(verified.statusCode).toBe(204);
    const signedIn = cookieOf(verified);
    expect(signedIn).not.toBe(half.cookie);
    const me = await h.app.inject({ method: 'GET', url: '/api/user', headers: { cookie: signedIn } });
    expect(me.statusCode).toBe(200);
    expect(me.json().username).toBe('bob');
    const old = await half.send('GET', '/api/user');
    expect(old.statusCode).toBe(401);
    expect(old.json().error).toBe('Not signed in');
    // A signed-in session has nothing more to give.
    const extra = await h.app.inject({
      method: 'POST',
      url: '/api/auth/verify',
      headers: { cookie: signedIn, 'sec-fetch-site': 'same-origin' },
      payload: { passcode: '000000' },
    });
    expect(extra.statusCode).toBe(204);
  });

  it('refuses a code used before (replay) and older codes, accepts the next step', async () => {
    const carol = await h.userClient({ username: 'carol' });
    const { secret } = await enable(carol);
    const next = await codeFor(secret, 1);
    const first = await passwordOnly(carol);
    expect((await first.send('POST', '/api/auth/verify', { passcode: next })).statusCode).toBe(204);
    const second = await passwordOnly(carol);
    const replay = await second.send('POST', '/api/auth/verify', { passcode: next });
    expect(replay.statusCode).toBe(401);
    expect(replay.json().error).toBe('Incorrect code');
    // The set-up's code and the step before are older still.
    for (const steps of [0, -1])
      expect(
        (await second.send('POST', '/api/auth/verify', { passcode: await codeFor(secret, steps) }))
          .statusCode,
      ).toBe(401);
    // Two steps ahead is outside the ±1 window.
    expect(
      (await second.send('POST', '/api/auth/verify', { passcode: await codeFor(secret, 3) })).statusCode,
    ).toBe(401);
    await h.deps.db.deleteFrom('sign_in_throttle').where('user_id', '=', carol.userId).execute();
  });

  it('accepts each recovery code once in place of a code', async () => {
    const dan = await h.userClient({ username: 'dan' });
    const { recoveryCodes } = await enable(dan);
    const half = await passwordOnly(dan);
    // Any case, without dashes or with spaces.
    const typed = recoveryCodes[3]!.toLowerCase().replaceAll('-', ' ');
    const used = await half.send('POST', '/api/auth/recovery', { recovery_code: typed });
    expect(used.statusCode).toBe(204);
    const me = await h.app.inject({ method: 'GET', url: '/api/user', headers: { cookie: cookieOf(used) } });
    expect(me.json().username).toBe('dan');

    const again = await passwordOnly(dan);
    const reused = await again.send('POST', '/api/auth/recovery', { recovery_code: recoveryCodes[3] });
    expect(reused.statusCode).toBe(401);
    expect(reused.json()).toMatchObject({
      error: 'Incorrect recovery code',
      code: 'incorrect_recovery_code',
    });
    const malformed = await again.send('POST', '/api/auth/recovery', { recovery_code: 'not-a-code!' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error).toBe('Recovery code must be 16 letters and digits');
    expect(
      (await again.send('POST', '/api/auth/recovery', { recovery_code: recoveryCodes[4] })).statusCode,
    ).toBe(204);
    const status = await dan.get(`/api/users/${dan.userId}/2fas/totp`);
    expect(status.json().recovery_codes_left).toBe(8);
  });

  it('throttles code attempts per user and address: guesses from one address never lock out the right code from another', async () => {
    const erin = await h.userClient({ username: 'erin' });
    const { secret } = await enable(erin);
    // Someone who knows the password guesses codes from their own address.
    const guesser = await passwordOnly(erin, '198.51.100.7');
    for (let i = 0; i < 5; i++)
      expect((await guesser.send('POST', '/api/auth/verify', { passcode: '000000' })).statusCode).toBe(401);
    // The fifth failure began a wait (1 s); stretched, as further failures would, to outlast a slow machine.
    const blocked = await h.deps.db
      .updateTable('sign_in_throttle')
      .set({ blocked_until: new Date(Date.now() + 600_000).toISOString() })
      .where('user_id', '=', erin.userId)
      .where('blocked_until', 'is not', null)
      .executeTakeFirst();
    expect(Number(blocked.numUpdatedRows)).toBe(1);
    // From the guessing address even the right code must wait (it is not even looked at), with Retry-After; so
    // must recovery codes.
    const good = await codeFor(secret, 1);
    const waiting = await guesser.send('POST', '/api/auth/verify', { passcode: good });
    expect(waiting.statusCode).toBe(429);
    expect(Number(waiting.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(waiting.json().error).toMatch(/^Too many failed sign-in attempts/);
    expect(
      (await guesser.send('POST', '/api/auth/recovery', { recovery_code: 'AAAA-AAAA-AAAA-AAAA' })).statusCode,
    ).toBe(429);
    // The real user, elsewhere, is not held back: a wrong code is refused as wrong, the right one accepted.
    const real = await passwordOnly(erin, '203.0.113.50');
    expect((await real.send('POST', '/api/auth/verify', { passcode: '000000' })).statusCode).toBe(401);
    expect((await real.send('POST', '/api/auth/verify', { passcode: good })).statusCode).toBe(204);
    // An administrator sees the lock of the guessing address and clears it.
    const viewed = (await admin.get(`/api/users/${erin.userId}`)).json();
    expect(viewed.sign_in_locked_until).toEqual(expect.any(String));
    expect((await admin.del(`/api/users/${erin.userId}/sign-in-lock`)).statusCode).toBe(204);
    const after = await guesser.send('POST', '/api/auth/verify', { passcode: await codeFor(secret, 2) });
    expect(after.statusCode).not.toBe(429);
  });

  it('leaves API tokens working without a code', async () => {
    const fay = await h.userClient({ username: 'fay' });
    const token = (await fay.post('/api/user/tokens', { name: 'ci' })).json().token;
    await enable(fay);
    const bearer = (url: string) =>
      h.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    expect((await bearer('/api/user')).statusCode).toBe(200);
    expect((await bearer('/api/projects')).statusCode).toBe(200);
    expect((await passwordOnly(fay).then((s) => s.send('GET', '/api/user'))).statusCode).toBe(401);
  });

  it('signs a half-signed-in session out', async () => {
    const gil = await h.userClient({ username: 'gil' });
    const { secret } = await enable(gil);
    const half = await passwordOnly(gil);
    expect((await half.send('POST', '/api/auth/logout')).statusCode).toBe(204);
    const after = await half.send('POST', '/api/auth/verify', { passcode: await codeFor(secret, 1) });
    expect(after.statusCode).toBe(401);
    expect(after.json().error).toBe('Not signed in');
  });

  it('lets users turn their own TOTP off with a code or their password, and an admin reset anyone else’s', async () => {
    const hank = await h.userClient({ username: 'hank' });
    const ivy = await h.userClient({ username: 'ivy' });
    const hankTotp = await enable(hank);
    const ivyTotp = await enable(ivy);
    const hankPath = `/api/users/${hank.userId}/2fas/totp/${hankTotp.totpId}`;

    // Other users cannot see, set up or remove it.
    expect((await ivy.get(`/api/users/${hank.userId}/2fas/totp`)).statusCode).toBe(403);
    expect((await ivy.post(`/api/users/${hank.userId}/2fas/totp`)).statusCode).toBe(403);
    expect((await ivy.request('DELETE', hankPath, {})).statusCode).toBe(403);
    expect((await admin.post(`/api/users/${hank.userId}/2fas/totp`)).statusCode).toBe(403);
    expect((await admin.get(`/api/users/${hank.userId}/2fas/totp`)).statusCode).toBe(200);
    expect((await hank.request('DELETE', `/api/users/${hank.userId}/2fas/totp/999999`, {})).statusCode).toBe(
      404,
    );

    const none = await hank.request('DELETE', hankPath, {});
    expect(none.statusCode).toBe(400);
    expect(none.json().error).toBe('Give a current code or your password to turn two-factor sign-in off');
    const badPassword = await hank.request('DELETE', hankPath, { password: 'nope' });
    expect(badPassword.statusCode).toBe(400);
    expect(badPassword.json().fields).toEqual({ password: 'Current password is incorrect' });
    const badCode = await hank.request('DELETE', hankPath, { passcode: '000000' });
    expect(badCode.statusCode).toBe(400);
    expect(badCode.json().fields).toEqual({ passcode: 'Incorrect code' });
    expect(
      (await hank.request('DELETE', hankPath, { passcode: await codeFor(hankTotp.secret, 1) })).statusCode,
    ).toBe(204);
    expect((await hank.get('/api/user')).json()).not.toHaveProperty('totp');
    expect((await passwordOnly(hank).then((s) => s.send('GET', '/api/user'))).statusCode).toBe(200);
    expect(
      await h.deps.db
        .selectFrom('user_totp_recovery')
        .selectAll()
        .where('totp_id', '=', hankTotp.totpId)
        .execute(),
    ).toEqual([]);

    // The admin resets ivy's: her session waiting for a code ends, her next sign-in asks for none.
    const waiting = await passwordOnly(ivy);
    const reset = await admin.del(`/api/users/${ivy.userId}/2fas/totp/${ivyTotp.totpId}`);
    expect(reset.statusCode).toBe(204);
    expect((await waiting.send('GET', '/api/user')).json().error).toBe('Not signed in');
    expect((await passwordOnly(ivy).then((s) => s.send('GET', '/api/user'))).statusCode).toBe(200);
    expect((await admin.del(`/api/users/${ivy.userId}/2fas/totp/${ivyTotp.totpId}`)).statusCode).toBe(404);
    const events = await h.deps.db
      .selectFrom('event')
      .select('description')
      .where('object_type', '=', 'user')
      .where('object_id', 'in', [hank.userId, ivy.userId])
      .execute();
    expect(events.map((e) => e.description)).toEqual(
      expect.arrayContaining([
        'Two-factor sign-in of user hank turned on',
        'Two-factor sign-in of user hank turned off',
        'Two-factor sign-in of user ivy reset',
      ]),
    );
  });

  it('removes a deleted user’s TOTP and recovery codes', async () => {
    const jay = await h.userClient({ username: 'jay' });
    const { totpId } = await enable(jay);
    expect((await admin.del(`/api/users/${jay.userId}`)).statusCode).toBe(204);
    expect(await h.deps.db.selectFrom('user_totp').selectAll().where('id', '=', totpId).execute()).toEqual(
      [],
    );
    expect(
      await h.deps.db.selectFrom('user_totp_recovery').selectAll().where('totp_id', '=', totpId).execute(),
    ).toEqual([]);
  });
});

describe.each(testDialects())('TOTP turned off by the server settings on $name', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect, { totpEnabled: false, totpAllowRecovery: true });
  });
  afterAll(async () => h?.close());

  it('offers no TOTP, refuses a set-up, and asks no code of users who had it on', async () => {
    expect((await h.anonymous().get('/api/auth/login')).json().auth_methods).toEqual({});
    const kim = await h.userClient({ username: 'kim' });
    const setUp = await kim.post(`/api/users/${kim.userId}/2fas/totp`);
    expect(setUp.statusCode).toBe(400);
    expect(setUp.json()).toMatchObject({
      error: 'Two-factor sign-in (TOTP) is not enabled on this server',
      code: 'totp_not_enabled',
    });

    // A TOTP turned on while the setting was on: signing in with the password is enough now.
    await h.deps.db
      .insertInto('user_totp')
      .values({
        user_id: kim.userId,
        created: new Date().toISOString(),
        secret: h.deps.box.seal('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'),
        confirmed: 1,
        confirmed_at: new Date().toISOString(),
        last_step: null,
      })
      .execute();
    const signIn = await h.anonymous().post('/api/auth/login', { auth: 'kim', password: kim.password });
    const me = await h.app.inject({ method: 'GET', url: '/api/user', headers: { cookie: cookieOf(signIn) } });
    expect(me.statusCode).toBe(200);

    // A session that was left waiting for a code is told TOTP is off (the peer's 403), and can sign out.
    const token = await createSession(h.deps.db, kim.userId, '127.0.0.1', 'test', false);
    const waiting = { cookie: `signalbox=${token}`, 'sec-fetch-site': 'same-origin' };
    for (const [url, body] of [
      ['/api/auth/verify', { passcode: '123456' }],
      ['/api/auth/recovery', { recovery_code: 'AAAA-AAAA-AAAA-AAAA' }],
    ] as const) {
      const res = await h.app.inject({ method: 'POST', url, headers: waiting, payload: body });
      expect(res.statusCode, url).toBe(403);
      expect(res.json(), url).toMatchObject({ error: 'TOTP_DISABLED', code: 'totp_disabled' });
    }
  });
});

describe.each(testDialects())('TOTP without recovery codes on $name', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect, { totpEnabled: true, totpAllowRecovery: false });
  });
  afterAll(async () => h?.close());

  it('gives no recovery codes and refuses them at sign-in', async () => {
    expect((await h.anonymous().get('/api/auth/login')).json().auth_methods).toEqual({
      totp: { allow_recovery: false },
    });
    const lee = await h.userClient({ username: 'lee' });
    const started = (await lee.post(`/api/users/${lee.userId}/2fas/totp`)).json();
    const confirmed = await lee.post(`/api/users/${lee.userId}/2fas/totp/${started.id}/confirm`, {
      passcode: await codeFor(started.secret),
    });
    expect(confirmed.json().recovery_codes).toEqual([]);
    const signIn = await h.anonymous().post('/api/auth/login', { auth: 'lee', password: lee.password });
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/auth/recovery',
      headers: { cookie: cookieOf(signIn), 'sec-fetch-site': 'same-origin' },
      payload: { recovery_code: 'AAAA-AAAA-AAAA-AAAA' },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('TOTP_DISABLED');
  });
});
