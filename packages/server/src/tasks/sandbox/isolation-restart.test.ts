import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  escapedPid,
  insertEscapeRepository,
  insertEscapeTemplate,
} from '../../../test/support/escaped-tasks';
import { cgroupOf, instanceCgroup, killSleepers, sleepers } from '../../../test/support/escapes';
import { dataDirDbUrl, postForId, serverChild, serverDb } from '../../../test/support/server-child';
import { cookieApi, serverProcessEnv } from '../../../test/support/server-process';
import { alive, waitFor } from '../../../test/support/task-fixtures';
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
    const numbers: number[] = [];
    const server = serverChild(
      // Isolation holds an unconfined task's processes (a confined one's end with its PID namespace).
      serverProcessEnv(dataDir, {
        SIGNALBOX_INSTANCE_ID: instanceId,
        SIGNALBOX_TASK_ISOLATION: mode,
        SIGNALBOX_TASK_SANDBOX: 'off',
      }),
    );

    afterAll(async () => {
      if (server.running()) server.process!.kill('SIGKILL');
      killSleepers(numbers);
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('the restarted server ends the escaped grandchild and removes what held it', async () => {
      const cookie = await server.startAndSignIn();
      const call = cookieApi(server.port, cookie);
      const projectId = await postForId(call, '/api/projects', { name: 'Crash' });

      const { handle, rows, outputOf } = serverDb(dataDirDbUrl(dataDir));
      try {
        const repoId = await insertEscapeRepository(rows, projectId);
        const script = 'escape-and-wait.sh';
        const { templateId, n } = await insertEscapeTemplate(rows, projectId, repoId, {
          script,
          mode,
          numbers,
        });
        const taskId = await postForId(call, `/api/project/${projectId}/tasks`, { template_id: templateId });
        const pid = await escapedPid(() => outputOf(taskId));
        expect(sleepers(n)).toEqual([pid]);
        if (mode === 'cgroup') expect(cgroupOf(pid)).toContain(`/signalbox-${instanceId}/task-${taskId}/`);
        else expect(existsSync(join(dataDir, 'tasks', String(taskId), 'sessions.json'))).toBe(true);

        await server.stop('SIGKILL');
        // The crash alone ends nothing: the grandchild is still there.
        expect(alive(pid)).toBe(true);

        await server.start();
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
      await server.stop('SIGTERM');
    });

    // While it was down, another instance sharing the database ended its task as its runner gone: the task is
    // no longer this instance's to interrupt, but its processes and folder are still this machine's to clear.
    it('the restarted server also ends the processes and folders of tasks another instance ended meanwhile', async () => {
      const cookie = await server.startAndSignIn();
      const call = cookieApi(server.port, cookie);
      const projectId = await postForId(call, '/api/projects', { name: 'Ended elsewhere' });
      const { handle, rows, outputOf } = serverDb(dataDirDbUrl(dataDir));
      try {
        const repoId = await insertEscapeRepository(rows, projectId);
        const { templateId, n } = await insertEscapeTemplate(rows, projectId, repoId, {
          script: 'escape-and-wait.sh',
          mode,
          numbers,
        });
        const taskId = await postForId(call, `/api/project/${projectId}/tasks`, { template_id: templateId });
        const pid = await escapedPid(() => outputOf(taskId));
        const folder = join(dataDir, 'tasks', String(taskId));
        expect(existsSync(folder)).toBe(true);

        await server.stop('SIGKILL');
        const ended = 'Interrupted: the server running this task (instance x) stopped responding';
        await handle.db
          .updateTable('task')
          .set({ status: 'error', message: ended, end: new Date().toISOString() })
          .where('id', '=', taskId)
          .execute();
        expect(alive(pid)).toBe(true);

        await server.start();
        await waitFor(async () => !alive(pid) || undefined, 10_000, 'the escaped sleep to end');
        expect(sleepers(n)).toEqual([]);
        expect(existsSync(folder)).toBe(false);
        if (mode === 'cgroup')
          expect(existsSync(join(instanceCgroup(instanceId)!, `task-${taskId}`))).toBe(false);
        // What the other instance recorded stands.
        const task = await handle.db
          .selectFrom('task')
          .select(['status', 'message'])
          .where('id', '=', taskId)
          .executeTakeFirstOrThrow();
        expect(task).toEqual({ status: 'error', message: ended });
      } finally {
        await handle.destroy();
      }
      await server.stop('SIGTERM');
    });
  });
}
