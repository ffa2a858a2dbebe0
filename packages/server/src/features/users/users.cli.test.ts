import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/support/net';
import { buildApp } from '../../app';
import { loadConfig } from '../../config';
import { openDb } from '../../db';

const bin = fileURLToPath(new URL('../../../bin/signalbox.mjs', import.meta.url));
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

/** Runs `signalbox …` to completion. */
function signalbox(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: repoRoot, env: cleanEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
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
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${base}/api/ping`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, base, output: () => stdout, errors: () => stderr };
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

describe('signalbox user …', () => {
  let dir: string;
  let env: Record<string, string>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'signalbox-cli-'));
    env = { SIGNALBOX_DATA_DIR: dir, SIGNALBOX_DB_URL: `sqlite://${join(dir, 'cli.db')}` };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Signs in through the app on the same database file, as the web console would. */
  async function canSignIn(login: string, password: string) {
    const config = loadConfig({}, { dataDir: dir, dbUrl: env.SIGNALBOX_DB_URL!, logLevel: 'silent' });
    const { app } = await buildApp(config, { background: false, logger: false });
    try {
      const res = await app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { auth: login, password },
      });
      return res.statusCode === 204;
    } finally {
      await app.close();
    }
  }

  it('adds, lists, changes and deletes users with clear messages and exit codes', {
    timeout: 120_000,
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
      env,
    );
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
    expect(add.stdout).toMatch(/^User root added \(id \d+\)$/m);
    expect(await canSignIn('root', 'first-pw')).toBe(true);

    const second = await signalbox(
      ['user', 'add', '--login', 'bob', '--email', 'bob@example.test', '--password', 'bob-pw'],
      env,
    );
    expect(second.code).toBe(0);

    const list = await signalbox(['user', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout.trim().split('\n')).toEqual([
      'bob\tbob\tbob@example.test',
      'root\tRoot User\troot@example.test\tadmin',
    ]);

    const duplicate = await signalbox(
      ['user', 'add', '--login', 'root', '--email', 'other@example.test', '--password', 'x'],
      env,
    );
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr.trim()).toBe('Username root is already taken');

    const missing = await signalbox(['user', 'add', '--login', 'carol', '--password', 'x'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe('Email is required');

    const noPassword = await signalbox(['user', 'add', '--login', 'carol', '--email', 'c@example.test'], env);
    expect(noPassword.code).toBe(1);
    expect(noPassword.stderr.trim()).toBe('Password is required');

    const unknownFlag = await signalbox(['user', 'add', '--login', 'x', '--bogus'], env);
    expect(unknownFlag.code).toBe(1);
    expect(unknownFlag.stderr).toMatch(/--bogus/);

    const changed = await signalbox(
      ['user', 'change-by-login', '--login', 'root', '--password', 'second-pw'],
      env,
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
      env,
    );
    expect(renamed.code).toBe(0);
    // Only the given flags change: bob's password is untouched, and the new e-mail signs in.
    expect(await canSignIn('bob2@example.test', 'bob-pw')).toBe(true);

    const nothing = await signalbox(['user', 'change-by-login', '--login', 'root'], env);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr.trim()).toBe('Nothing to change: give --password, --name or --email');
    const nobody = await signalbox(['user', 'change-by-login', '--login', 'nobody', '--password', 'x'], env);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr.trim()).toBe('User nobody not found');
    const taken = await signalbox(
      ['user', 'change-by-login', '--login', 'bob', '--email', 'root@example.test'],
      env,
    );
    expect(taken.code).toBe(1);
    expect(taken.stderr.trim()).toBe('Email root@example.test is already taken');

    const lastAdmin = await signalbox(['user', 'delete', '--login', 'root'], env);
    expect(lastAdmin.code).toBe(1);
    expect(lastAdmin.stderr.trim()).toBe('Cannot delete the last administrator');

    const deleted = await signalbox(['user', 'delete', '--login', 'bob'], env);
    expect(deleted.code).toBe(0);
    expect(deleted.stdout.trim()).toBe('User bob deleted');
    const after = await signalbox(['user', 'list'], env);
    expect(after.stdout.trim()).toBe('root\tRoot User\troot@example.test\tadmin');

    const usage = await signalbox(['user', 'frobnicate'], env);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toMatch(/Usage: signalbox user add\|list\|change-by-login\|delete/);
  });
});

describe('signalbox user unlock', () => {
  let dir: string;
  let env: Record<string, string>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'signalbox-unlock-'));
    env = { SIGNALBOX_DATA_DIR: dir, SIGNALBOX_DB_URL: `sqlite://${join(dir, 'cli.db')}` };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('clears the sign-in lock of a login, which the usage text lists', { timeout: 120_000 }, async () => {
    const add = await signalbox(
      ['user', 'add', '--login', 'ann', '--email', 'ann@example.test', '--password', 'ann-pw'],
      env,
    );
    expect(add.code).toBe(0);
    const config = loadConfig({}, { dataDir: dir, dbUrl: env.SIGNALBOX_DB_URL!, logLevel: 'silent' });
    const signIn = async (password: string) => {
      const { app } = await buildApp(config, { background: false, logger: false });
      try {
        const res = await app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { auth: 'ann', password },
          remoteAddress: '203.0.113.9',
        });
        return res.statusCode;
      } finally {
        await app.close();
      }
    };
    for (let i = 0; i < 5; i++) expect(await signIn('wrong')).toBe(401);
    // Stretch the 1 s wait, as further failures would, so the slow commands below do not outlast it.
    const handle = openDb(env.SIGNALBOX_DB_URL!);
    await handle.db
      .updateTable('sign_in_throttle')
      .set({ blocked_until: new Date(Date.now() + 600_000).toISOString() })
      .where('blocked_until', 'is not', null)
      .execute();
    await handle.destroy();
    expect(await signIn('ann-pw')).toBe(429);

    const unlock = await signalbox(['user', 'unlock', '--login', 'ann@example.test'], env);
    expect(unlock.stderr).toBe('');
    expect(unlock.code).toBe(0);
    expect(unlock.stdout.trim()).toBe('Sign-in lock of user ann cleared');
    expect(await signIn('ann-pw')).toBe(204);

    const nobody = await signalbox(['user', 'unlock', '--login', 'nobody'], env);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr.trim()).toBe('User nobody not found');
    const help = await signalbox(['help'], env);
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

  it('stops with a message naming the variable when a setting is bad', { timeout: 120_000 }, async () => {
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
    timeout: 120_000,
  }, async () => {
    const dataDir = tempDir();
    const first = await startServer({ SIGNALBOX_DATA_DIR: dataDir });
    children.push(first.child);
    const match = first.output().match(/login "admin" and password: (\S+)/);
    expect(match).not.toBeNull();
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
    expect((await signInOverHttp(second.base, 'admin', password)).status).toBe(401);
    expect((await signInOverHttp(second.base, 'admin', 'changed-pw')).status).toBe(204);
    await stop(second.child);
  });

  it('creates the admin named by SIGNALBOX_ADMIN_LOGIN / SIGNALBOX_ADMIN_PASSWORD', {
    timeout: 120_000,
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
