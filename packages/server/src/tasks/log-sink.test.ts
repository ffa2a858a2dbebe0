import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { gitRepo, insertRepository, insertTemplate, waitForStatus } from '../../test/support/task-fixtures';

describe.each(testDialects())('task output on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    owner = await h.userClient({ can_create_project: true });
    ({ projectId } = await h.projectWithTeam(owner));
  });
  afterAll(async () => h?.close());

  it('stores a NUL in a line as U+FFFD instead of dropping it, and reads it back', async () => {
    const repoId = await insertRepository(h.deps, projectId, {
      git_url: gitRepo({ 'nul.sh': "printf 'before\\0after\\n'\nprintf '\\0\\0\\n'\necho plain\n" }),
    });
    const tpl = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook: 'nul.sh' });
    const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: tpl });
    const id = res.json().id as number;
    expect((await waitForStatus(h.deps, id, ['success', 'error'])).status).toBe('success');
    const output = await owner.get(`/api/project/${projectId}/tasks/${id}/output`);
    expect(output.statusCode).toBe(200);
    const lines = (output.json() as { output: string }[]).map((r) => r.output);
    const at = lines.indexOf('before\uFFFDafter');
    expect(at, lines.join('\n')).toBeGreaterThan(-1);
    expect(lines.slice(at, at + 3)).toEqual(['before\uFFFDafter', '\uFFFD\uFFFD', 'plain']);
  });
});
