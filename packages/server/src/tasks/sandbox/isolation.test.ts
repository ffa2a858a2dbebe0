import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import {
  escapedPid,
  insertEscapeRepository,
  insertEscapeTemplate,
} from '../../../test/support/escaped-tasks';
import { cgroupOf, instanceCgroup, killSleepers, sleepers } from '../../../test/support/escapes';
import type { Client, Harness } from '../../../test/support/harness';
import { alive, outputOf, waitFor, waitForStatus } from '../../../test/support/task-fixtures';
import { harnessWithProject } from '../../../test/support/task-runs';
import { ownCgroup } from './isolation';

/**
 * A task grandchild that calls `setsid env -i …` (new session, cleared environment, parent gone) must not
 * outlive its task: not after a stop, a forced stop or the task's own end. Both isolation modes run the same
 * cases with real processes; the server-crash case is in isolation-restart.test.ts. Isolation is what holds a
 * task's processes together when the sandbox is off (in the sandbox, its PID namespace does: see
 * task-sandbox.test.ts), so these tasks run with SIGNALBOX_TASK_SANDBOX=off.
 */

const cgroupUsable = 'dir' in ownCgroup();
const sqlite = testDialects().find((d) => d.name === 'sqlite')!;

for (const mode of ['cgroup', 'session'] as const) {
  describe.skipIf(mode === 'cgroup' && !cgroupUsable)(`escaped grandchildren in ${mode} mode`, () => {
    let h: Harness;
    let owner: Client;
    let projectId: number;
    let repoId: number;
    const instanceId = `iso-${mode}-${process.pid}`;
    const numbers: number[] = [];

    beforeAll(async () => {
      const overrides = {
        maxParallelTasks: 10,
        instanceId,
        taskIsolation: mode,
        taskSandbox: 'off' as const,
      };
      ({ h, owner, projectId } = await harnessWithProject(sqlite, overrides));
      repoId = await insertEscapeRepository(h.deps, projectId);
    });
    afterAll(async () => {
      killSleepers(numbers);
      await h?.close();
    });

    /** Starts a task of the script and returns it once the escaped sleep runs (and is recorded). */
    async function startEscape(script: string) {
      const { templateId, n } = await insertEscapeTemplate(h.deps, projectId, repoId, {
        script,
        mode,
        numbers,
      });
      const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: templateId });
      expect(res.statusCode).toBe(201);
      const id = res.json().id as number;
      const pid = await escapedPid(() => outputOf(h.deps, id));
      return { id, n, pid };
    }

    /** The escaped sleep really escaped: its own session, no task variables, and (cgroup) in the task's cgroup. */
    function expectEscaped(id: number, n: number, pid: number) {
      expect(sleepers(n)).toEqual([pid]);
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const [, ppid, , sid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      expect(Number(sid)).toBe(pid);
      expect(Number(ppid)).not.toBe(process.pid);
      expect(readFileSync(`/proc/${pid}/environ`, 'latin1')).toBe('');
      if (mode === 'cgroup')
        expect(cgroupOf(pid)).toMatch(new RegExp(`/signalbox-${instanceId}/task-${id}/cmd-\\d+$`));
    }

    async function expectGone(id: number, n: number, pid: number) {
      await waitFor(async () => !alive(pid) || undefined, 5000, 'the escaped sleep to end');
      expect(sleepers(n)).toEqual([]);
      if (mode === 'cgroup') {
        const dir = join(instanceCgroup(instanceId)!, `task-${id}`);
        await waitFor(async () => !existsSync(dir) || undefined, 5000, 'the task cgroup to be removed');
      }
    }

    for (const force of [false, true]) {
      it(`${force ? 'a forced stop' : 'a stop'} ends the escaped process`, async () => {
        const { id, n, pid } = await startEscape('escape-and-wait.sh');
        expectEscaped(id, n, pid);
        const stop = await owner.post(`/api/project/${projectId}/tasks/${id}/stop`, { force });
        expect(stop.statusCode).toBe(204);
        expect((await waitForStatus(h.deps, id, ['stopped', 'error', 'success'], 10_000)).status).toBe(
          'stopped',
        );
        await expectGone(id, n, pid);
      });
    }

    it('the end of the task ends the escaped process', async () => {
      const { id, n, pid } = await startEscape('escape-and-exit.sh');
      const done = await waitForStatus(h.deps, id, ['stopped', 'error', 'success'], 10_000);
      expect(done.status, (await outputOf(h.deps, id)).join('\n')).toBe('success');
      await expectGone(id, n, pid);
    });
  });
}
