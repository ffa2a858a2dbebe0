import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import type { Client, Harness } from '../../../test/support/harness';
import { refuseOutputStartingWith } from '../../../test/support/refused-output';
import { insertTemplate, outputOf, waitForStatus } from '../../../test/support/task-fixtures';
import { ENDED, harnessWithProject, insertGitRepository } from '../../../test/support/task-runs';
import { lostOutputMessage } from '../run/job';
import { MAX_LINE } from '../sandbox/process';

/** A task's output is stored whole, or the task says what is missing and does not end as success. */
describe.each(testDialects())('task output stored whole on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let repoId: number;

  beforeAll(async () => {
    ({ h, owner, projectId } = await harnessWithProject(dialect));
    ({ id: repoId } = await insertGitRepository(h.deps, projectId, {
      'long-line.sh': "head -c 64M /dev/zero | tr '\\0' a; echo; echo after-the-line\n",
      // Forty 1 MiB lines written out at once (a file cat prints as fast as the pipe takes it).
      'wide-lines.sh': [
        "head -c 1048000 /dev/zero | tr '\\0' b > wide.txt; echo >> wide.txt",
        'for i in $(seq 40); do cat wide.txt; done > forty.txt',
        'cat forty.txt; echo after-the-lines',
        '',
      ].join('\n'),
      'refused.sh': 'echo before; sleep 0.5; echo refused-line; sleep 0.5; echo after\n',
    }));
    await refuseOutputStartingWith(h.deps, 'refused');
  });
  afterAll(async () => h?.close());

  const runScript = async (playbook: string, timeoutMs: number) => {
    const templateId = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook });
    const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: templateId });
    expect(res.statusCode).toBe(201);
    const id = res.json().id as number;
    return waitForStatus(h.deps, id, ENDED, timeoutMs);
  };

  it('stores a 64 MiB line in pieces and the line after it, without waiting minutes', async () => {
    const task = await runScript('long-line.sh', 90_000);
    expect(task.status).toBe('success');
    const lines = await outputOf(h.deps, task.id);
    // The task's own lines come first (Started…); then the pieces of the long line and the line after it.
    const first = lines.findIndex((line) => /^a+$/.test(line));
    expect(first).toBeGreaterThan(-1);
    expect(lines.at(-1)).toBe('after-the-line');
    const pieces = lines.slice(first, -1);
    expect(pieces.every((line) => /^a*$/.test(line) && line.length <= MAX_LINE)).toBe(true);
    expect(pieces.join('')).toHaveLength(64 * 1024 * 1024);
  }, 120_000);

  it('stores forty 1 MiB lines printed at once, and the line after them', async () => {
    const task = await runScript('wide-lines.sh', 90_000);
    expect(task.status).toBe('success');
    const lines = await outputOf(h.deps, task.id);
    const wide = lines.filter((line) => line.length === 1048000 && /^b+$/.test(line));
    expect(wide).toHaveLength(40);
    expect(lines.at(-1)).toBe('after-the-lines');
  }, 120_000);

  it('ends a task whose lines the database refused as error, saying how many are missing', async () => {
    const task = await runScript('refused.sh', 60_000);
    const lines = await outputOf(h.deps, task.id);
    expect(task.status, lines.join('\n')).toBe('error');
    expect(task.message).toMatch(/^The output is incomplete: \d+ lines? could not be stored/);
    expect(lines.at(-1)).toBe(task.message);
    expect(lines).not.toContain('refused-line');
    // The failure is logged without the lines' text (a driver's error carries its statement).
    const log = h.logLines.join('\n');
    expect(log).toContain('storing task output failed');
    expect(log).not.toContain('refused-line');
    const missing = Number(/: (\d+) lines?/.exec(task.message ?? '')?.[1]);
    expect(task.message).toBe(lostOutputMessage(missing));
  }, 90_000);
});
