import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config';

const bin = fileURLToPath(new URL('../bin/signalbox-src.mjs', import.meta.url));

/**
 * Runs `signalbox server` on a fresh data dir (kept in `dirs` for removal) with only `env` of the SIGNALBOX_ and
 * SEMAPHORE_ settings, until it exits: its exit code and stderr.
 */
function startServerWith(dirs: string[], env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'signalbox-config-'));
  dirs.push(dataDir);
  const inherited: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(SIGNALBOX|SEMAPHORE)_/.test(k)) inherited[k] = v;
  return new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'server'], {
      env: {
        ...inherited,
        SIGNALBOX_DATA_DIR: dataDir,
        SIGNALBOX_HOST: '127.0.0.1',
        SIGNALBOX_PORT: '0',
        ...env,
      },
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('SIGNALBOX_BCRYPT_COST', () => {
  it('defaults to 10 and reads a cost from 4 to 31', () => {
    expect(loadConfig({}).bcryptCost).toBe(10);
    expect(loadConfig({ SIGNALBOX_BCRYPT_COST: '4' }).bcryptCost).toBe(4);
    expect(loadConfig({ SIGNALBOX_BCRYPT_COST: '31' }).bcryptCost).toBe(31);
    expect(() => loadConfig({ SIGNALBOX_BCRYPT_COST: '3' })).toThrow(
      'SIGNALBOX_BCRYPT_COST: must be 4 or greater',
    );
  });
});

describe('SIGNALBOX_SURVEY_HTTP_ALLOW_PRIVATE', () => {
  it('allows no internal address by default, all with true, or the listed addresses and ranges', () => {
    const read = (value?: string) =>
      loadConfig(value === undefined ? {} : { SIGNALBOX_SURVEY_HTTP_ALLOW_PRIVATE: value })
        .surveyHttpAllowPrivate;
    expect(read()).toBe(false);
    expect(read('false')).toBe(false);
    expect(read('true')).toBe(true);
    expect(read('10.1.0.0/16, 192.168.5.7,fd00::/8')).toEqual(['10.1.0.0/16', '192.168.5.7', 'fd00::/8']);
    for (const bad of ['intranet.example', '10.0.0.0/33', '10.0.0.1/8/2', 'fd00::/129'])
      expect(() => read(bad), bad).toThrow(
        `SIGNALBOX_SURVEY_HTTP_ALLOW_PRIVATE: must be true, false or addresses and CIDR ranges (not "${bad}")`,
      );
  });
});

describe('SIGNALBOX_SHUTDOWN_GRACE', () => {
  it('defaults to 30 seconds and reads whole seconds from 0 to 3600', () => {
    expect(loadConfig({}).shutdownGrace).toBe(30);
    expect(loadConfig({ SIGNALBOX_SHUTDOWN_GRACE: '0' }).shutdownGrace).toBe(0);
    expect(loadConfig({ SIGNALBOX_SHUTDOWN_GRACE: '3600' }).shutdownGrace).toBe(3600);
    for (const [value, message] of [
      ['-1', 'must be 0 or greater'],
      ['2.5', 'must be an integer'],
      ['soon', 'must be a number'],
      ['3601', 'must be 3600 or less'],
    ]) {
      expect(() => loadConfig({ SIGNALBOX_SHUTDOWN_GRACE: value }), value).toThrow(
        `SIGNALBOX_SHUTDOWN_GRACE: ${message}`,
      );
    }
  });
});

describe('SIGNALBOX_TASK_RETENTION_DAYS', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('defaults to 0 (keep forever) and reads whole days', () => {
    expect(loadConfig({}).taskRetentionDays).toBe(0);
    expect(loadConfig({ SIGNALBOX_TASK_RETENTION_DAYS: '' }).taskRetentionDays).toBe(0);
    expect(loadConfig({ SIGNALBOX_TASK_RETENTION_DAYS: '0' }).taskRetentionDays).toBe(0);
    expect(loadConfig({ SIGNALBOX_TASK_RETENTION_DAYS: '30' }).taskRetentionDays).toBe(30);
    expect(loadConfig({ SIGNALBOX_TASK_RETENTION_DAYS: '36500' }).taskRetentionDays).toBe(36_500);
  });

  it('rejects a bad value with a message naming the variable', () => {
    for (const [value, message] of [
      ['-1', 'must be 0 or greater'],
      ['1.5', 'must be an integer'],
      ['thirty', 'must be a number'],
      ['36501', 'must be 36500 or less'],
      ['1e9', 'must be 36500 or less'],
    ]) {
      expect(() => loadConfig({ SIGNALBOX_TASK_RETENTION_DAYS: value }), value).toThrow(ConfigError);
      expect(() => loadConfig({ SIGNALBOX_TASK_RETENTION_DAYS: value }), value).toThrow(
        `SIGNALBOX_TASK_RETENTION_DAYS: ${message}`,
      );
    }
  });

  it('a bad value stops `signalbox server` before it listens', { timeout: 60_000 }, async () => {
    const run = await startServerWith(dirs, { SIGNALBOX_TASK_RETENTION_DAYS: '-7' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Configuration error: SIGNALBOX_TASK_RETENTION_DAYS: must be 0 or greater');
  });
});

describe('SIGNALBOX_APPS', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('a bad app setting stops `signalbox server` before it listens', { timeout: 60_000 }, async () => {
    const run = await startServerWith(dirs, { SIGNALBOX_APPS: '{"python":{"path":"python3 -c evil"}}' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'Configuration error: SIGNALBOX_APPS: python.path: must be an absolute path or a command name found on PATH',
    );
  });
});
