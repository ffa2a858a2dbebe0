import { describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { insertTemplate, outputOf, waitFor, waitForStatus } from '../../test/support/task-fixtures';
import { insertGitRepository, useHarnessWithProject } from '../../test/support/task-runs';
import { shutdownMessage } from './queue/instances';

/**
 * The task engine's drain (the graceful half of a server shutdown): once the grace period is over, a run still
 * going is interrupted with the shutdown's reason, and one somebody already asked to stop ends as stopped.
 */
describe.each(testDialects())('draining the task engine on $name', (dialect) => {
  const p = useHarnessWithProject(dialect, { maxParallelTasks: 10 });

  it('interrupts what runs past the grace period, and leaves a stop asked for as stopped', async () => {
    const { h, owner, projectId } = p;
    const files = {
      'wait.sh': 'echo started\nsleep 600\n',
      // Ignores SIGTERM: a plain stop leaves it `stopping` until the engine kills it.
      'stubborn.sh': "trap '' TERM\necho started\nsleep 600 & wait\n",
    };
    const { id: repoId } = await insertGitRepository(h.deps, projectId, files);
    const start = async (playbook: string) => {
      const template_id = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook });
      const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id });
      expect(res.statusCode, res.body).toBe(201);
      const id = res.json().id as number;
      await waitFor(async () => (await outputOf(h.deps, id)).includes('started') || undefined);
      return id;
    };
    const waiting = await start('wait.sh');
    const stubborn = await start('stubborn.sh');
    expect((await owner.post(`/api/project/${projectId}/tasks/${stubborn}/stop`, {})).statusCode).toBe(204);
    await waitForStatus(h.deps, stubborn, ['stopping']);

    await h.deps.tasks.drain(0);
    expect(h.deps.tasks.isRunning()).toBe(false);

    const interrupted = await waitForStatus(h.deps, waiting, ['error'], 1000);
    expect(interrupted.message).toBe(shutdownMessage);
    expect((await outputOf(h.deps, waiting)).at(-1)).toBe(shutdownMessage);
    const stopped = await waitForStatus(h.deps, stubborn, ['stopped'], 1000);
    expect(stopped.message).not.toBe(shutdownMessage);
    expect(await outputOf(h.deps, stubborn)).not.toContain(shutdownMessage);
  });
});
