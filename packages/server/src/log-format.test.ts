import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../test/support/net';
import { serverChild } from '../test/support/server-child';
import { localUrl, serverProcessEnv } from '../test/support/server-process';
import { waitFor } from '../test/support/task-fixtures';

/**
 * A real `signalbox server` whose stdout is a pipe (as under systemd, Docker or a log shipper) writes one JSON object
 * per line; SIGNALBOX_LOG_FORMAT=pretty makes it write for a person instead.
 */
describe('server log format', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-log-format-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  /** Starts the server with `format`, sends one request with a known id, and returns stdout once it is logged. */
  async function stdoutOf(format: string, requestId: string) {
    const env = serverProcessEnv(dataDir, { SIGNALBOX_LOG_LEVEL: 'info', SIGNALBOX_LOG_FORMAT: format });
    const server = serverChild(env, { capture: true });
    server.port = await freePort();
    try {
      await server.start();
      const res = await fetch(localUrl(server.port, '/api/ping'), { headers: { 'x-request-id': requestId } });
      expect(res.headers.get('x-request-id')).toBe(requestId);
      await waitFor(async () => server.stdout.includes(requestId), 10_000, 'the request in the log');
    } finally {
      if (server.running()) await server.stop('SIGTERM');
    }
    return server.stdout;
  }

  it('writes JSON lines when stdout is not a terminal (the default, auto)', async () => {
    const stdout = await stdoutOf('', 'json-format-check');
    const lines = stdout.split('\n').filter((line) => line !== '');
    const parsed = lines.map((line) => JSON.parse(line) as { reqId?: string; msg?: string });
    expect(parsed.filter((line) => line.reqId === 'json-format-check').map((line) => line.msg)).toContain(
      'request completed',
    );
  });

  it('writes readable lines, not JSON, with SIGNALBOX_LOG_FORMAT=pretty', async () => {
    const stdout = await stdoutOf('pretty', 'pretty-format-check');
    const lines = stdout.split('\n').filter((line) => line.includes('pretty-format-check'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).toThrow();
    expect(stdout).toContain('request completed');
  });
});
