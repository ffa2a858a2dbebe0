import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import type { Client, Harness } from '../../../test/support/harness';
import { insertTemplate, waitFor, waitForStatus } from '../../../test/support/task-fixtures';
import { harnessWithProject, insertGitRepository } from '../../../test/support/task-runs';

/** The server-wide cap (SIGNALBOX_MAX_PARALLEL_TASKS) and per-template task retention (MAX_TASKS_PER_TEMPLATE). */
describe.each(testDialects())('queue limits on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let repoId: number;

  beforeAll(async () => {
    ({ h, owner, projectId } = await harnessWithProject(dialect, {
      maxParallelTasks: 1,
      maxTasksPerTemplate: 3,
    }));
    const files = { 'nap.sh': 'sleep 0.8\necho napped\n', 'quick.sh': 'echo "quick $1"\n' };
    ({ id: repoId } = await insertGitRepository(h.deps, projectId, files));
  });
  afterAll(async () => h?.close());

  const post = async (templateId: number) =>
    (await owner.post(`/api/project/${projectId}/tasks`, { template_id: templateId })).json().id as number;
  const get = async (id: number) => (await owner.get(`/api/project/${projectId}/tasks/${id}`)).json();

  it('holds a second task of another template behind the server cap and says why, then runs it', async () => {
    const napper = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook: 'nap.sh' });
    const other = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook: 'quick.sh' });
    const first = await post(napper);
    await waitForStatus(h.deps, first, ['running']);
    const second = await post(other);
    const detail = await waitFor(async () => (await get(second)).status_detail as string | null);
    expect(detail).toBe('Waiting: server limit of 1 running task reached');
    expect((await get(second)).status).toBe('waiting');
    const done = await waitForStatus(h.deps, second, ['success', 'error'], 20_000);
    const firstRow = await waitForStatus(h.deps, first, ['success', 'error']);
    expect([firstRow.status, done.status]).toEqual(['success', 'success']);
    // Strictly one after the other.
    expect(Date.parse(done.start!)).toBeGreaterThanOrEqual(Date.parse(firstRow.end!));
    expect((await get(second)).status_detail).toBeNull();
  });

  it("keeps only the newest finished tasks of a template, deleting the older ones' output too", async () => {
    const tpl = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook: 'quick.sh' });
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const id = await post(tpl);
      ids.push(id);
      expect((await waitForStatus(h.deps, id, ['success', 'error'])).status).toBe('success');
    }
    const left = await h.deps.db
      .selectFrom('task')
      .select('id')
      .where('template_id', '=', tpl)
      .orderBy('id')
      .execute();
    // Pruned when the 5th was queued: the 3 newest finished ones stay beside it.
    expect(left.map((r) => r.id)).toEqual(ids.slice(1));
    expect((await owner.get(`/api/project/${projectId}/tasks/${ids[0]}`)).statusCode).toBe(404);
    const orphanLines = await h.deps.db
      .selectFrom('task_output')
      .select('id')
      .where('task_id', '=', ids[0]!)
      .execute();
    expect(orphanLines).toEqual([]);
    const kept = await h.deps.db
      .selectFrom('task_output')
      .select('id')
      .where('task_id', '=', ids[4]!)
      .execute();
    expect(kept.length).toBeGreaterThan(0);
  });
});
