import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { createTeam, type Team } from '../../../test/support/permission-matrix';
import { startSmtp } from '../../../test/support/smtp';

/**
 * Invites of an e-mail address nobody has an account for, as Semaphore makes them: the invite is e-mailed, and the
 * account later created with that address finds it among its invites (or accepts it with the mailed token).
 */
describe.each(testDialects())('e-mail invites on $name', (dialect) => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let h: Harness;
  let team: Team;
  const invites = (path = '') => `${team.base}/invites${path}`;
  let addresses = 0;
  /** An address nobody has an account for. */
  const freshAddress = () => `newcomer${++addresses}@mail.example`;

  beforeAll(async () => {
    smtp = await startSmtp();
    h = await createHarness(dialect, {
      emailAlert: true,
      emailHost: '127.0.0.1',
      emailPort: smtp.port,
      emailSender: 'signalbox@example.test',
      webRoot: 'https://signalbox.example/',
      alertTimeout: 5,
    });
    team = await createTeam(h, 'Mailed project');
  });
  afterAll(async () => {
    await h?.close();
    await smtp?.close();
  });
  beforeEach(() => {
    smtp.mails.length = 0;
  });

  const memberRole = async (userId: number) =>
    (
      await h.deps.db
        .selectFrom('project_user')
        .select('role')
        .where('project_id', '=', team.projectId)
        .where('user_id', '=', userId)
        .executeTakeFirst()
    )?.role;

  /** An account created by an administrator with that address (and a password), signed in. */
  async function accountFor(email: string, username: string): Promise<Client> {
    const made = await team.admin.post('/api/users', {
      name: username,
      username,
      email,
      password: `pw-${username}`,
    });
    expect(made.statusCode, made.body).toBe(201);
    const signIn = await h
      .anonymous()
      .post('/api/auth/login', { auth: username, password: `pw-${username}` });
    expect(signIn.statusCode).toBe(204);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    const anonymous = h.anonymous();
    const headers = { cookie, 'sec-fetch-site': 'same-origin' };
    return {
      ...anonymous,
      userId: made.json().id,
      username,
      password: `pw-${username}`,
      cookie,
      request: (method, url, body, more = {}) =>
        anonymous.request(method, url, body, { ...headers, ...more }),
      get: (url) => anonymous.request('GET', url, undefined, headers),
      post: (url, body) => anonymous.request('POST', url, body ?? {}, headers),
      put: (url, body) => anonymous.request('PUT', url, body ?? {}, headers),
      del: (url) => anonymous.request('DELETE', url, undefined, headers),
    };
  }

  it('invites an address without an account: e-mails it, and answers without a user', async () => {
    const email = freshAddress();
    const res = await team.owner.post(invites(), { email, role: 'task_runner' });
    expect(res.statusCode, res.body).toBe(201);
    const made = res.json();
    expect(made).toMatchObject({
      project_id: team.projectId,
      email,
      role: 'task_runner',
      status: 'pending',
      inviter_user_id: team.owner.userId,
      mail_status: 'sent',
    });
    // As Semaphore: no user_id, no user (and no accepted_at) until an account has the address.
    for (const field of ['user_id', 'user', 'accepted_at']) expect(made).not.toHaveProperty(field);
    expect(smtp.mails).toHaveLength(1);
    const [mail] = smtp.mails;
    expect(mail!.to).toEqual([email]);
    expect(mail!.subject).toBe('Invitation to join project Mailed project');
    expect(mail!.text).toContain(
      `Name ${team.owner.username} invited you to join the project "Mailed project"`,
    );
    expect(mail!.text).toContain('as task_runner');
    expect(mail!.text).toContain('https://signalbox.example');
    expect(mail!.text).toContain(`with this e-mail address (${email})`);
    expect(mail!.text).toContain(made.token);
    // Every member reads it so; the token is never shown again nor logged.
    const read = await team.guest.get(invites(`/${made.id}`));
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(
      Object.fromEntries(Object.entries(made).filter(([k]) => k !== 'token' && k !== 'mail_status')),
    );
    expect((await team.guest.get(invites())).body).not.toContain(made.token);
    expect(h.logLines.join('\n')).not.toContain(made.token);
  });

  it('refuses a second open invite of the address (any case), a malformed address and an unknown username', async () => {
    const email = freshAddress();
    expect((await team.owner.post(invites(), { email, role: 'guest' })).statusCode).toBe(201);
    smtp.mails.length = 0;
    const refused: [unknown, number, string][] = [
      [
        { email: email.toUpperCase(), role: 'guest' },
        409,
        `${email.toUpperCase()} already has a pending invite to this project`,
      ],
      [{ email: 'no-at-sign', role: 'guest' }, 400, 'Email must be a valid e-mail address'],
      [
        { username: 'nobody-by-this-name', role: 'guest' },
        400,
        'No user has the username nobody-by-this-name',
      ],
    ];
    for (const [body, status, message] of refused) {
      const res = await team.owner.post(invites(), body);
      expect([res.statusCode, res.json().error], JSON.stringify(body)).toEqual([status, message]);
    }
    expect(smtp.mails).toEqual([]);
    // Managers and others without the manage-team bit may not invite an address either.
    for (const caller of [team.manager, team.task_runner, team.guest, team.outsider])
      expect((await caller.post(invites(), { email: freshAddress(), role: 'guest' })).statusCode).toBe(403);
    expect(smtp.mails).toEqual([]);
  });

  it('gives the invite to the account created with the address, to accept at its first sign-in', async () => {
    const email = freshAddress();
    const invite = (await team.owner.post(invites(), { email, role: 'manager' })).json();
    // An account of that address, in another case, as an administrator creates it.
    const newcomer = await accountFor(email.toUpperCase(), 'newcomer-by-admin');
    const mine = (await newcomer.get('/api/user/invites')).json();
    expect(mine).toEqual([
      expect.objectContaining({
        id: invite.id,
        user_id: newcomer.userId,
        project_name: 'Mailed project',
        role: 'manager',
        status: 'pending',
      }),
    ]);
    expect((await team.guest.get(invites(`/${invite.id}`))).json()).toMatchObject({
      user_id: newcomer.userId,
      user: { id: newcomer.userId, username: 'newcomer-by-admin' },
    });
    expect((await newcomer.post(`/api/user/invites/${invite.id}/accept`)).statusCode).toBe(204);
    expect(await memberRole(newcomer.userId)).toBe('manager');
    expect((await team.owner.get(invites(`/${invite.id}`))).json()).toMatchObject({ status: 'accepted' });
  });

  it('lets the account with the address answer with the mailed token; another account gets 403', async () => {
    const email = freshAddress();
    const invite = (await team.owner.post(invites(), { email, role: 'guest' })).json();
    const stranger = await accountFor(freshAddress(), 'stranger-with-token');
    const wrong = await stranger.post('/api/invites/accept', { token: invite.token });
    expect([wrong.statusCode, wrong.json().error]).toEqual([
      403,
      'This invite is for another e-mail address',
    ]);
    expect(await memberRole(stranger.userId)).toBeUndefined();
    // An account that took the address only after it was made (giving it to itself) does not get the invite
    // listed, but holding the mailed token it may answer it.
    const changer = await accountFor(freshAddress(), 'address-changer');
    const me = (await changer.get('/api/user')).json();
    expect((await changer.put(`/api/users/${changer.userId}`, { ...me, email })).statusCode).toBe(204);
    expect((await changer.get('/api/user/invites')).json()).toEqual([]);
    expect((await changer.post('/api/invites/decline', { token: invite.token })).statusCode).toBe(204);
    expect(await memberRole(changer.userId)).toBeUndefined();
    expect((await team.owner.get(invites(`/${invite.id}`))).json()).toMatchObject({
      status: 'declined',
      user_id: changer.userId,
    });
  });

  it('withdraws an invite of an address, naming the address in the project events', async () => {
    const email = freshAddress();
    const invite = (await team.owner.post(invites(), { email, role: 'guest' })).json();
    expect((await team.owner.del(invites(`/${invite.id}`))).statusCode).toBe(204);
    expect((await team.owner.get(invites(`/${invite.id}`))).statusCode).toBe(404);
    const events = (await team.owner.get(`${team.base}/events`)).json() as { description: string }[];
    expect(events.map((e) => e.description)).toEqual(
      expect.arrayContaining([`${email} invited to the team as guest`, `Invite of ${email} withdrawn`]),
    );
    // An account created with the address later finds nothing.
    const late = await accountFor(email, 'late-newcomer');
    expect((await late.get('/api/user/invites')).json()).toEqual([]);
  });
});

describe.each(testDialects())('e-mail invites without mail delivery on $name', (dialect) => {
  it('still makes the invite, and says the e-mail was not sent and why', async () => {
    for (const [config, status] of [
      [{ emailAlert: false }, 'not_configured'],
      // Nothing listens on port 1: the e-mail fails, and the server's log says so (never the token).
      [{ emailAlert: true, emailHost: '127.0.0.1', emailPort: 1, alertTimeout: 5 }, 'failed'],
    ] as const) {
      const h = await createHarness(dialect, config);
      try {
        const team = await createTeam(h, 'Unmailed');
        const res = await team.owner.post(`${team.base}/invites`, {
          email: 'someone@mail.example',
          role: 'guest',
        });
        expect(res.statusCode, res.body).toBe(201);
        expect(res.json()).toMatchObject({
          email: 'someone@mail.example',
          status: 'pending',
          mail_status: status,
        });
        const log = h.logLines.join('\n');
        expect(log).not.toContain(res.json().token);
        if (status === 'failed') expect(log).toContain('invite e-mail not delivered');
        // An invite of an existing user is not e-mailed: they find it in the console.
        const user = await h.userClient();
        const plain = await team.owner.post(`${team.base}/invites`, { user_id: user.userId, role: 'guest' });
        expect(plain.statusCode).toBe(201);
        expect(plain.json()).not.toHaveProperty('mail_status');
      } finally {
        await h.close();
      }
    }
  });
});
