import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import {
  escapedPid,
  insertEscapeRepository,
  insertEscapeTemplate,
} from '../../../test/support/escaped-tasks';
import { cgroupOf, killSleepers, sleepers } from '../../../test/support/escapes';
import { dataDirDbUrl, postForId, serverChild, serverDb } from '../../../test/support/server-child';
import { cookieApi, serverProcessEnv } from '../../../test/support/server-process';
import { alive, outputOf, waitFor, waitForStatus } from '../../../test/support/task-fixtures';
import { harnessWithProject } from '../../../test/support/task-runs';
import { ownCgroup } from './isolation';
import type { IsolationSetting } from './sandbox';

/**
 * In the task sandbox a command's PID namespace holds every process it starts, so a grandchild that left the
 * task's session, cleared its environment and lost its parent (`setsid env -i sleep`) still ends with the task's
 * end, a stop, a forced stop and the server's own death — without a cgroup: none is entered (each new one costs a
 * kernel grace period at the command's start) unless SIGNALBOX_TASK_ISOLATION=cgroup requires one.
 */

const cgroupUsable = 'dir' in ownCgroup();
const sqlite = testDialects().find((d) => d.name === 'sqlite')!;
const numbers: number[] = [];
afterAll(() => killSleepers(numbers));

/** The host pid of the escaped sleep (the task prints its pid inside the namespace). */
const hostPid = (n: number) =>
  waitFor(async () => (sleepers(n).length === 1 ? sleepers(n)[0] : undefined), 5000, 'the escaped sleep');

async function confinedHarness(isolation: IsolationSetting) {
  const instanceId = `ns-${isolation}-${process.pid}`;
  const { h, owner, projectId } = await harnessWithProject(sqlite, {
    instanceId,
    taskIsolation: isolation,
    taskSandbox: 'bwrap',
  });
  const repoId = await insertEscapeRepository(h.deps, projectId);
  /** Starts a task of the script; its id and the sleep's number once the sleep has escaped. */
  const startEscape = async (script: string) => {
    const { templateId, n } = await insertEscapeTemplate(h.deps, projectId, repoId, {
      script,
      mode: 'namespace',
      numbers,
    });
    const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: templateId });
    expect(res.statusCode).toBe(201);
    const id = res.json().id as number;
    await escapedPid(() => outputOf(h.deps, id));
    return { id, n };
  };
  /** startEscape of a script that keeps running, with the sleep's host pid. */
  const startRunning = async () => {
    const started = await startEscape('escape-and-wait.sh');
    return { ...started, pid: await hostPid(started.n) };
  };
  const stop = (id: number, force: boolean) =>
    owner.post(`/api/project/${projectId}/tasks/${id}/stop`, { force });
  return { h, instanceId, startEscape, startRunning, stop };
}

const gone = async (n: number, pid: number) => {
  await waitFor(async () => !alive(pid) || undefined, 5000, 'the escaped sleep to end');
  expect(sleepers(n)).toEqual([]);
};

describe('confined tasks under the default isolation', () => {
  let c: Awaited<ReturnType<typeof confinedHarness>>;
  beforeAll(async () => {
    c = await confinedHarness('auto');
  });
  afterAll(async () => {
    // Unset when the harness failed to start.
    await c?.h.close();
  });

  it('enter no cgroup: the escaped process stays in the server’s own', async () => {
    const { id, n, pid } = await c.startRunning();
    expect(cgroupOf(pid)).toBe(cgroupOf(process.pid));
    expect(cgroupOf(pid)).not.toContain(`signalbox-${c.instanceId}`);
    expect((await c.stop(id, true)).statusCode).toBe(204);
    await gone(n, pid);
  });

  for (const force of [false, true]) {
    it(`${force ? 'a forced stop' : 'a stop'} ends the escaped process`, async () => {
      const { id, n, pid } = await c.startRunning();
      expect((await c.stop(id, force)).statusCode).toBe(204);
      expect((await waitForStatus(c.h.deps, id, ['stopped', 'error', 'success'], 10_000)).status).toBe(
        'stopped',
      );
      await gone(n, pid);
    });
  }

  it('the end of the task ends the escaped process', async () => {
    // The task printed that its sleep had escaped (its own session, env cleared, parent gone) before ending.
    const { id, n } = await c.startEscape('escape-and-exit.sh');
    const done = await waitForStatus(c.h.deps, id, ['stopped', 'error', 'success'], 10_000);
    expect(done.status, (await outputOf(c.h.deps, id)).join('\n')).toBe('success');
    await waitFor(async () => sleepers(n).length === 0 || undefined, 5000, 'the escaped sleep to end');
  });
});

describe.skipIf(!cgroupUsable)('confined tasks when the setting requires a cgroup', () => {
  it('each command enters its own cgroup as well', async () => {
    const c = await confinedHarness('cgroup');
    try {
      const { id, n, pid } = await c.startRunning();
      expect(cgroupOf(pid)).toMatch(new RegExp(`/signalbox-${c.instanceId}/task-${id}/cmd-\\d+$`));
      expect((await c.stop(id, true)).statusCode).toBe(204);
      await gone(n, pid);
    } finally {
      await c.h.close();
    }
  });
});

describe('a confined task when its server dies', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-ns-crash-'));
  const server = serverChild(
    serverProcessEnv(dataDir, {
      SIGNALBOX_INSTANCE_ID: `ns-crash-${process.pid}`,
      SIGNALBOX_TASK_SANDBOX: 'bwrap',
    }),
  );
  afterAll(() => {
    if (server.running()) server.process!.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the escaped process ends with the server, before any restart', async () => {
    const cookie = await server.startAndSignIn();
    const call = cookieApi(server.port, cookie);
    const projectId = await postForId(call, '/api/projects', { name: 'Crash' });
    const { handle, rows, outputOf: outputIn } = serverDb(dataDirDbUrl(dataDir));
    try {
      const repoId = await insertEscapeRepository(rows, projectId);
      const { templateId, n } = await insertEscapeTemplate(rows, projectId, repoId, {
        script: 'escape-and-wait.sh',
        mode: 'namespace',
        numbers,
      });
      const taskId = await postForId(call, `/api/project/${projectId}/tasks`, { template_id: templateId });
      await escapedPid(() => outputIn(taskId));
      const pid = await hostPid(n);
      await server.stop('SIGKILL');
      await gone(n, pid);
    } finally {
      await handle.destroy();
    }
  });
});
