import { spawn } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverBin } from '../../../test/support/server-process';
import { insertKey } from '../../../test/support/task-fixtures';
import { buildApp } from '../../app';
import { loadConfig } from '../../config';
import { openDb } from '../../db';
import { insertReturningId } from '../../db/values';
import { createSecretBox, SecretKeyRotationUnfinishedError } from '../../lib/crypto';

const bin = serverBin;
const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));

/** Runs `signalbox …` to completion with only the given Signalbox settings. */
function signalbox(args: string[], extra: Record<string, string>) {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(SIGNALBOX|SEMAPHORE)_/.test(k)) env[k] = v;
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: repoRoot, env: { ...env, ...extra } });
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

/**
 * `signalbox secret-key rotate` as the administrator runs it, on SQLite with the key in the data directory:
 * what it refuses, what it installs, and how it resumes.
 */
describe('signalbox secret-key rotate', () => {
  let dir: string;
  let env: Record<string, string>;
  const plain = new Map<number, string>();
  const keyFile = () => join(dir, 'secret.key');
  const readKey = (file: string) => Buffer.from(readFileSync(file, 'utf8'), 'base64');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-rotate-cli-'));
    env = { SIGNALBOX_DATA_DIR: dir, SIGNALBOX_DB_URL: `sqlite://${join(dir, 'signalbox.db')}` };
    // A first start generates secret.key and records it as the database's key.
    const { app, deps } = await buildApp(config(), { background: false, logger: false });
    const projectId = await insertReturningId(deps.db, deps.dialect, 'project', {
      name: 'p',
      created: new Date().toISOString(),
      alert: 0,
      alert_chat: null,
      max_parallel_tasks: 0,
      type: '',
    });
    for (let i = 0; i < 3; i++) {
      const secret = { login: `l${i}`, password: `p${i}` };
      plain.set(await insertKey(deps, projectId, { type: 'login_password', secret }), JSON.stringify(secret));
    }
    // One value in the format of before the version byte.
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', readKey(keyFile()), nonce);
    const body = Buffer.concat([cipher.update('legacy', 'utf8'), cipher.final()]);
    const legacy = Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64');
    plain.set(await insertKey(deps, projectId, { type: 'string', owner: 'environment' }), 'legacy');
    await deps.db.updateTable('access_key').set({ secret: legacy }).where('secret', 'is', null).execute();
    await app.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const config = () => loadConfig({}, { dataDir: dir, dbUrl: env.SIGNALBOX_DB_URL, bcryptCost: 4 });

  /** Every stored secret opened with this key alone. */
  async function openedWith(key: Buffer) {
    const handle = openDb(env.SIGNALBOX_DB_URL ?? '');
    try {
      const rows = await handle.db.selectFrom('access_key').select(['id', 'secret']).execute();
      const box = createSecretBox(key);
      return new Map(rows.filter((r) => r.secret).map((r) => [r.id, box.open(r.secret ?? '')]));
    } finally {
      await handle.destroy();
    }
  }

  it('never takes a key in its arguments, says what is wrong with a key, and refuses while a server is running', async () => {
    const typed = randomBytes(32).toString('base64');
    const refused = await signalbox(['secret-key', 'rotate', typed], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Unknown option or argument');
    expect(refused.stderr).toContain('--new-key-file F');
    expect(refused.stdout + refused.stderr).not.toContain(typed);

    const missing = join(dir, 'missing.key');
    const unreadable = await signalbox(['secret-key', 'rotate', '--new-key-file', missing], env);
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr.trim()).toBe(
      `Secret key not rotated: cannot read the key file ${missing}: ENOENT`,
    );
    const notAKey = join(dir, 'not-a.key');
    writeFileSync(notAKey, 'hunter2\n');
    const wrong = await signalbox(['secret-key', 'rotate', '--new-key-file', notAKey], env);
    expect(wrong.stderr.trim()).toBe(
      `Secret key not rotated: ${notAKey} does not hold a secret key: expected 32 bytes in base64 (44 characters)`,
    );
    expect(wrong.stderr).not.toContain('hunter2');
    const elsewhere = mkdtempSync(join(tmpdir(), 'sb-rotate-nokey-'));
    const noKey = await signalbox(['secret-key', 'rotate'], { ...env, SIGNALBOX_DATA_DIR: elsewhere });
    rmSync(elsewhere, { recursive: true, force: true });
    expect(noKey.stderr.trim()).toBe(
      `Secret key not rotated: there is no secret key to rotate: SIGNALBOX_SECRET_KEY is not set and ${join(elsewhere, 'secret.key')} does not exist`,
    );

    const handle = openDb(env.SIGNALBOX_DB_URL ?? '');
    const beat = { id: 'live-server', heartbeat: new Date().toISOString(), host: 'h', pid: 1 };
    await handle.db.insertInto('task_runner').values(beat).execute();
    const running = await signalbox(['secret-key', 'rotate'], env);
    await handle.db.deleteFrom('task_runner').execute();
    await handle.destroy();
    expect(running.code).toBe(1);
    expect(running.stderr.trim()).toBe(
      'Secret key not rotated: a server is running on this database (instance live-server): stop every server first',
    );
    expect(existsSync(join(dir, 'secret.key.pending'))).toBe(false);
  });

  it('re-encrypts every secret, installs the new key (0600) and keeps the old one beside it', async () => {
    const old = readKey(keyFile());
    const run = await signalbox(['secret-key', 'rotate', '--batch-size', '2'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const next = readKey(keyFile());
    expect(next.equals(old)).toBe(false);
    expect(statSync(keyFile()).mode & 0o777).toBe(0o600);
    expect(readKey(join(dir, 'secret.key.previous')).equals(old)).toBe(true);
    expect(statSync(join(dir, 'secret.key.previous')).mode & 0o777).toBe(0o600);
    expect(existsSync(join(dir, 'secret.key.pending'))).toBe(false);
    expect(run.stdout).toMatch(/^ {2}access_key: 4$/m);
    expect(run.stdout).toMatch(/^ {2}task: 0$/m);
    expect(run.stdout).not.toContain(next.toString('base64'));
    expect(await openedWith(next)).toEqual(plain);

    // A server on the data directory starts with the new key.
    const { app } = await buildApp(config(), { background: false, logger: false });
    await app.close();
  });

  it('resumes a rotation interrupted after writing its new key: no server starts until it is finished', async () => {
    const pendingKey = randomBytes(32);
    writeFileSync(join(dir, 'secret.key.pending'), pendingKey.toString('base64'), { mode: 0o600 });
    await expect(buildApp(config(), { background: false, logger: false })).rejects.toThrow(
      SecretKeyRotationUnfinishedError,
    );

    const run = await signalbox(['secret-key', 'rotate'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(readKey(keyFile()).equals(pendingKey)).toBe(true);
    expect(await openedWith(pendingKey)).toEqual(plain);
  });

  it('with SIGNALBOX_SECRET_KEY, writes a generated key only to the new file the administrator names', async () => {
    const current = readFileSync(keyFile(), 'utf8');
    const envKey = { ...env, SIGNALBOX_SECRET_KEY: current };
    const unnamed = await signalbox(['secret-key', 'rotate'], envKey);
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr).toContain('name a file for a generated one with --write-new-key F');

    const out = join(dir, 'next.key');
    const run = await signalbox(['secret-key', 'rotate', '--write-new-key', out], envKey);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const next = readKey(out);
    expect(run.stdout).toContain(
      `Now set SIGNALBOX_SECRET_KEY of every server of this database to the new key (written to ${out})`,
    );
    expect(run.stdout).not.toContain(next.toString('base64'));
    // The data directory's key file is left alone: the key lives in the environment.
    expect(readFileSync(keyFile(), 'utf8')).toBe(current);
    expect(await openedWith(next)).toEqual(plain);
  });
});
