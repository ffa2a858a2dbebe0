import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { liveShutdownClose } from '@signalbox/contracts';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { dataDirDbUrl, postForId, serverChild, serverDb } from '../test/support/server-child';
import { cookieApi, localUrl, serverProcessEnv } from '../test/support/server-process';
import { alive, insertTemplate, waitFor, waitForStatus } from '../test/support/task-fixtures';
import { hostPidsOf } from '../test/support/task-pids';
import { insertGitRepository } from '../test/support/task-runs';

/** Longer than the short task's three-second sleep, so it ends within the grace period. */
const GRACE_SECONDS = 5;

/**
 * A real `signalbox server` process told to stop (SIGTERM) while two tasks run: the one that ends within the grace
 * period ends as it would have, the other is interrupted with the shutdown's reason, nothing of either is left
 * running, a waiting task is not started, the live socket is told why it closes, and the process exits 0.
 */
describe('graceful shutdown of the server process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-shutdown-'));
  const server = serverChild(serverProcessEnv(dataDir, { SIGNALBOX_SHUTDOWN_GRACE: String(GRACE_SECONDS) }));

  afterAll(() => {
    if (server.running()) server.process!.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lets a short task finish, interrupts a long one after the grace period and exits 0', async () => {
    const cookie = await server.startAndSignIn();
    const api = cookieApi(server.port, cookie);
    const projectId = await postForId(api, '/api/projects', { name: 'Shutdown' });
    const { handle, rows, outputOf } = serverDb(dataDirDbUrl(dataDir));
    try {
      // Each script says its shell's pid and its sleep's, so the test can look for them afterwards (as the task
      // sees them: in the task sandbox those are pids of its own namespace, mapped back to the host's below).
      const files = {
        'short.sh': 'sleep 3 &\necho "main $$"\necho "child $!"\nwait\necho finished\n',
        'long.sh': 'sleep 600 &\necho "main $$"\necho "child $!"\nwait\necho finished\n',
      };
      const { id: repoId } = await insertGitRepository(rows, projectId, files, { fileUrl: true });
      const shortTpl = await insertTemplate(rows, projectId, { repository_id: repoId, playbook: 'short.sh' });
      const longTpl = await insertTemplate(rows, projectId, { repository_id: repoId, playbook: 'long.sh' });
      const longTask = await postForId(api, `/api/project/${projectId}/tasks`, { template_id: longTpl });
      const pidsOf = (taskId: number) =>
        waitFor(
          async () => hostPidsOf(taskId, await outputOf(taskId), ['main ', 'child ']),
          20_000,
          `the pids of task ${taskId}`,
        );
      const longPids = await pidsOf(longTask);
      const shortTask = await postForId(api, `/api/project/${projectId}/tasks`, { template_id: shortTpl });
      const shortPids = await pidsOf(shortTask);
      // Waits behind the short task (its template runs one task at a time), which ends during the grace period:
      // nothing claims a task once the shutdown has begun, so this one is left for the next start.
      const queued = await postForId(api, `/api/project/${projectId}/tasks`, { template_id: shortTpl });
      await waitForStatus(rows, queued, ['waiting']);

      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/ws`, { headers: { cookie } });
      ws.on('error', () => {});
      await new Promise((r) => ws.once('open', r));
      const socketClosed = new Promise<{ code: number; reason: string }>((resolve) =>
        ws.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
      );

      const child = server.process!;
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      const signalled = Date.now();
      child.kill('SIGTERM');

      expect(await socketClosed).toEqual({ code: liveShutdownClose.code, reason: liveShutdownClose.reason });
      // While the tasks drain, requests are refused rather than served by a server on its way out.
      expect((await fetch(localUrl(server.port, '/api/ping'))).status).toBe(503);

      expect(await exited).toEqual({ code: 0, signal: null });
      const shutdownMs = Date.now() - signalled;
      // The long task was given the whole grace period.
      expect(shutdownMs).toBeGreaterThanOrEqual(GRACE_SECONDS * 1000);

      const short = await waitForStatus(rows, shortTask, ['success'], 1000);
      expect(short.message).toBe('');
      expect((await outputOf(shortTask)).at(-1)).toBe('finished');
      const long = await waitForStatus(rows, longTask, ['error'], 1000);
      expect(long.message).toBe('Interrupted by server shutdown');
      expect(long.end).toBeTruthy();
      const longOutput = await outputOf(longTask);
      expect(longOutput).not.toContain('finished');
      expect(longOutput.at(-1)).toBe('Interrupted by server shutdown');
      expect([...shortPids, ...longPids].filter(alive)).toEqual([]);
      expect((await waitForStatus(rows, queued, ['waiting'], 1000)).start).toBeNull();
      console.info(`server shutdown with a ${GRACE_SECONDS} s grace took ${shutdownMs} ms`);
    } finally {
      await handle.destroy();
    }
  });
});
