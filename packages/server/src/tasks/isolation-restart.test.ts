import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cgroupOf,
  escapeRepo,
  instanceCgroup,
  killSleepers,
  sleepers,
  uniqueSleep,
} from '../../test/support/escapes';
import { freePort } from '../../test/support/net';
import {
  cookieApi,
  serverBin,
  serverProcessEnv,
  signInAdmin,
  waitForServer,
} from '../../test/support/server-process';
import { alive, insertRepository, insertTemplate, waitFor } from '../../test/support/task-fixtures';
import { openDb } from '../db';
import { ownCgroup } from './isolation';

const cgroupUsable = 'dir' in ownCgroup();

/**
 * A real `signalbox server` is killed with SIGKILL while its task has a grandchild that left the task's session,
 * cleared its environment and lost its parent; the restarted server must end that grandchild too (from the
 * task's cgroup, or from the sessions the crashed server recorded in the task's directory).
 */
for (const mode of ['cgroup', 'session'] as const) {
  describe.skipIf(mode === 'cgroup' && !cgroupUsable)(`server crash in ${mode} mode`, () => {
    const dataDir = mkdtempSync(join(tmpdir(), `sb-iso-restart-${mode}-`));
    const instanceId = `iso-restart-${mode}-${process.pid}`;
    let server: ChildProcess | null = null;
    let port = 0;
    const numbers: number[] = [];
    const env = serverProcessEnv(dataDir, {
      SIGNALBOX_INSTANCE_ID: instanceId,
      SIGNALBOX_TASK_ISOLATION: mode,
    });

    async function startServer() {
      server = spawn(process.execPath, [serverBin, 'server'], {
        env: { ...env, SIGNALBOX_PORT: String(port) },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      await waitForServer(port);
    }

    afterAll(async () => {
      if (server?.pid && server.exitCode === null) server.kill('SIGKILL');
      killSleepers(numbers);
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('the restarted server ends the escaped grandchild and removes what held it', async () => {
      port = await freePort();
      await startServer();
      const call = cookieApi(port, await signInAdmin(port));
      const api = async (path: string, body: unknown) =>
        (await (await call('POST', path, body)).json()) as { id: number };
      const projectId = (await api('/api/projects', { name: 'Crash' })).id;

      const handle = openDb(`sqlite://${join(dataDir, 'signalbox.db')}`);
      try {
        const deps = { db: handle.db, dialect: handle.dialect } as Parameters<typeof insertTemplate>[0];
        const repoId = await insertRepository(deps, projectId, { git_url: `file://${escapeRepo()}` });
        const n = uniqueSleep();
        numbers.push(n);
        const tpl = await insertTemplate(deps, projectId, {
          repository_id: repoId,
          playbook: 'escape-and-wait.sh',
          arguments: JSON.stringify([String(n), mode]),
        });
        const taskId = (await api(`/api/project/${projectId}/tasks`, { template_id: tpl })).id;
        const output = async () =>
          (
            await handle.db
              .selectFrom('task_output')
              .select('output')
              .where('task_id', '=', taskId)
              .orderBy('id')
              .execute()
          ).map((r) => r.output);
        const pid = await waitFor(async () => {
          const out = await output();
          const line = out.find((l) => l.startsWith('escaped '));
          return line && out.includes('recorded') ? Number(line.split(' ')[1]) : undefined;
        }, 20_000);
        expect(sleepers(n)).toEqual([pid]);
        if (mode === 'cgroup') expect(cgroupOf(pid)).toContain(`/signalbox-${instanceId}/task-${taskId}/`);
        else expect(existsSync(join(dataDir, 'tasks', String(taskId), 'sessions.json'))).toBe(true);

        server!.kill('SIGKILL');
        await new Promise((r) => server!.once('exit', r));
        // The crash alone ends nothing: the grandchild is still there.
        expect(alive(pid)).toBe(true);

        await startServer();
        await waitFor(async () => !alive(pid) || undefined, 10_000, 'the escaped sleep to end');
        expect(sleepers(n)).toEqual([]);
        const task = await handle.db
          .selectFrom('task')
          .select(['status', 'message'])
          .where('id', '=', taskId)
          .executeTakeFirstOrThrow();
        expect(task).toEqual({ status: 'error', message: 'Interrupted by server restart' });
        if (mode === 'cgroup')
          expect(existsSync(join(instanceCgroup(instanceId)!, `task-${taskId}`))).toBe(false);
        expect(existsSync(join(dataDir, 'tasks', String(taskId)))).toBe(false);
      } finally {
        await handle.destroy();
      }
      server!.kill('SIGTERM');
      await new Promise((r) => server!.once('exit', r));
    });
  });
}
