import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../test/support/net';
import { demoRepositoryDir } from './features/projects/demo';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * The README's first command, as a new user runs it: `npm start` brings the console up on the embedded SQLite
 * database, prints a generated admin password once, and that admin signs in over plain HTTP (as with curl).
 * This is the test of the built server: `npm start` builds packages/server/dist when the sources are newer and
 * runs it (every other test that spawns the server runs the sources through tsx), so the files the server
 * finds on disk (its package.json, the web console, the demo repository) are checked from the build here.
 */
describe('npm start', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-npm-start-'));
  let child: ChildProcess | null = null;

  afterAll(() => {
    // npm runs the server in a child shell: end the whole process group.
    if (child?.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the console on SQLite and the printed admin signs in', async () => {
    const port = await freePort();
    const env: Record<string, string | undefined> = {
      ...process.env,
      SIGNALBOX_DATA_DIR: dataDir,
      SIGNALBOX_PORT: String(port),
      SIGNALBOX_HOST: '127.0.0.1',
      SIGNALBOX_LOG_LEVEL: 'warn',
    };
    // Nothing configured: the defaults (SQLite under the data dir, a generated admin) are what is tested.
    for (const name of Object.keys(env))
      if (/^(SIGNALBOX|SEMAPHORE)_(DB|ADMIN)/.test(name) || name.startsWith('npm_')) delete env[name];
    child = spawn('npm', ['start', '--silent'], { cwd: repoRoot, env, detached: true, stdio: 'pipe' });
    let out = '';
    child.stdout?.on('data', (d) => {
      out += String(d);
    });
    child.stderr?.on('data', (d) => {
      out += String(d);
    });
    const printed = await new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setInterval(() => {
        const m = /Sign in with login "([^"]+)" and password: (\S+)/.exec(out);
        if (m) {
          clearInterval(timer);
          resolve(m);
        } else if (child?.exitCode !== null) {
          clearInterval(timer);
          reject(new Error(`npm start exited with ${child?.exitCode}:\n${out}`));
        }
      }, 100);
    });
    const [, login, password] = printed;
    expect(login).toBe('admin');
    expect(password).toMatch(/^[A-Za-z0-9]{10,}$/);

    const base = `http://127.0.0.1:${port}`;
    let ping: Response | null = null;
    for (let i = 0; i < 100 && !ping?.ok; i++) {
      ping = await fetch(`${base}/api/ping`).catch(() => null);
      if (!ping?.ok) await new Promise((r) => setTimeout(r, 100));
    }
    expect(await ping?.text()).toBe('pong');
    expect(existsSync(join(dataDir, 'signalbox.db'))).toBe(true);

    const wrong = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth: login, password: `${password}x` }),
    });
    expect(wrong.status).toBe(401);
    const signIn = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth: login, password }),
    });
    expect(signIn.status).toBe(204);
    const cookie = signIn.headers.get('set-cookie')?.split(';')[0] ?? '';
    const me = await (await fetch(`${base}/api/user`, { headers: { cookie } })).json();
    expect(me).toMatchObject({ username: 'admin', admin: true });
    // The web console is served at the root.
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root">');
    // What ran is the build, and it finds the server's own files.
    expect(existsSync(join(repoRoot, 'packages/server/dist/main.js'))).toBe(true);
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'packages/server/package.json'), 'utf8'));
    const info = (await (await fetch(`${base}/api/info`, { headers: { cookie } })).json()) as {
      version: string;
    };
    expect(info.version).toBe(manifest.version);
    const demo = await fetch(`${base}/api/projects`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Demo', demo: true }),
    });
    expect(demo.status).toBe(201);
    const demoCopy = demoRepositoryDir(dataDir, ((await demo.json()) as { id: number }).id);
    expect(readFileSync(join(demoCopy, 'ping.yml'), 'utf8')).toBe(
      readFileSync(join(repoRoot, 'packages/server/demo/ping.yml'), 'utf8'),
    );
    // The password went to the console only, never into the data dir's files.
    expect(out.match(new RegExp(password!, 'g'))?.length).toBe(1);
  }, 180_000);
});
