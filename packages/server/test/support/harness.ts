import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProjectRole } from '@signalbox/contracts';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { type BuildOptions, buildApp } from '../../src/app';
import { type Config, loadConfig } from '../../src/config';
import { openDb } from '../../src/db';
import { now } from '../../src/db/values';
import type { Deps } from '../../src/deps';
import { insertUser } from '../../src/features/users/users.service';
import type { TestDialect } from './dialects';
import { taskSharedPaths } from './task-shared';

export type Harness = {
  app: FastifyInstance;
  deps: Deps;
  config: Config;
  dataDir: string;
  /** Captured server log lines (JSON text), for asserting what the log never contains. */
  logLines: string[];
  close(): Promise<void>;
  /** Creates a user and returns a client signed in as them (session cookie). */
  userClient(
    opts?: Partial<{ username: string; admin: boolean; can_create_project: boolean; password: string }>,
  ): Promise<Client>;
  anonymous(): Client;
  /** A project owned by `owner`, plus members with the given roles (each a signed-in client). */
  projectWithTeam(
    owner: Client,
    name?: string,
  ): Promise<{ projectId: number; members: Record<ProjectRole, Client> }>;
};

export type Client = {
  userId: number;
  username: string;
  password: string;
  cookie: string;
  request(
    method: InjectOptions['method'],
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, body?: unknown): Promise<LightMyRequestResponse>;
  put(url: string, body?: unknown): Promise<LightMyRequestResponse>;
  del(url: string): Promise<LightMyRequestResponse>;
};

/** An error body as the server answers it: `body` plus the request's id, which its X-Request-Id header names too. */
export const answeredError = (res: LightMyRequestResponse, body: Record<string, unknown>) => ({
  ...body,
  request_id: res.headers['x-request-id'],
});

let counter = 0;

/**
 * Boots the real app on a fresh database of the given dialect; close() tears everything down.
 * `build.startTask` records the tasks the scheduler and integrations start (the app's Deps are frozen: nothing is
 * swapped in later).
 */
export async function createHarness(
  dialect: TestDialect,
  overrides: Partial<Config> = {},
  build: Pick<BuildOptions, 'startTask' | 'auditForward'> = {},
): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'signalbox-test-'));
  const database = await dialect.create(dataDir);
  // The lowest bcrypt cost: tests create many users and a real cost only makes them slow.
  // The sandbox setting is the test environment's when it names one, so the suites can be timed without it.
  const config = loadConfig(
    { SIGNALBOX_TASK_SANDBOX: process.env.SIGNALBOX_TASK_SANDBOX },
    {
      dataDir,
      dbUrl: database.url,
      logLevel: 'info',
      bcryptCost: 4,
      taskSandboxPaths: taskSharedPaths,
      // No request limit: API tests send thousands of requests as one user; the limiter's tests turn it on.
      rateLimit: 0,
      ...overrides,
    },
  );
  const logLines: string[] = [];
  const stream = { write: (line: string) => void logLines.push(line) };
  // The database's own warnings (lost connections) land in the same captured log as the app's.
  const handle = openDb(database.url, { log: pino({ level: 'info' }, stream) });
  const { app, deps } = await buildApp(config, {
    ...build,
    db: handle,
    logger: { level: 'info', stream },
    // Every answer of every API test is checked against the response schema its route declares.
    checkResponses: true,
  });
  await app.ready();

  const makeClient = (userId: number, username: string, password: string, cookie: string): Client => {
    // A signed-in client is the console in a browser: it says its requests are same-origin, as browsers do.
    const session = cookie ? { cookie, 'sec-fetch-site': 'same-origin' } : {};
    const request: Client['request'] = (method, url, body, headers = {}) =>
      app.inject({
        method,
        url,
        headers: { ...session, ...headers },
        ...(body === undefined
          ? {}
          : typeof body === 'string'
            ? { payload: body, headers: { 'content-type': 'application/json', ...session, ...headers } }
            : { payload: body as object }),
      });
    return {
      userId,
      username,
      password,
      cookie,
      request,
      get: (url) => request('GET', url),
      post: (url, body) => request('POST', url, body ?? {}),
      put: (url, body) => request('PUT', url, body ?? {}),
      del: (url) => request('DELETE', url),
    };
  };

  let teamProjects = 0;
  const harness: Harness = {
    app,
    deps,
    config,
    dataDir,
    logLines,
    async close() {
      await app.close();
      await handle.destroy();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    async userClient(opts = {}) {
      counter += 1;
      const username = opts.username ?? `user${counter}_${Math.random().toString(36).slice(2, 7)}`;
      const password = opts.password ?? `pw-${username}-secret`;
      const userId = await insertUser(deps.db, deps.dialect, {
        username,
        name: `Name ${username}`,
        email: `${username}@example.test`,
        password,
        admin: opts.admin ?? false,
        alert: false,
        external: false,
        can_create_project: opts.can_create_project ?? false,
      });
      const res = await app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { auth: username, password },
      });
      if (res.statusCode !== 204) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
      const setCookie = String(res.headers['set-cookie']).split(';')[0]!;
      return makeClient(userId, username, password, setCookie);
    },
    anonymous: () => makeClient(0, '', '', ''),
    async projectWithTeam(owner, name) {
      // A user's projects have distinct names: the default names the second and later team projects apart.
      teamProjects += 1;
      name ??= teamProjects === 1 ? 'Team project' : `Team project ${teamProjects}`;
      const res = await owner.post('/api/projects', { name });
      if (res.statusCode !== 201) throw new Error(`project create failed: ${res.statusCode} ${res.body}`);
      const projectId = res.json().id as number;
      const members = { owner } as Record<ProjectRole, Client>;
      for (const role of ['manager', 'task_runner', 'guest'] as const) {
        const client = await harness.userClient();
        await deps.db
          .insertInto('project_user')
          .values({ project_id: projectId, user_id: client.userId, role, created: now() })
          .execute();
        members[role] = client;
      }
      return { projectId, members };
    },
  };
  return harness;
}
