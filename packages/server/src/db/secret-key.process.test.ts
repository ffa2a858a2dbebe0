import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../test/support/net';
import { serverChild } from '../../test/support/server-child';
import { serverBin, serverProcessEnv } from '../../test/support/server-process';

/**
 * Servers sharing one database must share the secret key: a server started with another key (here one generated
 * into its own data directory) refuses to start and says how to fix it, and starts once given the first one's.
 */
describe('a server whose secret key is not the database key', () => {
  const root = mkdtempSync(join(tmpdir(), 'sb-key-process-'));
  const dbUrl = `sqlite://${join(root, 'shared.db')}`;
  const first = join(root, 'first');
  const second = join(root, 'second');
  const started: ReturnType<typeof serverChild>[] = [];
  afterAll(async () => {
    for (const server of started) if (server.running()) await server.stop('SIGTERM');
    rmSync(root, { recursive: true, force: true });
  });

  it('refuses to start with a one-line reason naming SIGNALBOX_SECRET_KEY, then starts with the shared key', async () => {
    const a = serverChild(serverProcessEnv(first, { SIGNALBOX_DB_URL: dbUrl }));
    started.push(a);
    await a.startAndSignIn();
    const keyA = readFileSync(join(first, 'secret.key'), 'utf8').trim();

    const refused = spawn(process.execPath, [serverBin, 'server'], {
      env: {
        ...serverProcessEnv(second, { SIGNALBOX_DB_URL: dbUrl }),
        SIGNALBOX_PORT: String(await freePort()),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    refused.stdout.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    refused.stderr.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    const [code] = await once(refused, 'exit');
    expect(code).toBe(1);
    expect(output).toMatch(/^Signalbox cannot start: .*same key: set SIGNALBOX_SECRET_KEY/m);
    expect(output).not.toMatch(/\n\s+at /);
    expect(output).not.toContain(keyA);
    expect(output).not.toContain(readFileSync(join(second, 'secret.key'), 'utf8').trim());

    const b = serverChild(serverProcessEnv(second, { SIGNALBOX_DB_URL: dbUrl, SIGNALBOX_SECRET_KEY: keyA }));
    started.push(b);
    await b.startAndSignIn();
    expect(b.running()).toBe(true);
  });
});
