import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../test/support/net';
import { localUrl, serverBin, serverProcessEnv } from '../test/support/server-process';
import { waitFor } from '../test/support/task-fixtures';

/**
 * `signalbox server` started by a person in a terminal (stdout a TTY, through script(1)): after the start it prints
 * where to open the console, the generated admin password once and how to reset it, and then stays quiet while
 * requests come in (request lines are debug there); SIGNALBOX_LOG_LEVEL=debug brings them back.
 */
describe('server started in a terminal', () => {
  const dirs: string[] = [];
  let child: ChildProcess | null = null;

  afterEach(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child?.once('exit', r));
    }
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the server with a TTY for stdout on a fresh data dir; its output (as a terminal shows it) in `output()`. */
  async function startInTerminal(extra: Record<string, string>) {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-terminal-'));
    dirs.push(dataDir);
    const port = await freePort();
    const env = serverProcessEnv(dataDir, { SIGNALBOX_PORT: String(port), ...extra });
    // No admin configured: the first start creates one with a generated password. No level: the default.
    const unset = ['ADMIN_LOGIN', 'ADMIN_PASSWORD', 'LOG_LEVEL', 'LOG_FORMAT', 'REQUEST_LOG_LEVEL'];
    for (const name of unset.map((n) => `SIGNALBOX_${n}`)) if (!(name in extra)) delete env[name];
    const command = `exec '${process.execPath}' '${serverBin}' server`;
    child = spawn('script', ['-qfec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (d) => {
      output += String(d);
    });
    child.stderr?.on('data', (d) => {
      output += String(d);
    });
    await waitFor(async () => output.includes('Forgot the password?'), 60_000, 'the start banner');
    return { port, output: () => output };
  }

  /** Asks the server for /api/ping with `requestId`, then stops it with Ctrl-C (its shutdown lines are info). */
  /**
   * Pings the server and stops it with Ctrl-C; when the request is to be logged, first waits until its completion
   * line is out (it is written after the answer, so a stop right after the answer could race it).
   */
  async function pingAndStop(port: number, requestId: string, output: () => string, logged = false) {
    const res = await fetch(localUrl(port, '/api/ping'), { headers: { 'x-request-id': requestId } });
    expect(await res.text()).toBe('pong');
    if (logged)
      await waitFor(
        async () => output().includes('request completed') || undefined,
        15_000,
        'the request line',
      );
    const exited = new Promise((r) => child?.once('exit', r));
    child?.stdin?.write('\x03');
    await exited;
    expect(output()).toContain('shut down');
  }

  it('prints the address, the admin login with its one-time password and the reset command, then no request lines', async () => {
    const { port, output } = await startInTerminal({});
    const text = output();
    expect(text).toContain(`Signalbox is running: open http://127.0.0.1:${port}/`);
    const printed = /Sign in with login "admin" and password: (\S+)/.exec(text);
    expect(printed?.[1]).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(text).toContain(
      "Forgot the password? npx signalbox user change-by-login --login admin --password '<new password>'",
    );
    // Pretty lines for a person, not JSON.
    expect(text).not.toMatch(/^\{"level"/m);
    await pingAndStop(port, 'tty-quiet-check', output);
    expect(output()).not.toContain('tty-quiet-check');
    expect(output()).not.toContain('request completed');
    expect(output().split(printed![1]!).length - 1).toBe(1);
  }, 90_000);

  it('logs requests in a terminal too when SIGNALBOX_LOG_LEVEL is debug', async () => {
    const { port, output } = await startInTerminal({ SIGNALBOX_LOG_LEVEL: 'debug' });
    await pingAndStop(port, 'tty-debug-check', output, true);
    expect(output()).toContain('tty-debug-check');
    expect(output()).toContain('request completed');
  }, 90_000);

  it('logs requests at info with SIGNALBOX_REQUEST_LOG_LEVEL=info', async () => {
    const { port, output } = await startInTerminal({ SIGNALBOX_REQUEST_LOG_LEVEL: 'info' });
    await pingAndStop(port, 'tty-info-check', output, true);
    expect(output()).toContain('request completed');
  }, 90_000);
});
