import { describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { insertTemplate } from '../../../test/support/task-fixtures';
import { harnessWithProject, insertGitRepository, runTask } from '../../../test/support/task-runs';

/**
 * SIGNALBOX_TASK_OUTPUT_LIMIT_MB: a task that prints more than its limit is stopped; what it printed up to the limit
 * is kept, nothing after it, and it ends as error saying why.
 */
describe.each(testDialects())('the output limit of a task on $name', (dialect) => {
  it('stops a task past 1 MiB of output and ends it as error with the reason', async () => {
    const { h, owner, projectId } = await harnessWithProject(dialect, { taskOutputLimitMb: 1 });
    try {
      const { id: repoId } = await insertGitRepository(h.deps, projectId, {
        // 4 MiB of 1 KiB lines, then a line and a long sleep that the stop must cut short.
        'flood.sh':
          'line=$(head -c 1023 /dev/zero | tr "\\0" x)\nfor i in $(seq 4096); do echo "$line"; done\necho after the flood\nsleep 600\n',
      });
      const tpl = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook: 'flood.sh' });
      const { done, out } = await runTask(h, owner, projectId, { template_id: tpl }, { timeoutMs: 60_000 });
      const reason = 'The task printed more than 1 MiB of output (its limit): it was stopped';
      expect(done.status).toBe('error');
      expect(done.message).toBe(reason);
      expect(out.at(-1)).toBe(reason);
      expect(out).not.toContain('after the flood');
      const flood = out.filter((l) => l.startsWith('xxx'));
      // Everything up to the limit is kept (the set-up lines take a few hundred bytes of it).
      expect(flood.length).toBeGreaterThan(1000);
      expect(flood.length).toBeLessThanOrEqual(1024);
    } finally {
      await h.close();
    }
  });
});
