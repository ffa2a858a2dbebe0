import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error oidc-provider ships no type declarations (a test-only dev dependency; no @types package added).
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import type { OidcProviderConfig } from '../../config';
import { findUserByLogin } from '../users/users.store';
import { groupsOf, mappedRoles } from './oidc.groups';
import { OIDC_COOKIE } from './oidc.routes';
import { safeLocalPath, webBasePath } from './oidc.service';

const APP = 'http://signalbox.test';
const CLIENT = { client_id: 'signalbox', client_secret: 'oidc-client-secret' };

/** People the local issuer knows, by account id. */
const accounts: Record<string, Record<string, unknown>> = {
  alice: {
    sub: 'alice',
    email: 'alice@idp.test',
    email_verified: true,
    name: 'Alice Idp',
    preferred_username: 'alice.idp',
  },
  localmatch: {
    sub: 'localmatch',
    email: 'local@example.test',
    name: 'Local Match',
    preferred_username: 'someone-else',
  },
  noemail: { sub: 'noemail', name: 'No Mail', preferred_username: 'nomail' },
};

/** A small OIDC issuer on 127.0.0.1 (random port) with the development login/consent pages. */
async function startIssuer(): Promise<{ issuer: string; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        ...CLIENT,
        redirect_uris: [
          `${APP}/api/auth/oidc/test/redirect`,
          `${APP}/api/auth/oidc/test/redirect/project/7/templates`,
          'http://localhost:80/api/auth/oidc/derived/redirect',
        ],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username', 'groups'],
    },
    findAccount: async (_ctx: unknown, id: string) =>
      accounts[id] ? { accountId: id, claims: async () => ({ sub: id, ...accounts[id] }) } : undefined,
    cookies: { keys: ['oidc-test-cookie-key'] },
    // Explicit lifetimes keep the issuer from printing a notice for each default.
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      Grant: 600,
      IdToken: 600,
      Interaction: 600,
      Session: 600,
    },
  });
  server.on('request', provider.callback());
  return { issuer, server };
}

/** Follows the issuer's redirects and login/consent forms like a browser, up to the redirect back to the app. */
async function signInAtIssuer(authorizationUrl: string, accountId: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = authorizationUrl;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form?.toString(),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const value = pair!.slice(at + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(pair!.slice(0, at));
      else jar.set(pair!.slice(0, at), value);
    }
    if (res.status >= 300 && res.status < 400) {
      const next = new URL(res.headers.get('location')!, url);
      if (next.origin === APP || next.origin === 'http://localhost:80' || next.host === 'localhost')
        return next;
      url = next.href;
      form = undefined;
      continue;
    }
    const html = await res.text();
    const prompt = html.match(/name="prompt" value="(\w+)"/)?.[1];
    const action = html.match(/<form[^>]*action="([^"]+)"/)?.[1];
    if (!prompt || !action) throw new Error(`unexpected issuer page (${res.status}): ${html.slice(0, 300)}`);
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
    form = new URLSearchParams(
      prompt === 'login' ? { prompt, login: accountId, password: 'any' } : { prompt: 'consent' },
    );
  }
  throw new Error('too many steps at the issuer');
}

const provider = (issuer: string, extra: Partial<OidcProviderConfig> = {}): OidcProviderConfig => ({
  display_name: 'Test IdP',
  provider_url: issuer,
  ...CLIENT,
  redirect_url: `${APP}/api/auth/oidc/test/redirect`,
  scopes: ['openid', 'profile', 'email'],
  username_claim: 'preferred_username',
  name_claim: 'name',
  email_claim: 'email',
  color: 'blue',
  icon: 'login',
  order: 1,
  groups_claim: 'groups',
  admin_groups: [],
  project_roles: [],
  ...extra,
});

describe('OIDC helpers', () => {
  it('keeps redirects on this site', () => {
    expect(safeLocalPath('/project/1/history?x=1')).toBe('/project/1/history?x=1');
    expect(safeLocalPath('project/1')).toBe('/project/1');
    expect(safeLocalPath('//evil.example/x')).toBe('/');
    expect(safeLocalPath('/\\evil.example')).toBe('/');
    expect(safeLocalPath('https://evil.example/')).toBe('/https://evil.example/');
    expect(safeLocalPath(undefined)).toBe('/');
  });

  it('reads groups from an array or a separated string and picks the highest mapped role', () => {
    expect([...groupsOf({ g: ['ops', ' dev ', 7, null, ''] }, 'g')]).toEqual(['ops', 'dev', '7']);
    expect([...groupsOf({ g: 'ops, dev  qa' }, 'g')]).toEqual(['ops', 'dev', 'qa']);
    expect([...groupsOf({}, 'g')]).toEqual([]);
    const p = provider('http://127.0.0.1:1', {
      project_roles: [
        { group: 'ops', project_id: 1, role: 'guest' },
        { group: 'leads', project_id: 1, role: 'manager' },
        { group: 'dev', project_id: 1, role: 'task_runner' },
        { group: 'ops', project_id: 2, role: 'owner' },
        { group: 'qa', project_id: 3, role: 'guest' },
      ],
    });
    expect([...mappedRoles(p, new Set(['ops', 'leads', 'dev']))]).toEqual([
      [1, 'manager'],
      [2, 'owner'],
      [3, null],
    ]);
  });

  it('reads the base path of the web root', () => {
    expect(webBasePath('')).toBe('');
    expect(webBasePath('https://ci.example.com/signalbox/')).toBe('/signalbox');
    expect(webBasePath('https://ci.example.com')).toBe('');
    expect(webBasePath('/sb/')).toBe('/sb');
  });
});

describe.each(testDialects())('OIDC sign-in on $name', (dialect) => {
  let issuer: string;
  let server: Server;
  let h: Harness;

  beforeAll(async () => {
    ({ issuer, server } = await startIssuer());
    h = await createHarness(dialect, {
      oidcProviders: {
        test: provider(issuer),
        derived: provider(issuer, { display_name: '', redirect_url: undefined, order: 2 }),
        down: provider('http://127.0.0.1:9/', { display_name: 'Down', order: 3 }),
      },
    });
  });
  afterAll(async () => {
    await h?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  /** GET …/login as a browser would: the issuer URL and the sealed state cookie. */
  async function startLogin(id = 'test', query = '') {
    const res = await h.anonymous().get(`/api/auth/oidc/${id}/login${query}`);
    expect(res.statusCode).toBe(302);
    const setCookie = String(res.headers['set-cookie']);
    const cookie = setCookie.split(';')[0]!;
    expect(cookie.startsWith(`${OIDC_COOKIE}=`)).toBe(true);
    return { location: String(res.headers.location), setCookie, cookie };
  }

  /** The whole chain: login → issuer → callback. Returns the callback response. */
  async function signIn(accountId: string, query = '') {
    const { location, cookie } = await startLogin('test', query);
    const back = await signInAtIssuer(location, accountId);
    return h.anonymous().request('GET', `${back.pathname}${back.search}`, undefined, { cookie });
  }

  const sessionOf = (res: { headers: Record<string, unknown> }) =>
    String(res.headers['set-cookie'])
      .split(/,(?=\s*\w+=)/)
      .map((c) => c.trim().split(';')[0]!)
      .find((c) => c.startsWith('signalbox='))!;

  it('lists the configured providers on the login options', async () => {
    const res = await h.anonymous().get('/api/auth/login');
    expect(res.statusCode).toBe(200);
    expect(res.json().oidc_providers).toEqual([
      { id: 'test', name: 'Test IdP', color: 'blue', icon: 'login' },
      { id: 'derived', name: 'derived', color: 'blue', icon: 'login' },
      { id: 'down', name: 'Down', color: 'blue', icon: 'login' },
    ]);
  });

  it('redirects to the authorization endpoint with PKCE, state and nonce, keeping them in an HttpOnly cookie', async () => {
    const { location, setCookie } = await startLogin();
    const url = new URL(location);
    expect(url.origin).toBe(issuer);
    expect(url.searchParams.get('client_id')).toBe('signalbox');
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('redirect_uri')).toBe(`${APP}/api/auth/oidc/test/redirect`);
    expect(url.searchParams.get('scope')).toBe('openid profile email');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('state')).toBeTruthy();
    expect(url.searchParams.get('nonce')).toBeTruthy();
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Path=\/api\/auth\/oidc/);
    // The cookie is sealed: neither the verifier nor the state is readable in it.
    expect(setCookie).not.toContain(url.searchParams.get('state')!);
  });

  it('derives the callback address from the request when redirect_url is not configured', async () => {
    const { location } = await startLogin('derived');
    expect(new URL(location).searchParams.get('redirect_uri')).toBe(
      'http://localhost:80/api/auth/oidc/derived/redirect',
    );
  });

  it('answers 404 for an unknown provider', async () => {
    for (const path of [
      '/api/auth/oidc/nope/login',
      '/api/auth/oidc/nope/redirect?code=x&state=y',
      '/api/auth/oidc/__proto__/login',
    ]) {
      const res = await h.anonymous().get(path);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('Sign-in provider not found');
    }
  });

  it('answers 502 with the reason when the provider cannot be reached', async () => {
    const res = await h.anonymous().get('/api/auth/oidc/down/login');
    expect(res.statusCode).toBe(502);
    expect(res.json().error).toMatch(/^Sign-in provider Down cannot be reached/);
  });

  it('creates an external, non-admin user on first sign-in and starts a session', async () => {
    const res = await signIn('alice');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/');
    const session = sessionOf(res);
    expect(session).toBeTruthy();
    expect(String(res.headers['set-cookie'])).toMatch(new RegExp(`${OIDC_COOKIE}=;`));
    const me = await h.anonymous().request('GET', '/api/user', undefined, { cookie: session });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({
      username: 'alice.idp',
      name: 'Alice Idp',
      email: 'alice@idp.test',
      external: true,
      admin: false,
      can_create_project: false,
    });
    const row = (await findUserByLogin(h.deps.db, 'alice.idp'))!;
    expect(row.password).toBe('');
    const events = await h.deps.db
      .selectFrom('event')
      .selectAll()
      .where('object_type', '=', 'user')
      .execute();
    expect(events.map((e) => e.description)).toContain('User alice.idp created (signed in with Test IdP)');

    // Signing in again finds the same user.
    const again = await signIn('alice');
    expect(again.statusCode).toBe(302);
    const users = await h.deps.db
      .selectFrom('user')
      .select('id')
      .where('email', '=', 'alice@idp.test')
      .execute();
    expect(users).toHaveLength(1);
  });

  it('refuses to open a local password account whose e-mail matches (403, no session)', async () => {
    const local = await h.userClient({ username: 'local' });
    const res = await signIn('localmatch');
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe(
      'A local account with the username or e-mail of this Test IdP user already exists; sign in with its password',
    );
    expect(String(res.headers['set-cookie'] ?? '')).not.toMatch(/(^|,\s*)signalbox=[^;]/);
    expect(await findUserByLogin(h.deps.db, 'someone-else')).toBeUndefined();
    expect((await local.get('/api/user')).json()).toMatchObject({ username: 'local', external: false });
  });

  it('signs in an existing external user whose e-mail matches', async () => {
    const created = await h.userClient({ username: 'extmatch' });
    await h.deps.db
      .updateTable('user')
      .set({ external: 1, email: 'extmatch@idp.test' })
      .where('id', '=', created.userId)
      .execute();
    accounts.extmatch = {
      sub: 'extmatch',
      email: 'extmatch@idp.test',
      name: 'Ext',
      preferred_username: 'ext-other',
    };
    const res = await signIn('extmatch');
    expect(res.statusCode).toBe(302);
    const me = await h.anonymous().request('GET', '/api/user', undefined, { cookie: sessionOf(res) });
    expect(me.json()).toMatchObject({ id: created.userId, username: 'extmatch', external: true });
  });

  it('maps provider groups to the admin flag and project roles at every sign-in', async () => {
    const owner = await h.userClient({ username: 'map-owner', can_create_project: true });
    const project = async (name: string) => (await owner.post('/api/projects', { name })).json().id as number;
    const [a, b, c] = [await project('Mapped A'), await project('Mapped B'), await project('Manual C')];
    const config = h.deps.config.oidcProviders!.test!;
    config.admin_groups = ['signalbox-admins'];
    config.project_roles = [
      { group: 'ops', project_id: a, role: 'manager' },
      { group: 'leads', project_id: a, role: 'owner' },
      { group: 'ops', project_id: b, role: 'guest' },
      { group: 'ops', project_id: 987654, role: 'guest' },
    ];
    try {
      accounts.grouped = {
        sub: 'grouped',
        email: 'grouped@idp.test',
        name: 'Grouped',
        preferred_username: 'grouped',
        groups: ['ops', 'signalbox-admins'],
      };
      const roles = async () => {
        const user = (await findUserByLogin(h.deps.db, 'grouped'))!;
        const rows = await h.deps.db
          .selectFrom('project_user')
          .select(['project_id', 'role'])
          .where('user_id', '=', user.id)
          .orderBy('project_id')
          .execute();
        return {
          admin: user.admin === 1,
          roles: Object.fromEntries(rows.map((r) => [r.project_id, r.role])),
        };
      };

      const first = await signIn('grouped');
      expect(first.statusCode).toBe(302);
      expect(await roles()).toEqual({ admin: true, roles: { [a]: 'manager', [b]: 'guest' } });
      const session = sessionOf(first);
      const me = await h.anonymous().request('GET', '/api/user', undefined, { cookie: session });
      expect(me.json()).toMatchObject({ admin: true, external: true });
      const team = await h
        .anonymous()
        .request('GET', `/api/project/${a}/role`, undefined, { cookie: session });
      expect(team.json().role).toBe('manager');
      const events = await h.deps.db
        .selectFrom('event')
        .select('description')
        .where('project_id', '=', a)
        .execute();
      expect(events.map((e) => e.description)).toContain(
        'User grouped added to the team as manager (groups of Test IdP)',
      );

      // An admin adds them by hand to a project the mapping does not name.
      const user = (await findUserByLogin(h.deps.db, 'grouped'))!;
      expect(
        (await owner.post(`/api/project/${c}/users`, { user_id: user.id, role: 'task_runner' })).statusCode,
      ).toBe(204);

      // Groups change (here as one string): the highest role wins, a lost group removes, admin is revoked.
      accounts.grouped.groups = 'leads other';
      expect((await signIn('grouped')).statusCode).toBe(302);
      expect(await roles()).toEqual({ admin: false, roles: { [a]: 'owner', [c]: 'task_runner' } });

      // No groups at all: mapped projects are left (A keeps its creator as owner); C is untouched.
      accounts.grouped.groups = [];
      expect((await signIn('grouped')).statusCode).toBe(302);
      expect(await roles()).toEqual({ admin: false, roles: { [c]: 'task_runner' } });

      // The last owner of a mapped project is never removed by a lost group.
      accounts.grouped.groups = ['leads'];
      await signIn('grouped');
      await h.deps.db
        .deleteFrom('project_user')
        .where('project_id', '=', a)
        .where('user_id', '=', owner.userId)
        .execute();
      accounts.grouped.groups = [];
      expect((await signIn('grouped')).statusCode).toBe(302);
      expect((await roles()).roles[a]).toBe('owner');
      expect(h.logLines.join('\n')).toContain('OIDC project_roles names a project that does not exist');
    } finally {
      config.admin_groups = [];
      config.project_roles = [];
    }
  });

  it('returns to the path kept since the login, never to another site', async () => {
    const kept = await signIn('alice', `?redirect=${encodeURIComponent('/project/3/history?tab=1')}`);
    expect(kept.headers.location).toBe('/project/3/history?tab=1');
    const evil = await signIn('alice', `?redirect=${encodeURIComponent('//evil.example/steal')}`);
    expect(evil.headers.location).toBe('/');
  });

  it('accepts the peer’s /redirect/{path} callback form', async () => {
    const { location, cookie } = await startLogin();
    const back = await signInAtIssuer(location, 'alice');
    const res = await h
      .anonymous()
      .request('GET', `/api/auth/oidc/test/redirect/project/7/templates${back.search}`, undefined, {
        cookie,
      });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/project/7/templates');
  });

  it('refuses a missing or bad state, a missing or bad code, and a provider error — never 5xx, no session', async () => {
    const { location, cookie } = await startLogin();
    const back = await signInAtIssuer(location, 'alice');
    const code = back.searchParams.get('code')!;
    const state = back.searchParams.get('state')!;
    const iss = encodeURIComponent(back.searchParams.get('iss')!);
    const call = (query: string, c = cookie) =>
      h
        .anonymous()
        .request('GET', `/api/auth/oidc/test/redirect?${query}`, undefined, c ? { cookie: c } : {});
    const cases: [Awaited<ReturnType<typeof call>>, number, string | RegExp][] = [
      [await call(`code=${code}&state=${state}`, ''), 400, /expired or was not started here/],
      [
        await call(`code=${code}&state=${state}`, `${OIDC_COOKIE}=tampered`),
        400,
        /expired or was not started here/,
      ],
      [
        await call(`code=${code}&state=wrong`),
        400,
        'The sign-in state does not match. Start the sign-in again.',
      ],
      [await call(`code=${code}`), 400, 'The sign-in state does not match. Start the sign-in again.'],
      [await call(`state=${state}`), 400, 'The sign-in response has no authorization code'],
      // Without the issuer's `iss` parameter the response is refused before any token request.
      [
        await call(`code=${code}&state=${state}`),
        401,
        'Sign-in with Test IdP failed. Start the sign-in again.',
      ],
      [
        await call(`code=not-a-real-code&state=${state}&iss=${iss}`),
        401,
        'Sign-in with Test IdP failed (invalid_grant). Start the sign-in again.',
      ],
      [
        await call(`error=access_denied&error_description=End-User+aborted+interaction&state=${state}`),
        401,
        'Sign-in with Test IdP was refused: End-User aborted interaction',
      ],
    ];
    for (const [res, status, message] of cases) {
      expect(res.statusCode).toBe(status);
      if (typeof message === 'string') expect(res.json().error).toBe(message);
      else expect(res.json().error).toMatch(message);
      expect(String(res.headers['set-cookie'] ?? '')).not.toMatch(/(^|,\s*)signalbox=[^;]/);
    }
    // The genuine code still works once (the failed attempts above did not consume it).
    const ok = await call(`code=${code}&state=${state}&iss=${iss}`);
    expect(ok.statusCode).toBe(302);
    // A code is single-use.
    const replay = await call(`code=${code}&state=${state}&iss=${iss}`);
    expect(replay.statusCode).toBe(401);
  });

  it('refuses a provider answer without an e-mail address', async () => {
    const res = await signIn('noemail');
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toBe('Sign-in with Test IdP did not return an e-mail address (claim "email")');
    expect(await findUserByLogin(h.deps.db, 'nomail')).toBeUndefined();
  });

  it('keeps the client secret out of the log', async () => {
    await signIn('alice');
    const log = h.logLines.join('\n');
    expect(log).not.toContain(CLIENT.client_secret);
  });
});
