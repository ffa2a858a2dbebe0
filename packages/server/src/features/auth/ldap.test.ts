import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'ldapts';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { freePort } from '../../../test/support/net';
import { groupLdif, personLdif, type Slapd, SUFFIX, startSlapd } from '../../../test/support/slapd';
import type { Config } from '../../config';
import { findUserByLogin } from '../users/users.store';
import { checkDirectoryPassword, DIRECTORY_REFUSED_SEARCH, DIRECTORY_UNREACHABLE } from './ldap.directory';

/**
 * LDAP sign-in against a real OpenLDAP server (slapd on loopback, plain, StartTLS and LDAPS with a test CA),
 * on every configured database: users created and refreshed from the directory, wrong passwords, LDAP
 * injection, anonymous-bind bypass, group mappings, TLS verification, an unreachable directory, and logs.
 */

const ROOT_PASSWORD = 'root-Directory-Secret-7';
const SERVICE_DN = `cn=signalbox,ou=services,${SUFFIX}`;
const SERVICE_PASSWORD = 'service-Bind-Secret-3';
const dn = (uid: string, ou = 'people') => `uid=${uid},ou=${ou},${SUFFIX}`;
const group = (cn: string) => `cn=${cn},ou=groups,${SUFFIX}`;

/** Each person's directory password: distinct strings, looked for in the logs at the end. */
const PASSWORDS = {
  alice: 'Alice-directory-Pw-41',
  bob: 'Bob-directory-Pw-42',
  carol: 'Carol-directory-Pw-43',
  dave: 'Dave-directory-Pw-44',
  twin: 'Twin-directory-Pw-45',
  localsam: 'Sam-directory-Pw-46',
  erin: 'Erin-directory-Pw-47',
};
const LOCAL_SAM_PASSWORD = 'Sam-local-Pw-99';

let slapd: Slapd;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'signalbox-slapd-'));
  // A bind with a DN and no password is an anonymous bind here, as on many directories.
  slapd = await startSlapd(dir, { rootPassword: ROOT_PASSWORD, allowAnonymousDnBind: true });
  slapd.add(
    [
      `dn: ${SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example\n`,
      ...['people', 'contractors', 'groups', 'services'].map(
        (ou) => `dn: ou=${ou},${SUFFIX}\nobjectClass: organizationalUnit\nou: ${ou}\n`,
      ),
      [
        `dn: ${SERVICE_DN}`,
        'objectClass: organizationalRole',
        'objectClass: simpleSecurityObject',
        'cn: signalbox',
        `userPassword: ${SERVICE_PASSWORD}`,
        '',
      ].join('\n'),
      personLdif({
        dn: dn('alice'),
        uid: 'alice',
        cn: 'Alice Liddell',
        mail: 'alice@example.org',
        password: PASSWORDS.alice,
      }),
      personLdif({
        dn: dn('bob'),
        uid: 'bob',
        cn: 'Bob Builder',
        mail: 'bob@example.org',
        password: PASSWORDS.bob,
      }),
      personLdif({ dn: dn('carol'), uid: 'carol', cn: 'Carol No Mail', password: PASSWORDS.carol }),
      personLdif({
        dn: dn('dave'),
        uid: 'dave',
        cn: 'Dave',
        mail: 'dave@example.org',
        password: PASSWORDS.dave,
      }),
      personLdif({
        dn: dn('erin'),
        uid: 'erin',
        cn: 'Erin',
        mail: 'erin@example.org',
        password: PASSWORDS.erin,
      }),
      personLdif({
        dn: dn('twin'),
        uid: 'twin',
        cn: 'Twin One',
        mail: 't1@example.org',
        password: PASSWORDS.twin,
      }),
      personLdif({
        dn: dn('twin', 'contractors'),
        uid: 'twin',
        cn: 'Twin Two',
        mail: 't2@example.org',
        password: PASSWORDS.twin,
      }),
      personLdif({
        dn: dn('localsam'),
        uid: 'localsam',
        cn: 'Sam In Directory',
        mail: 'sam@example.org',
        password: PASSWORDS.localsam,
      }),
      groupLdif(group('admins'), 'admins', [dn('alice')]),
      groupLdif(group('ops'), 'ops', [dn('alice')]),
      groupLdif(group('devs'), 'devs', [dn('bob')]),
    ].join('\n'),
  );
});

afterAll(async () => {
  await slapd?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The settings of the tests: plain LDAP, the service account, memberOf groups, `admins` are admins. */
const ldapSettings = (): Partial<Config> => ({
  ldapEnable: true,
  ldapServer: slapd.url,
  ldapBindDn: SERVICE_DN,
  ldapBindPassword: SERVICE_PASSWORD,
  ldapSearchDn: SUFFIX,
  ldapGroupAttribute: 'memberOf',
  ldapAdminGroups: ['admins'],
  ldapTimeout: 5,
});

describe.each(testDialects())('LDAP sign-in ($name)', (dialect) => {
  let h: Harness;
  let projectId: number;
  let addresses = 0;

  beforeAll(async () => {
    h = await createHarness(dialect, ldapSettings());
    const admin = await h.userClient({ admin: true });
    const res = await admin.post('/api/projects', { name: 'Directory project' });
    expect(res.statusCode).toBe(201);
    projectId = res.json().id;
    // `ops` (by DN, as written in the settings) manages the project; `devs` (by name) runs its tasks.
    Object.assign(h.config, {
      ldapProjectRoles: [
        { group: `CN=Ops, OU=Groups, ${SUFFIX.toUpperCase()}`, project_id: projectId, role: 'manager' },
        { group: 'devs', project_id: projectId, role: 'task_runner' },
      ],
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Signs in from an address of its own, so the tests' failures never add up in the throttle. */
  const signIn = (auth: string, password: string, remoteAddress?: string) =>
    h.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { auth, password },
      remoteAddress: remoteAddress ?? `198.51.${Math.floor(++addresses / 250)}.${(addresses % 250) + 1}`,
    });
  const cookieOf = (res: Awaited<ReturnType<typeof signIn>>) =>
    String(res.headers['set-cookie']).split(';')[0]!;
  const currentUser = async (res: Awaited<ReturnType<typeof signIn>>) =>
    (await h.app.inject({ method: 'GET', url: '/api/user', headers: { cookie: cookieOf(res) } })).json();
  const membership = async (userId: number) =>
    (
      await h.deps.db
        .selectFrom('project_user')
        .select('role')
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId)
        .executeTakeFirst()
    )?.role ?? null;
  /** Runs `work` with some settings changed, then puts them back. */
  const withSettings = async (patch: Partial<Config>, work: () => Promise<void>) => {
    const saved = Object.fromEntries(Object.keys(patch).map((k) => [k, h.config[k as keyof Config]]));
    Object.assign(h.config, patch);
    try {
      await work();
    } finally {
      Object.assign(h.config, saved);
    }
  };
  const incorrect = { error: 'Incorrect login or password', code: 'incorrect_login' };

  it('creates an external user at the first sign-in, with name and e-mail from the directory', async () => {
    expect(await findUserByLogin(h.deps.db, 'alice')).toBeUndefined();
    const res = await signIn('alice', PASSWORDS.alice);
    expect(res.statusCode, res.body).toBe(204);
    expect(await currentUser(res)).toMatchObject({
      username: 'alice',
      name: 'Alice Liddell',
      email: 'alice@example.org',
      external: true,
    });
    const row = await findUserByLogin(h.deps.db, 'alice');
    expect(row?.password).toBe('');
    const events = await h.deps.db
      .selectFrom('event')
      .select('description')
      .where('user_id', '=', row!.id)
      .execute();
    expect(events.map((e) => e.description)).toContain('User alice created (signed in with LDAP)');
    // Case does not matter to the directory, nor to the user it finds.
    const again = await signIn('ALICE', PASSWORDS.alice);
    expect(again.statusCode).toBe(204);
    expect((await currentUser(again)).id).toBe(row!.id);
  });

  it('brings name and e-mail up to date at later sign-ins', async () => {
    const first = await signIn('erin', PASSWORDS.erin);
    expect(first.statusCode).toBe(204);
    const { id } = await currentUser(first);
    const rename = (cn: string, mail: string) =>
      slapd.modify(
        `dn: ${dn('erin')}\nchangetype: modify\nreplace: cn\ncn: ${cn}\n-\nreplace: mail\nmail: ${mail}\n`,
      );
    rename('Erin Renamed', 'erin.new@example.org');
    try {
      const second = await signIn('erin', PASSWORDS.erin);
      expect(second.statusCode).toBe(204);
      expect(await currentUser(second)).toMatchObject({
        id,
        username: 'erin',
        name: 'Erin Renamed',
        email: 'erin.new@example.org',
      });
    } finally {
      // The directory is shared by the databases' runs.
      rename('Erin', 'erin@example.org');
    }
    expect(
      await h.deps.db.selectFrom('user').select('id').where('username', '=', 'erin').execute(),
    ).toHaveLength(1);
  });

  it('answers a wrong password, an unknown login and a right password of another user as a local one', async () => {
    const local = await h.userClient();
    const localWrong = await signIn(local.username, 'not-the-password');
    expect(localWrong.statusCode).toBe(401);
    const expected = { ...incorrect, request_id: undefined };
    for (const [auth, password] of [
      ['alice', 'wrong-password'],
      ['alice', PASSWORDS.bob],
      ['nobody-in-directory', 'whatever'],
    ] as const) {
      const res = await signIn(auth, password);
      expect(res.statusCode, auth).toBe(401);
      expect({ ...res.json(), request_id: undefined }).toEqual(expected);
    }
    expect({ ...localWrong.json(), request_id: undefined }).toEqual(expected);
    expect(await findUserByLogin(h.deps.db, 'nobody-in-directory')).toBeUndefined();
  });

  it('escapes the login in the search filter: wildcards and filter syntax match nothing', async () => {
    const mark = slapd.log.length;
    for (const auth of ['al*', '*', 'admin)(|(uid=*', 'alice)(uid=*', 'alice\\', '(uid=alice)']) {
      // With alice's password: an unescaped `al*` or `alice)(uid=*` would find her entry and sign in.
      const res = await signIn(auth, PASSWORDS.alice);
      expect(res.statusCode, auth).toBe(401);
      expect(res.json(), auth).toMatchObject(incorrect);
    }
    const filters = slapd.searchFilters(mark);
    expect(filters).toContain('(&(objectClass=inetOrgPerson)(uid=al\\2A))');
    expect(filters).toContain('(&(objectClass=inetOrgPerson)(uid=\\2A))');
    expect(filters).toContain('(&(objectClass=inetOrgPerson)(uid=admin\\29\\28|\\28uid=\\2A))');
    expect(filters).toContain('(&(objectClass=inetOrgPerson)(uid=alice\\5C))');
    // No bind as alice came of it.
    expect(slapd.binds(mark).filter((line) => line.includes(dn('alice')))).toEqual([]);
    // A NUL never reaches the directory: the request is refused first.
    const nul = await signIn('alice\u0000', PASSWORDS.alice);
    expect(nul.statusCode).toBe(400);
  });

  it('never binds with an empty password (an anonymous bind the directory would accept)', async () => {
    // The directory does take a bind of alice's DN without a password, as anonymous.
    const raw = new Client({ url: slapd.url });
    await raw.bind(dn('alice'), '');
    await raw.unbind();

    const mark = slapd.log.length;
    const res = await signIn('alice', '');
    expect(res.statusCode).toBe(400);
    const answer = await checkDirectoryPassword(h.config, 'alice', '', pino({ level: 'silent' }));
    expect(answer).toBe('refused');
    expect(slapd.binds(mark)).toEqual([]);
  });

  it('maps directory groups to admin and project roles at every sign-in', async () => {
    const alice = await signIn('alice', PASSWORDS.alice);
    expect(alice.statusCode).toBe(204);
    const a = await currentUser(alice);
    expect(a.admin).toBe(true);
    expect(await membership(a.id)).toBe('manager');

    const bob = await signIn('bob', PASSWORDS.bob);
    const b = await currentUser(bob);
    expect(b.admin).toBe(false);
    expect(await membership(b.id)).toBe('task_runner');

    // Out of `devs`: off the project at the next sign-in.
    const devs = (member: string) =>
      slapd.modify(`dn: ${group('devs')}\nchangetype: modify\nreplace: member\nmember: ${member}\n`);
    devs(dn('dave'));
    try {
      expect((await signIn('bob', PASSWORDS.bob)).statusCode).toBe(204);
      expect(await membership(b.id)).toBeNull();
    } finally {
      devs(dn('bob'));
    }

    // The same from a group search instead of memberOf: an admin taken down by hand is one again.
    await h.deps.db.updateTable('user').set({ admin: 0 }).where('id', '=', a.id).execute();
    await withSettings({ ldapGroupAttribute: '', ldapGroupSearchDn: `ou=groups,${SUFFIX}` }, async () => {
      const mark = slapd.log.length;
      const again = await signIn('alice', PASSWORDS.alice);
      expect(again.statusCode).toBe(204);
      expect((await currentUser(again)).admin).toBe(true);
      expect(slapd.searchFilters(mark)).toContain(`(|(member=${dn('alice')})(uniqueMember=${dn('alice')}))`);
    });
    const events = await h.deps.db
      .selectFrom('event')
      .select('description')
      .where('object_id', '=', b.id)
      .execute();
    expect(events.map((e) => e.description)).toContain(
      'User bob added to the team as task_runner (groups in the LDAP directory)',
    );
  });

  it('keeps local users on their own passwords, never asking the directory', async () => {
    await h.userClient({ username: 'localsam', password: LOCAL_SAM_PASSWORD });
    const mark = slapd.log.length;
    expect((await signIn('localsam', LOCAL_SAM_PASSWORD)).statusCode).toBe(204);
    expect((await signIn('localsam', PASSWORDS.localsam)).statusCode).toBe(401);
    expect(slapd.searchFilters(mark)).toEqual([]);
    expect((await findUserByLogin(h.deps.db, 'localsam'))?.external).toBe(0);
  });

  it('refuses a directory user whose e-mail a local user has, and an entry without e-mail', async () => {
    await h.deps.db
      .updateTable('user')
      .set({ email: 'dave@example.org' })
      .where('username', '=', 'localsam')
      .execute();
    const dave = await signIn('dave', PASSWORDS.dave);
    expect(dave.statusCode).toBe(403);
    expect(dave.json().error).toBe(
      'A local account with the username or e-mail of this LDAP user already exists; sign in with its password',
    );
    const carol = await signIn('carol', PASSWORDS.carol);
    expect(carol.statusCode).toBe(403);
    expect(carol.json().error).toContain('no e-mail address');
    expect(await findUserByLogin(h.deps.db, 'dave')).toBeUndefined();
    expect(await findUserByLogin(h.deps.db, 'carol')).toBeUndefined();
  });

  it('refuses a login that matches two entries', async () => {
    const res = await signIn('twin', PASSWORDS.twin);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject(incorrect);
    expect(h.logLines.join('\n')).toContain('the search filter matches more than one entry');
  });

  it('counts failed directory sign-ins in the throttle', async () => {
    const from = '203.0.113.77';
    for (let i = 0; i < 5; i++) expect((await signIn('bob', `wrong-${i}`, from)).statusCode).toBe(401);
    const mark = slapd.log.length;
    const throttled = await signIn('bob', PASSWORDS.bob, from);
    expect(throttled.statusCode).toBe(429);
    expect(throttled.headers['retry-after']).toBeDefined();
    // Refused before the directory was asked.
    expect(slapd.binds(mark)).toEqual([]);
  });

  describe('TLS', () => {
    const ldaps = () => slapd.ldapsUrl;
    const port = (url: string) => url.replace(/^.*:/, '');

    it('LDAPS with the CA configured', async () => {
      await withSettings({ ldapServer: ldaps(), ldapCaFile: slapd.caFile }, async () => {
        expect((await signIn('alice', PASSWORDS.alice)).statusCode).toBe(204);
      });
      // The peer's form: host:port with NEEDTLS.
      await withSettings(
        { ldapServer: `127.0.0.1:${port(ldaps())}`, ldapNeedTls: true, ldapCaFile: slapd.caFile },
        async () => {
          expect((await signIn('alice', PASSWORDS.alice)).statusCode).toBe(204);
        },
      );
    });

    it('LDAPS refuses a certificate no trusted CA signed, unless verification is turned off', async () => {
      for (const ldapCaFile of [undefined, slapd.otherCaFile]) {
        await withSettings({ ldapServer: ldaps(), ldapCaFile }, async () => {
          const res = await signIn('alice', PASSWORDS.alice);
          expect(res.statusCode).toBe(503);
          expect(res.json()).toMatchObject({ code: DIRECTORY_UNREACHABLE.code });
        });
      }
      expect(h.logLines.join('\n')).toMatch(/certificate/i);
      await withSettings({ ldapServer: ldaps(), ldapTlsSkipVerify: true }, async () => {
        expect((await signIn('alice', PASSWORDS.alice)).statusCode).toBe(204);
      });
    });

    it('StartTLS verifies the certificate the same way', async () => {
      await withSettings({ ldapStartTls: true, ldapCaFile: slapd.caFile }, async () => {
        expect((await signIn('alice', PASSWORDS.alice)).statusCode).toBe(204);
      });
      await withSettings({ ldapStartTls: true, ldapCaFile: undefined }, async () => {
        const mark = slapd.log.length;
        const res = await signIn('alice', PASSWORDS.alice);
        expect(res.statusCode).toBe(503);
        expect(res.json()).toMatchObject({ code: DIRECTORY_UNREACHABLE.code });
        // Nothing was sent in the clear after the failed upgrade: no bind at all.
        expect(slapd.binds(mark)).toEqual([]);
      });
      await withSettings({ ldapStartTls: true, ldapTlsSkipVerify: true }, async () => {
        expect((await signIn('alice', PASSWORDS.alice)).statusCode).toBe(204);
      });
    });
  });

  describe('an unreachable or misconfigured directory', () => {
    it('answers 503 naming the directory when nothing listens', async () => {
      const closed = await freePort();
      await withSettings({ ldapServer: `ldap://127.0.0.1:${closed}` }, async () => {
        const res = await signIn('alice', PASSWORDS.alice);
        expect(res.statusCode).toBe(503);
        expect(res.json()).toMatchObject({ code: DIRECTORY_UNREACHABLE.code });
      });
      // Local users still sign in.
      const local = await h.userClient();
      expect((await signIn(local.username, local.password)).statusCode).toBe(204);
    });

    it('gives up on a directory that never answers after the timeout', async () => {
      const sockets: Socket[] = [];
      const silent: Server = createServer((socket) => void sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const { port } = silent.address() as { port: number };
      try {
        await withSettings({ ldapServer: `ldap://127.0.0.1:${port}`, ldapTimeout: 1 }, async () => {
          const started = Date.now();
          const res = await signIn('alice', PASSWORDS.alice);
          expect(res.statusCode).toBe(503);
          expect(res.json()).toMatchObject({ code: DIRECTORY_UNREACHABLE.code });
          expect(Date.now() - started).toBeLessThan(10_000);
        });
      } finally {
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      }
    });

    it('gives up on a StartTLS handshake that never finishes', async () => {
      // Answers the StartTLS request with success, then says nothing more.
      const sockets: Socket[] = [];
      const stalling: Server = createServer((socket) => {
        sockets.push(socket);
        socket.once('data', (request: Buffer) => {
          // LDAPMessage { messageID (echoed), ExtendedResponse { success, "", "" } }
          const id = request.subarray(2, 4 + (request[3] ?? 0));
          socket.write(
            Buffer.from([0x30, 9 + id.length, ...id, 0x78, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00]),
          );
        });
      });
      await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
      const { port } = stalling.address() as { port: number };
      try {
        await withSettings(
          { ldapServer: `ldap://127.0.0.1:${port}`, ldapStartTls: true, ldapTimeout: 1 },
          async () => {
            const started = Date.now();
            const res = await signIn('alice', PASSWORDS.alice);
            expect(res.statusCode).toBe(503);
            expect(res.json()).toMatchObject({ code: DIRECTORY_UNREACHABLE.code });
            expect(Date.now() - started).toBeLessThan(10_000);
          },
        );
        expect(h.logLines.join('\n')).toContain('TLS handshake timed out');
      } finally {
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => stalling.close(() => resolve()));
      }
    });

    it('answers 503 when the directory refuses the service account', async () => {
      await withSettings({ ldapBindPassword: 'not-the-service-password' }, async () => {
        const res = await signIn('alice', PASSWORDS.alice);
        expect(res.statusCode).toBe(503);
        expect(res.json()).toMatchObject({ code: DIRECTORY_REFUSED_SEARCH.code });
      });
    });
  });

  it('never writes a password to the log', async () => {
    const log = h.logLines.join('\n');
    // The log does tell what went wrong.
    expect(log).toContain('LDAP sign-in failed: the directory cannot be reached');
    expect(log).toContain('LDAP sign-in refused by the directory');
    for (const secret of [...Object.values(PASSWORDS), SERVICE_PASSWORD, ROOT_PASSWORD, LOCAL_SAM_PASSWORD])
      expect(log).not.toContain(secret);
  });
});
