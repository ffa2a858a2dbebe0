import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { serverBin } from '../../../test/support/server-process';
import { buildApp } from '../../app';
import { loadConfig } from '../../config';

const bin = serverBin;
const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));

type Run = { code: number | null; stdout: string; stderr: string };

/** Runs `signalbox …` to completion with only the given Signalbox settings. */
function signalbox(args: string[], env: Record<string, string>): Promise<Run> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(SIGNALBOX|SEMAPHORE)_/.test(k)),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: repoRoot, env: { ...clean, ...env } });
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d) => {
      out.stdout += d;
    });
    child.stderr.on('data', (d) => {
      out.stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, ...out }));
  });
}

describe.each(testDialects())('signalbox user totp disable on $name', (dialect) => {
  const env: Record<string, string> = {};
  let dir = '';
  let drop: () => Promise<void> = async () => {};
  let app: FastifyInstance;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'signalbox-totp-cli-'));
    const database = await dialect.create(dir);
    drop = database.drop;
    Object.assign(env, {
      SIGNALBOX_DATA_DIR: dir,
      SIGNALBOX_DB_URL: database.url,
      SIGNALBOX_BCRYPT_COST: '4',
    });
    const add = await signalbox(
      ['user', 'add', '--login', 'ann', '--email', 'ann@example.test', '--password', 'ann-pw'],
      env,
    );
    expect(add.stderr).toBe('');
    // The web console on the same database and data directory (its secret key), with TOTP on.
    const config = loadConfig(
      {},
      { dataDir: dir, dbUrl: database.url, logLevel: 'silent', bcryptCost: 4, totpEnabled: true },
    );
    app = (await buildApp(config, { background: false, logger: false })).app;
  });
  afterAll(async () => {
    await app?.close();
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Signs ann in with her password; the status GET /api/user then answers (401 while a code is awaited). */
  async function signIn() {
    const login = await app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { auth: 'ann', password: 'ann-pw' },
    });
    expect(login.statusCode).toBe(204);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const me = await app.inject({ method: 'GET', url: '/api/user', headers: { cookie } });
    return { cookie, status: me.statusCode, body: me.json() };
  }

  it('resets a user’s TOTP so a password signs in again; says when there is none', {
    timeout: 120_000,
  }, async () => {
    const { cookie } = await signIn();
    const headers = { cookie, 'sec-fetch-site': 'same-origin' };
    const me = (await app.inject({ method: 'GET', url: '/api/user', headers })).json();
    const started = (
      await app.inject({ method: 'POST', url: `/api/users/${me.id}/2fas/totp`, headers })
    ).json();
    const confirmed = await app.inject({
      method: 'POST',
      url: `/api/users/${me.id}/2fas/totp/${started.id}/confirm`,
      headers,
      payload: { passcode: await generate({ secret: started.secret }) },
    });
    expect(confirmed.statusCode).toBe(200);
    const locked = await signIn();
    expect(locked.status).toBe(401);
    expect(locked.body.error).toBe('TOTP_REQUIRED');

    const reset = await signalbox(['user', 'totp', 'disable', '--login', 'ann@example.test'], env);
    expect(reset.stderr).toBe('');
    expect(reset.code).toBe(0);
    expect(reset.stdout.trim()).toBe('Two-factor sign-in of user ann reset');
    const open = await signIn();
    expect(open.status).toBe(200);
    expect(open.body).not.toHaveProperty('totp');

    const again = await signalbox(['user', 'totp', 'disable', '--login', 'ann'], env);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe('User ann has no two-factor sign-in');
    const nobody = await signalbox(['user', 'totp', 'disable', '--login', 'nobody'], env);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr.trim()).toBe('User nobody not found');
    const usage = await signalbox(['user', 'totp', 'enable', '--login', 'ann'], env);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toMatch(/Usage: npx signalbox user .*\|totp disable/);
    const help = await signalbox(['help'], env);
    expect(help.stdout).toMatch(/^ {2}user totp disable --login L\s+reset the user's two-factor sign-in/m);
  });
});
