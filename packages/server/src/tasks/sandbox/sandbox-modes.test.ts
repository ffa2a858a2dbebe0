import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import type { Harness } from '../../../test/support/harness';
import { insertTemplate } from '../../../test/support/task-fixtures';
import { harnessWithProject, insertGitRepository, runTask } from '../../../test/support/task-runs';
import { sharedTempDir } from '../../../test/support/task-shared';

/** A bwrap that is not there: what a machine without bubblewrap looks like to the server. */
const MISSING = '/nonexistent/signalbox-test/bwrap';

/**
 * The sandbox setting as the server resolves it at start: `auto` uses bubblewrap where it runs and otherwise says
 * loudly that tasks run unconfined; `bwrap` refuses to run a task without it; both are shown to admins only.
 */
describe.each(testDialects())('the task sandbox modes on $name', (dialect) => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** A harness with `sandbox`, a template whose script reads a file of the data directory, and its task's end. */
  async function runReader(overrides: Parameters<typeof harnessWithProject>[1]) {
    const p = await harnessWithProject(dialect, overrides);
    h = p.h;
    await p.h.deps.tasks.start();
    writeFileSync(join(p.h.dataDir, 'server-only.txt'), 'a file of the server\n');
    const marker = join(p.h.dataDir, 'script-ran');
    const { id: repoId } = await insertGitRepository(p.h.deps, p.projectId, {
      'read.sh': `echo ran > ${marker} 2>/dev/null\ncat ${join(p.h.dataDir, 'server-only.txt')} 2>&1\necho "home $HOME"\n`,
    });
    const tpl = await insertTemplate(p.h.deps, p.projectId, { repository_id: repoId, playbook: 'read.sh' });
    const run = await runTask(p.h, p.owner, p.projectId, { template_id: tpl });
    const admin = await p.h.userClient({ admin: true });
    const info = async (client: typeof admin) => (await client.get('/api/info')).json();
    return {
      ...run,
      marker,
      adminInfo: await info(admin),
      memberInfo: await info(p.owner),
      logs: p.h.logLines,
    };
  }

  it('auto confines tasks where bubblewrap runs: the data directory is out of sight', async () => {
    const r = await runReader({ taskSandbox: 'auto' });
    expect(r.done.status, r.out.join('\n')).toBe('success');
    expect(r.out).not.toContain('a file of the server');
    expect(r.out.some((l) => /^home .*\/tasks\/\d+\/home$/.test(l))).toBe(true);
    expect(r.adminInfo.task_sandbox).toEqual({ mode: 'bwrap' });
    expect(r.memberInfo.task_sandbox).toBeUndefined();
  });

  it('auto on a machine without bubblewrap warns loudly at start and runs tasks unconfined', async () => {
    const r = await runReader({ taskSandbox: 'auto', taskSandboxBwrap: MISSING });
    const warning = r.logs.map((l) => JSON.parse(l)).find((l) => /TASK SANDBOX IS OFF/.test(l.msg));
    expect(warning).toMatchObject({ level: 40, reason: `${MISSING} was not found` });
    expect(r.done.status, r.out.join('\n')).toBe('success');
    expect(r.out).toContain('a file of the server');
    expect(r.adminInfo.task_sandbox).toEqual({ mode: 'off', reason: `${MISSING} was not found` });
  });

  it('bwrap on a machine without bubblewrap fails every task before anything of it runs', async () => {
    const r = await runReader({ taskSandbox: 'bwrap', taskSandboxBwrap: MISSING });
    const reason = `SIGNALBOX_TASK_SANDBOX is bwrap, but ${MISSING} was not found`;
    expect(r.logs.map((l) => JSON.parse(l)).find((l) => l.reason === reason)).toMatchObject({ level: 50 });
    expect(r.done.status).toBe('error');
    expect(r.out).toContain(reason);
    expect(r.out).not.toContain('a file of the server');
    expect(existsSync(r.marker)).toBe(false);
    expect(r.adminInfo.task_sandbox).toEqual({ mode: 'refused', reason });
  });

  it('runs sandboxed tasks as SIGNALBOX_TASK_USER, which cannot read what only the server may', async () => {
    // Visible to tasks (a shared path) but readable by the server's user alone.
    const serverOnly = join(sharedTempDir('sb-user-'), 'server-only.txt');
    writeFileSync(serverOnly, 'only the server reads this\n', { mode: 0o600 });
    const p = await harnessWithProject(dialect, { taskSandbox: 'auto', taskUser: 'nobody' });
    h = p.h;
    // Fetched into the repository cache and cloned into the task's folder by the task user.
    const { id: repoId, dir } = await insertGitRepository(
      p.h.deps,
      p.projectId,
      {
        'who.sh': `echo "uid $(id -u)"\ncat ${serverOnly} 2>&1\necho written > written.txt && cat written.txt\n`,
      },
      { fileUrl: true },
    );
    // The task user may read the repository, as on a machine set up for it.
    execFileSync('chmod', ['-R', 'a+rX', dir]);
    const tpl = await insertTemplate(p.h.deps, p.projectId, { repository_id: repoId, playbook: 'who.sh' });
    const r = await runTask(p.h, p.owner, p.projectId, { template_id: tpl });
    expect(r.done.status, r.out.join('\n')).toBe('success');
    expect(r.out).toContain('uid 65534');
    expect(r.out).not.toContain('only the server reads this');
    expect(r.out.some((l) => l.includes('Permission denied'))).toBe(true);
    expect(r.out).toContain('written');
    // The next run gets a copy of the working copy kept from that clone, made by the server: the task user's too.
    const again = await runTask(p.h, p.owner, p.projectId, { template_id: tpl });
    expect(again.done.status, again.out.join('\n')).toBe('success');
    expect(again.out).toContain('uid 65534');
    expect(again.out).toContain('written');
  });

  it('a task user that does not exist fails every task, naming it', async () => {
    const r = await runReader({ taskSandbox: 'auto', taskUser: 'no-such-user-here' });
    expect(r.done.status).toBe('error');
    expect(r.out).toContain('SIGNALBOX_TASK_USER names no user of this machine (no-such-user-here)');
    expect(existsSync(r.marker)).toBe(false);
  });

  it('off runs tasks with the server’s rights, as the setting says', async () => {
    const r = await runReader({ taskSandbox: 'off' });
    expect(r.done.status).toBe('success');
    expect(r.out).toContain('a file of the server');
    expect(existsSync(r.marker)).toBe(true);
    expect(r.adminInfo.task_sandbox).toEqual({ mode: 'off' });
  });
});
