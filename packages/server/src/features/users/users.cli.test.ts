import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/support/net';
import { serverBin } from '../../../test/support/server-process';
import { waitFor } from '../../../test/support/task-fixtures';
import { buildApp } from '../../app';
import { loadConfig } from '../../config';
import { openDb } from '../../db';

const bin = serverBin;
const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));

/** The parent's environment without any Signalbox/Semaphore settings, plus the given ones. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(SIGNALBOX|SEMAPHORE)_/.test(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

type Run = { code: number | null; stdout: string; stderr: string };

/** What the child process writes to stdout and to stderr, as text so far. */
function collectOutput(child: { stdout: Readable; stderr: Readable }) {
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => {
    output.stdout += d;
  });
  child.stderr.on('data', (d) => {
    output.stderr += d;
  });
  return output;
}

/** Runs `signalbox …` to completion. */
function signalbox(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: repoRoot, env: cleanEnv(env) });
    const output = collectOutput(child);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, ...output }));
  });
}

/** Runs `signalbox …` expecting it to fail with exit code 1 and `message` on stderr. */
async function expectFailure(args: string[], env: Record<string, string>, message: string) {
  const run = await signalbox(args, env);
  expect(run.code).toBe(1);
  expect(run.stderr.trim()).toBe(message);
}

/** Starts `signalbox server` and waits until /api/ping answers. */
async function startServer(env: Record<string, string>) {
  const port = await freePort();
  const child = spawn(process.execPath, [bin, 'server'], {
    cwd: repoRoot,
    env: cleanEnv({
      SIGNALBOX_HOST: '127.0.0.1',
      SIGNALBOX_PORT: String(port),
      SIGNALBOX_LOG_LEVEL: 'warn',
      ...env,
    }),
  });
  const output = collectOutput(child);
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${output.stderr}`);
    try {
      if ((await fetch(`${base}/api/ping`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not start: ${output.stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, base, output: () => output.stdout, errors: () => output.stderr };
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  await closed;
}

/** Signs in over real HTTP; returns the session cookie (or null) and the status. */
async function signInOverHttp(base: string, auth: string, password: string) {
  const res = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth, password }),
  });
  const cookie = res.headers.getSetCookie()[0]?.split(';')[0] ?? null;
  return { status: res.status, cookie };
}

/**
 * For the tests of a describe block: a temporary data directory with its own SQLite file, and the environment
 * that points `signalbox` at them (both set before the tests run); the directory is removed after them.
 */
function cliDataDir(prefix: string) {
  const cli = { dir: '', env: {} as Record<string, string> };
  beforeAll(() => {
    cli.dir = mkdtempSync(join(tmpdir(), prefix));
    cli.env = { SIGNALBOX_DATA_DIR: cli.dir, SIGNALBOX_DB_URL: `sqlite://${join(cli.dir, 'cli.db')}` };
  });
  afterAll(() => rmSync(cli.dir, { recursive: true, force: true }));
  return cli;
}

/**
 * A running console on the data directory's database, built once for a describe block's tests (the commands change
 * the database under it, as an operator's commands do under a running server): `signIn` posts a sign-in as the web
 * console would (from `remoteAddress` when given) and answers the status code.
 */
function consoleOn(cli: { dir: string; env: Record<string, string> }) {
  let app: Awaited<ReturnType<typeof buildApp>>['app'] | undefined;
  afterAll(() => app?.close());
  return {
    async signIn(auth: string, password: string, remoteAddress?: string) {
      if (!app) {
        const config = loadConfig(
          {},
          { dataDir: cli.dir, dbUrl: cli.env.SIGNALBOX_DB_URL!, logLevel: 'silent' },
        );
        ({ app } = await buildApp(config, { background: false, logger: false }));
      }
      const res = await app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { auth, password },
        ...(remoteAddress ? { remoteAddress } : {}),
      });
      return res.statusCode;
    },
  };
}

/**
 * Each command is a `signalbox` process of its own: a test that runs twenty of them took 94 s on a quiet 2-core
 * machine whose whole suite ran beside it, and over 120 s beside a burnt core. Its bound is the browser tests' one.
 */
const CLI_TEST_TIMEOUT = 240_000;

describe('signalbox user …', () => {
  const cli = cliDataDir('signalbox-cli-');
  const web = consoleOn(cli);
  const canSignIn = async (login: string, password: string) => (await web.signIn(login, password)) === 204;

  it('adds, lists, changes and deletes users with clear messages and exit codes', {
    timeout: CLI_TEST_TIMEOUT,
  }, async () => {
    const add = await signalbox(
      [
        'user',
        'add',
        '--login',
        'root',
        '--name',
        'Root User',
        '--email',
        'root@example.test',
        '--password',
        'first-pw',
        '--admin',
      ],
      cli.env,
    );
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
    expect(add.stdout).toMatch(/^User root added \(id \d+\)$/m);
    expect(await canSignIn('root', 'first-pw')).toBe(true);

    const second = await signalbox(
      ['user', 'add', '--login', 'bob', '--email', 'bob@example.test', '--password', 'bob-pw'],
      cli.env,
    );
    expect(second.code).toBe(0);

    const list = await signalbox(['user', 'list'], cli.env);
    expect(list.code).toBe(0);
    expect(list.stdout.trim().split('\n')).toEqual([
      'bob\tbob\tbob@example.test',
      'root\tRoot User\troot@example.test\tadmin',
    ]);

    await expectFailure(
      ['user', 'add', '--login', 'root', '--email', 'other@example.test', '--password', 'x'],
      cli.env,
      'Username root is already taken',
    );

    await expectFailure(['user', 'add', '--login', 'carol', '--password', 'x'], cli.env, 'Email is required');

    await expectFailure(
      ['user', 'add', '--login', 'carol', '--email', 'c@example.test'],
      cli.env,
      'Password is required',
    );

    const unknownFlag = await signalbox(['user', 'add', '--login', 'x', '--bogus'], cli.env);
    expect(unknownFlag.code).toBe(1);
    expect(unknownFlag.stderr).toMatch(/--bogus/);

    const changed = await signalbox(
      ['user', 'change-by-login', '--login', 'root', '--password', 'second-pw'],
      cli.env,
    );
    expect(changed.code).toBe(0);
    expect(changed.stdout.trim()).toBe('User root changed');
    expect(await canSignIn('root', 'second-pw')).toBe(true);
    expect(await canSignIn('root', 'first-pw')).toBe(false);

    const renamed = await signalbox(
      [
        'user',
        'change-by-login',
        '--login',
        'bob@example.test',
        '--name',
        'Bob B',
        '--email',
        'bob2@example.test',
      ],
      cli.env,
    );
    expect(renamed.code).toBe(0);
    // Only the given flags change: bob's password is untouched, and the new e-mail signs in.
    expect(await canSignIn('bob2@example.test', 'bob-pw')).toBe(true);

    await expectFailure(
      ['user', 'change-by-login', '--login', 'root'],
      cli.env,
      'Nothing to change: give --password, --name or --email',
    );
    await expectFailure(
      ['user', 'change-by-login', '--login', 'nobody', '--password', 'x'],
      cli.env,
      'User nobody not found',
    );
    await expectFailure(
      ['user', 'change-by-login', '--login', 'bob', '--email', 'root@example.test'],
      cli.env,
      'Email root@example.test is already taken',
    );

    await expectFailure(
      ['user', 'delete', '--login', 'root'],
      cli.env,
      'Cannot delete the last administrator',
    );

    const deleted = await signalbox(['user', 'delete', '--login', 'bob'], cli.env);
    expect(deleted.code).toBe(0);
    expect(deleted.stdout.trim()).toBe('User bob deleted');
    const after = await signalbox(['user', 'list'], cli.env);
    expect(after.stdout.trim()).toBe('root\tRoot User\troot@example.test\tadmin');

    const usage = await signalbox(['user', 'frobnicate'], cli.env);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toMatch(/Usage: npx signalbox user add\|list\|change-by-login\|delete/);
  });
});

describe('signalbox user unlock', () => {
  const cli = cliDataDir('signalbox-unlock-');
  const web = consoleOn(cli);

  it('clears the sign-in lock of a login, which the usage text lists', {
    timeout: CLI_TEST_TIMEOUT,
  }, async () => {
    const add = await signalbox(
      ['user', 'add', '--login', 'ann', '--email', 'ann@example.test', '--password', 'ann-pw'],
      cli.env,
    );
    expect(add.code).toBe(0);
    const signIn = (password: string) => web.signIn('ann', password, '203.0.113.9');
    for (let i = 0; i < 5; i++) expect(await signIn('wrong')).toBe(401);
    // Stretch the 1 s wait, as further failures would, so the slow commands below do not outlast it.
    const handle = openDb(cli.env.SIGNALBOX_DB_URL!);
    await handle.db
      .updateTable('sign_in_throttle')
      .set({ blocked_until: new Date(Date.now() + 600_000).toISOString() })
      .where('blocked_until', 'is not', null)
      .execute();
    await handle.destroy();
    expect(await signIn('ann-pw')).toBe(429);

    const unlock = await signalbox(['user', 'unlock', '--login', 'ann@example.test'], cli.env);
    expect(unlock.stderr).toBe('');
    expect(unlock.code).toBe(0);
    expect(unlock.stdout.trim()).toBe('Sign-in lock of user ann cleared');
    expect(await signIn('ann-pw')).toBe(204);

    await expectFailure(['user', 'unlock', '--login', 'nobody'], cli.env, 'User nobody not found');
    const help = await signalbox(['help'], cli.env);
    expect(help.stdout).toMatch(/^ {2}user unlock --login L\s+clear the user's sign-in lock/m);
  });
});

describe('signalbox server', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'signalbox-serve-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(async () => {
    for (const child of children) await stop(child);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('stops with a message naming the variable when a setting is bad', {
    timeout: CLI_TEST_TIMEOUT,
  }, async () => {
    const dataDir = tempDir();
    for (const [name, value] of [
      ['SIGNALBOX_PORT', 'abc'],
      ['SIGNALBOX_DB_URL', 'ftp://x'],
      ['SIGNALBOX_OIDC_PROVIDERS', '{not json'],
    ] as const) {
      const run = await signalbox(['server'], { SIGNALBOX_DATA_DIR: dataDir, [name]: value });
      expect(run.code, `${name}=${value}`).not.toBe(0);
      expect(run.code).not.toBeNull();
      expect(run.stderr).toContain(`Configuration error: ${name}`);
    }
  });

  it('prints a generated admin password once on first start; that admin signs in over HTTP', {
    timeout: CLI_TEST_TIMEOUT,
  }, async () => {
    const dataDir = tempDir();
    const first = await startServer({ SIGNALBOX_DATA_DIR: dataDir });
    children.push(first.child);
    // With JSON log lines on stdout (not a terminal) the start banner goes to stderr, once the server listens.
    const banner = /login "admin" and password: (\S+)/;
    await waitFor(async () => banner.test(first.errors()), 30_000, 'the start banner');
    const match = first.errors().match(banner);
    expect(first.output()).not.toMatch(banner);
    const password = match![1]!;
    expect(password).toMatch(/^[A-Za-z0-9]{16}$/);
    // The password goes to the console once, never into a structured (JSON) log line.
    const logLines = `${first.output()}\n${first.errors()}`.split('\n').filter((l) => l.startsWith('{'));
    for (const line of logLines) expect(line).not.toContain(password);

    const { status, cookie } = await signInOverHttp(first.base, 'admin', password);
    expect(status).toBe(204);
    const me = await fetch(`${first.base}/api/user`, { headers: { cookie: cookie! } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ username: 'admin', admin: true, can_create_project: true });
    expect((await signInOverHttp(first.base, 'admin', 'wrong')).status).toBe(401);
    await stop(first.child);

    // The help dialog's recovery command works on that admin (e-mail admin@localhost).
    const changed = await signalbox(
      ['user', 'change-by-login', '--login', 'admin', '--password', 'changed-pw'],
      {
        SIGNALBOX_DATA_DIR: dataDir,
      },
    );
    expect(changed.stderr).toBe('');
    expect(changed.code).toBe(0);

    // A second start on the same data directory finds the admin and prints nothing.
    const second = await startServer({ SIGNALBOX_DATA_DIR: dataDir });
    children.push(second.child);
    expect(second.output()).not.toContain('password');
    await waitFor(async () => second.errors().includes('Admin login: admin'), 30_000, 'the start banner');
    expect(second.errors()).not.toMatch(banner);
    expect((await signInOverHttp(second.base, 'admin', password)).status).toBe(401);
    expect((await signInOverHttp(second.base, 'admin', 'changed-pw')).status).toBe(204);
    await stop(second.child);
  });

  it('creates the admin named by SIGNALBOX_ADMIN_LOGIN / SIGNALBOX_ADMIN_PASSWORD', {
    timeout: CLI_TEST_TIMEOUT,
  }, async () => {
    const dataDir = tempDir();
    const server = await startServer({
      SIGNALBOX_DATA_DIR: dataDir,
      SIGNALBOX_ADMIN_LOGIN: 'boss',
      SIGNALBOX_ADMIN_PASSWORD: 'boss-secret-pw',
      SIGNALBOX_ADMIN_EMAIL: 'boss@example.test',
      SIGNALBOX_ADMIN_NAME: 'The Boss',
    });
    children.push(server.child);
    // The password was chosen by the operator: it is not echoed.
    expect(server.output()).not.toContain('boss-secret-pw');
    expect(server.errors()).not.toContain('boss-secret-pw');
    const { status, cookie } = await signInOverHttp(server.base, 'boss', 'boss-secret-pw');
    expect(status).toBe(204);
    const me = await fetch(`${server.base}/api/user`, { headers: { cookie: cookie! } });
    expect(await me.json()).toMatchObject({
      username: 'boss',
      name: 'The Boss',
      email: 'boss@example.test',
      admin: true,
    });
    // No generated `admin` user besides.
    expect((await signInOverHttp(server.base, 'admin', 'x')).status).toBe(401);
    await stop(server.child);
  });
});
