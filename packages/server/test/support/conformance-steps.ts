import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { FIXTURE_OUTPUT, FIXTURE_VAULT, type Fixtures } from './conformance-fixtures';
import type { Client, Harness } from './harness';
import { waitForStatus } from './task-fixtures';

/**
 * The steps of the Swagger conformance test: one per operation of the document (but NOT_EXERCISED), each sent on
 * fresh fixtures with the body the document's own definition gives, and one per documented error status.
 */

/** What the steps share beyond their fixtures: the harness, an administrator and the run's git repository. */
export type Ctx = {
  h: Harness;
  /** An administrator who owns every fixture project. */
  admin: Client;
  /** The git repository the fixtures' templates run (run.sh). */
  repo: string;
  /** Callers a step's `before` set up for the call (a session signed in to be signed out). */
  callers: Record<string, Client>;
  /** Values a step's `before` left for the call and its checks (a token, a task id). */
  notes: Record<string, string>;
};

export type Step = {
  op: string;
  /** The caller (default: the administrator who owns the fixtures). */
  as?: (c: Ctx, f: Fixtures) => Client;
  /** Prepares what the call needs beyond the fixtures: a session to end, a token to delete, a task to stop. */
  before?: (c: Ctx, f: Fixtures) => Promise<void>;
  /** Path ids replacing the fixtures' own (a spare object for a DELETE, a task `before` started). */
  path?: (c: Ctx, f: Fixtures) => Record<string, unknown>;
  /**
   * A change to the body built from the document's definition. Each change either follows a deliberate
   * difference (`difference`: the start of its bullet in docs/api-differences.md) or
   * gives what the document cannot (`because`: a password, which no example carries).
   */
  body?: (example: Record<string, unknown>, c: Ctx, f: Fixtures) => unknown;
  difference?: string;
  because?: string;
  /** The status expected when the operation documents no success code. */
  status?: number;
  /** Further checks of the answer. */
  after?: (res: LightMyRequestResponse, c: Ctx, f: Fixtures) => Promise<void> | void;
};

/** The Login example's account (`auth` is the definition's x-example; the document gives no password). */
export const LOGIN = { email: 'user@semaphoreui.com', password: 'Correct-Horse-42' };

/** A client that sends `token` as its bearer token. */
export const bearer = (c: Ctx, token: string): Client => signedWith(c, { authorization: `Bearer ${token}` });

/** A client that sends the session cookie of a sign-in, as the console does. */
export const signedWith = (c: Ctx, headers: Record<string, string>): Client => {
  const anonymous = c.h.anonymous();
  return {
    ...anonymous,
    request: (method, url, body, more = {}) => anonymous.request(method, url, body, { ...headers, ...more }),
    get: (url) => anonymous.request('GET', url, undefined, headers),
    post: (url, body) => anonymous.request('POST', url, body ?? {}, headers),
    put: (url, body) => anonymous.request('PUT', url, body ?? {}, headers),
    del: (url) => anonymous.request('DELETE', url, undefined, headers),
  };
};

const signIn = async (c: Ctx, auth: string, password: string) =>
  c.h.anonymous().post('/api/auth/login', { auth, password });

const tokenIds = async (c: Ctx) =>
  ((await c.admin.get('/api/user/tokens')).json() as { id: string }[]).map((t) => t.id);

/** Starts a task of the fixtures' template (its run.sh) and notes its id. */
async function startTask(c: Ctx, f: Fixtures) {
  const res = await c.admin.post(`/api/project/${f.project_id}/tasks`, { template_id: f.template_id });
  expect(res.statusCode, res.body).toBe(201);
  c.notes.task = String(res.json().id);
}

const ended = ['success', 'error', 'stopped'];

/**
 * Every exercised operation. Each runs on its own fresh fixtures, so none depends on another: reads see the
 * fixtures, writes change them, DELETEs remove a spare object nothing uses.
 */
export const STEPS: Step[] = [
  // Public and session operations.
  {
    op: 'GET /ping',
    as: (c) => c.h.anonymous(),
    after: (res) => expect(res.body).toBe('pong'),
  },
  { op: 'GET /info' },
  { op: 'GET /apps' },
  { op: 'GET /auth/login', as: (c) => c.h.anonymous() },
  {
    op: 'POST /auth/login',
    as: (c) => c.h.anonymous(),
    body: (example) => ({ ...example, password: LOGIN.password }),
    because: "the Login definition has no example password: the example account's is given",
    after: async (res, c) => {
      const cookie = String(res.headers['set-cookie']).split(';')[0]!;
      expect(cookie).toMatch(/=/);
      const me = await signedWith(c, { cookie, 'sec-fetch-site': 'same-origin' }).get('/api/user');
      expect(me.json().email).toBe(LOGIN.email);
    },
  },
  {
    op: 'POST /auth/logout',
    before: async (c) => {
      const res = await signIn(c, LOGIN.email, LOGIN.password);
      expect(res.statusCode).toBe(204);
      const cookie = String(res.headers['set-cookie']).split(';')[0]!;
      c.callers.signedIn = signedWith(c, { cookie, 'sec-fetch-site': 'same-origin' });
    },
    as: (c) => c.callers.signedIn!,
    after: async (_res, c) => {
      expect((await c.callers.signedIn!.get('/api/user')).statusCode, 'the session ended').toBe(401);
    },
  },
  { op: 'GET /user/' },
  // Tokens are used the way Semaphore clients use them: the created token as the bearer, deleted by the id the
  // list shows for it. A token past its expiry stays listed, as expired.
  {
    op: 'GET /user/tokens',
    before: async (c) => {
      const made = (await c.admin.post('/api/user/tokens', { name: 'ran out', expires_in_days: 1 })).json();
      await c.h.deps.db
        .updateTable('api_token')
        .set({ expires: new Date(Date.now() - 60_000).toISOString() })
        .where('id', '=', made.token_id)
        .execute();
      c.notes.expiredToken = made.token_id;
    },
    after: (res, c) => {
      expect(res.json()).toContainEqual(expect.objectContaining({ id: c.notes.expiredToken, expired: true }));
    },
  },
  {
    op: 'POST /user/tokens',
    after: async (res, c) => {
      const token = res.json().token as string;
      expect(typeof token).toBe('string');
      const me = await bearer(c, token).get('/api/user');
      expect(me.statusCode, 'the new token signs requests in').toBe(200);
      expect(me.json().id).toBe(c.admin.userId);
    },
  },
  {
    op: 'DELETE /user/tokens/{api_token_id}',
    before: async (c) => {
      const before = await tokenIds(c);
      c.notes.token = (await c.admin.post('/api/user/tokens')).json().token;
      const listed = (await tokenIds(c)).filter((id) => !before.includes(id));
      expect(listed).toHaveLength(1);
      c.notes.listedToken = listed[0]!;
    },
    path: (c) => ({ api_token_id: c.notes.listedToken }),
    after: async (_res, c) => {
      expect((await bearer(c, c.notes.token!).get('/api/user')).statusCode, 'the token stopped').toBe(401);
    },
  },

  // Users: the fixtures' member is read, changed and deleted.
  { op: 'GET /users' },
  { op: 'GET /users/{user_id}/' },
  {
    // The UserRequest example has no password: the user is created without one, and no password signs in.
    op: 'POST /users',
    after: async (res, c) => {
      const { username } = res.json();
      expect((await signIn(c, username, '')).statusCode).toBe(400);
      expect((await signIn(c, username, 'any-password')).statusCode).toBe(401);
    },
  },
  { op: 'PUT /users/{user_id}/' },
  {
    op: 'POST /users/{user_id}/password',
    body: (example) => ({ ...example, password: 'New-Horse-43' }),
    because: 'the document gives no example password',
    after: async (_res, c, f) => {
      const login = await signIn(c, f.member.username, 'New-Horse-43');
      expect(login.statusCode, 'the user signs in with the new password').toBe(204);
    },
  },

  // Projects.
  { op: 'GET /projects' },
  {
    op: 'POST /projects',
    // Its project goes again: a user's projects have distinct names, and the PUT below renames one to the same.
    after: async (res, c) => {
      expect((await c.admin.del(`/api/project/${res.json().id}`)).statusCode).toBe(204);
    },
  },
  { op: 'GET /project/{project_id}/' },
  { op: 'PUT /project/{project_id}/' },
  { op: 'GET /project/{project_id}/role' },
  {
    op: 'GET /project/{project_id}/backup',
    after: (res) => {
      const [template] = res.json().templates.filter((t: { name: string }) => t.name === 't');
      expect(template.vaults).toEqual([
        { name: FIXTURE_VAULT, type: 'password', vault_key: 'k', script: null },
      ]);
    },
  },
  {
    op: 'POST /projects/restore',
    after: async (_res, c, f) => {
      // The project's own backup, restored, keeps its template's vault under its name.
      const backup = (await c.admin.get(`/api/project/${f.project_id}/backup`)).json();
      const restored = await c.admin.post('/api/projects/restore', backup);
      expect(restored.statusCode, restored.body).toBe(200);
      const templates = (await c.admin.get(`/api/project/${restored.json().id}/templates`)).json();
      expect(templates.find((t: { name: string }) => t.name === 't').vaults).toEqual([
        expect.objectContaining({ name: FIXTURE_VAULT, type: 'password' }),
      ]);
    },
  },
  { op: 'GET /events' },
  { op: 'GET /events/last' },
  { op: 'GET /project/{project_id}/events' },
  {
    // Swagger lists only 409 (the 204 of a project with alerts on is commented out in the document): the fixture
    // project has alerts off. The peer's behaviour with alerts on is to send the test alerts and answer 204.
    op: 'POST /project/{project_id}/notifications/test',
    status: 409,
    after: async (_res, c, f) => {
      const project = `/api/project/${f.project_id}`;
      expect((await c.admin.put(project, { name: f.project_name, alert: true })).statusCode).toBe(204);
      expect((await c.admin.post(`${project}/notifications/test`)).statusCode).toBe(204);
    },
  },

  // Team and invites: the member's role changes; the user who is no member joins.
  { op: 'GET /project/{project_id}/users' },
  { op: 'POST /project/{project_id}/users' },
  {
    op: 'PUT /project/{project_id}/users/{user_id}',
    after: async (_res, c, f) => {
      const team = (await c.admin.get(`/api/project/${f.project_id}/users`)).json() as {
        user_id: number;
        role: string;
      }[];
      expect(team.find((m) => m.user_id === f.member.userId)?.role).toBe('owner');
    },
  },
  { op: 'GET /project/{project_id}/invites' },
  {
    // The example's address has no account: the invite is e-mailed (no mail is set up here, and the answer says
    // so) and reads without a user, as the peer's.
    op: 'POST /project/{project_id}/invites',
    after: (res) => {
      const invite = res.json();
      expect(invite).toMatchObject({
        email: 'user@example.com',
        role: 'manager',
        status: 'pending',
        mail_status: 'not_configured',
      });
      for (const field of ['user_id', 'user', 'accepted_at']) expect(invite).not.toHaveProperty(field);
      expect(typeof invite.token, 'the token is shown once, at creation').toBe('string');
    },
  },
  { op: 'GET /project/{project_id}/invites/{invite_id}' },

  // Key store, repositories, inventories, environments.
  { op: 'GET /project/{project_id}/keys' },
  {
    // The example's name is `None`, the name of the key every project starts with.
    op: 'POST /project/{project_id}/keys',
    body: (example) => ({ ...example, name: 'Conformance key' }),
    difference: 'Names are unique in a project',
  },
  {
    op: 'PUT /project/{project_id}/keys/{key_id}',
    body: (example) => ({ ...example, name: 'Conformance key' }),
    difference: 'Names are unique in a project',
  },
  { op: 'GET /project/{project_id}/repositories' },
  { op: 'GET /project/{project_id}/repositories/{repository_id}' },
  // The peer's example URL "git@example.com" has no path: git reads a colon-less string as a local relative
  // path, not an SSH address. The scp-like form the peer's UI means is used instead.
  {
    op: 'POST /project/{project_id}/repositories',
    body: (example) => ({ ...example, git_url: 'git@example.com:semaphoreui/semaphore-demo.git' }),
    difference: 'A repository URL names a path',
  },
  {
    op: 'PUT /project/{project_id}/repositories/{repository_id}',
    body: (example) => ({ ...example, git_url: 'git@example.com:semaphoreui/semaphore-demo.git' }),
    difference: 'A repository URL names a path',
  },
  { op: 'GET /project/{project_id}/inventory' },
  { op: 'GET /project/{project_id}/inventory/{inventory_id}' },
  { op: 'POST /project/{project_id}/inventory' },
  { op: 'PUT /project/{project_id}/inventory/{inventory_id}' },
  { op: 'GET /project/{project_id}/environment' },
  { op: 'GET /project/{project_id}/environment/{environment_id}' },
  { op: 'POST /project/{project_id}/environment' },
  { op: 'PUT /project/{project_id}/environment/{environment_id}' },

  // Views, templates (the example's vault is a password script: the caller is an administrator), schedules.
  { op: 'GET /project/{project_id}/views' },
  { op: 'GET /project/{project_id}/views/{view_id}' },
  { op: 'POST /project/{project_id}/views' },
  { op: 'PUT /project/{project_id}/views/{view_id}' },
  { op: 'GET /project/{project_id}/templates' },
  { op: 'GET /project/{project_id}/templates/{template_id}' },
  { op: 'POST /project/{project_id}/templates' },
  { op: 'PUT /project/{project_id}/templates/{template_id}' },
  { op: 'GET /project/{project_id}/schedules/{schedule_id}' },
  { op: 'POST /project/{project_id}/schedules' },
  { op: 'PUT /project/{project_id}/schedules/{schedule_id}' },

  // Integrations with their extracted values and matchers.
  { op: 'GET /project/{project_id}/integrations' },
  { op: 'GET /project/{project_id}/integrations/{integration_id}' },
  { op: 'GET /project/{project_id}/integrations/{integration_id}/values' },
  { op: 'GET /project/{project_id}/integrations/{integration_id}/matchers' },
  { op: 'POST /project/{project_id}/integrations' },
  { op: 'PUT /project/{project_id}/integrations/{integration_id}' },
  { op: 'POST /project/{project_id}/integrations/{integration_id}/values' },
  { op: 'PUT /project/{project_id}/integrations/{integration_id}/values/{extractvalue_id}' },
  { op: 'POST /project/{project_id}/integrations/{integration_id}/matchers' },
  { op: 'PUT /project/{project_id}/integrations/{integration_id}/matchers/{matcher_id}' },

  // Tasks: the fixtures' task ran and wrote output; POST starts one of the fixtures' template.
  { op: 'GET /project/{project_id}/tasks' },
  { op: 'GET /project/{project_id}/tasks/last' },
  { op: 'GET /project/{project_id}/tasks/{task_id}' },
  {
    op: 'GET /project/{project_id}/tasks/{task_id}/output',
    after: (res) => expect((res.json() as { output: string }[]).map((l) => l.output)).toEqual(FIXTURE_OUTPUT),
  },
  {
    op: 'GET /project/{project_id}/tasks/{task_id}/raw_output',
    after: (res) => expect(res.body).toBe(`${FIXTURE_OUTPUT.join('\n')}\n`),
  },
  {
    op: 'POST /project/{project_id}/tasks',
    after: async (res, c) => {
      expect(res.json().template_id).toBeGreaterThan(0);
      await waitForStatus(c.h.deps, res.json().id, ['success']);
    },
  },
  {
    op: 'POST /project/{project_id}/tasks/{task_id}/stop',
    before: startTask,
    path: (c) => ({ task_id: c.notes.task }),
    after: async (_res, c) => {
      await waitForStatus(c.h.deps, Number(c.notes.task), ended);
    },
  },
  {
    op: 'POST /project/{project_id}/templates/{template_id}/stop_all_tasks',
    before: startTask,
    after: async (_res, c) => {
      await waitForStatus(c.h.deps, Number(c.notes.task), ended);
    },
  },

  // Deletes: the fixtures' own objects, or a spare one where others refer to the fixtures'.
  { op: 'DELETE /project/{project_id}/integrations/{integration_id}/matchers/{matcher_id}' },
  { op: 'DELETE /project/{project_id}/integrations/{integration_id}/values/{extractvalue_id}' },
  { op: 'DELETE /project/{project_id}/integrations/{integration_id}' },
  { op: 'DELETE /project/{project_id}/schedules/{schedule_id}' },
  {
    op: 'DELETE /project/{project_id}/templates/{template_id}',
    path: (_c, f) => ({ template_id: f.spare.template_id }),
  },
  { op: 'DELETE /project/{project_id}/views/{view_id}', path: (_c, f) => ({ view_id: f.spare.view_id }) },
  {
    op: 'DELETE /project/{project_id}/environment/{environment_id}',
    path: (_c, f) => ({ environment_id: f.spare.environment_id }),
  },
  {
    op: 'DELETE /project/{project_id}/inventory/{inventory_id}',
    path: (_c, f) => ({ inventory_id: f.spare.inventory_id }),
  },
  {
    op: 'DELETE /project/{project_id}/repositories/{repository_id}',
    path: (_c, f) => ({ repository_id: f.spare.repository_id }),
  },
  { op: 'DELETE /project/{project_id}/keys/{key_id}', path: (_c, f) => ({ key_id: f.spare.key_id }) },
  { op: 'DELETE /project/{project_id}/users/{user_id}' },
  { op: 'DELETE /project/{project_id}/tasks/{task_id}' },
  { op: 'DELETE /users/{user_id}/' },
  { op: 'DELETE /project/{project_id}/' },
];

/** A request the document says is refused, with the status it lists for that. */
export type ErrorStep = {
  op: string;
  status: number;
  as?: (c: Ctx) => Client;
  before?: (c: Ctx, f: Fixtures) => Promise<void>;
  path?: (c: Ctx, f: Fixtures) => Record<string, unknown>;
  /** The example body made invalid in the way the document's description of the status names. */
  body?: (example: Record<string, unknown>) => unknown;
};

/**
 * Every non-success status the document lists (but the redirects of the OIDC flow), each provoked the way the
 * document describes it, on fresh fixtures (a refused write changes nothing).
 */
export const ERROR_STEPS: ErrorStep[] = [
  // The upgrade itself is not exercised (see NOT_EXERCISED); its refusal without a session is a plain answer.
  { op: 'GET /ws', status: 401, as: (c) => c.h.anonymous() },
  // "something in body is missing / is invalid": the example, which has no password.
  { op: 'POST /auth/login', status: 400, as: (c) => c.h.anonymous() },
  // "User creation failed": a user needs a username.
  { op: 'POST /users', status: 400, body: ({ username: _username, ...rest }) => rest },
  // "missing user_id/email"
  { op: 'POST /project/{project_id}/invites', status: 400, body: ({ email: _email, ...rest }) => rest },
  // "invitation already exists": the example's invite was just made.
  {
    op: 'POST /project/{project_id}/invites',
    status: 409,
    before: async (c, f) => {
      const made = await c.admin.post(`/api/project/${f.project_id}/invites`, {
        email: 'user@example.com',
        role: 'manager',
      });
      expect(made.statusCode).toBe(201);
    },
  },
  { op: 'GET /project/{project_id}/invites/{invite_id}', status: 404, path: () => ({ invite_id: 999_999 }) },
  // "Bad Integration Extract Value params" / "Bad Integration Matcher params"
  {
    op: 'POST /project/{project_id}/integrations/{integration_id}/values',
    status: 400,
    body: (example) => ({ ...example, value_source: 'cookie' }),
  },
  {
    op: 'PUT /project/{project_id}/integrations/{integration_id}/values/{extractvalue_id}',
    status: 400,
    body: (example) => ({ ...example, value_source: 'cookie' }),
  },
  {
    op: 'POST /project/{project_id}/integrations/{integration_id}/matchers',
    status: 400,
    body: (example) => ({ ...example, method: 'matches' }),
  },
  {
    op: 'PUT /project/{project_id}/integrations/{integration_id}/matchers/{matcher_id}',
    status: 400,
    body: (example) => ({ ...example, method: 'matches' }),
  },
  // "Bad type"
  {
    op: 'POST /project/{project_id}/keys',
    status: 400,
    body: (example) => ({ ...example, name: 'Conformance key 2', type: 'gpg' }),
  },
  {
    op: 'PUT /project/{project_id}/keys/{key_id}',
    status: 400,
    body: (example) => ({ ...example, name: 'Conformance key', type: 'gpg' }),
  },
  // "Bad request": a URL git would read as a command.
  {
    op: 'PUT /project/{project_id}/repositories/{repository_id}',
    status: 400,
    body: (example) => ({ ...example, git_url: 'ext::sh -c id' }),
  },
];
