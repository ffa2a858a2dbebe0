import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForStatus } from './support/seed';
import { useSharedServerAsAdmin } from './support/shared';
import { seedBashResources } from './support/team';

const suite = useSharedServerAsAdmin();
let projectId: number;
let templateId: number;
let repoPath: string;

beforeAll(async () => {
  const admin = suite.admin;
  projectId = (await admin.post<{ id: number }>('/projects', { name: 'Waiting tasks' })).id;
  const seeded = await seedBashResources(admin, projectId);
  repoPath = seeded.repoPath;
  // No runner carries this tag: a task of the template waits for one.
  templateId = (
    await admin.post<{ id: number }>(`/project/${projectId}/templates`, {
      name: 'Deploy to nowhere',
      app: 'bash',
      playbook: 'run.sh',
      repository_id: seeded.repoId,
      environment_id: seeded.envId,
      runner_tag: 'nowhere-edge',
    })
  ).id;
});
afterAll(() => {
  if (repoPath) rmSync(repoPath, { recursive: true, force: true });
});

describe('a waiting task', () => {
  it('shows why it waits, and a queued time instead of a start time', async () => {
    const admin = suite.admin;
    const task = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, { template_id: templateId });
    const reason = 'Waiting: no runner with tag "nowhere-edge" is online';
    await expect
      .poll(
        async () =>
          (await admin.get<{ status_detail: string | null }>(`/project/${projectId}/tasks/${task.id}`))
            .status_detail,
      )
      .toBe(reason);

    const page = await suite.pageAs(admin);
    await page.goto(`/project/${projectId}/history?t=${task.id}`);
    const dialog = page.getByRole('dialog');
    await dialog.getByText(reason).waitFor();
    await dialog.getByText('Queued', { exact: true }).waitFor();
    expect(await dialog.getByText('Started', { exact: true }).count()).toBe(0);
    await page.keyboard.press('Escape');

    // The history list: the chip describes the reason, and the start column stays empty.
    const row = page.getByRole('row').filter({ hasText: `#${task.id}` });
    await row.waitFor();
    expect(await row.locator('[data-status="waiting"]').getAttribute('aria-description')).toBe(reason);
    await page.context().close();

    await admin.post(`/project/${projectId}/tasks/${task.id}/stop`, { force: false });
    await waitForStatus(admin, projectId, task.id, ['stopped', 'error']);
  });
});
