import { rmSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch } from './support/browser';
import { waitForStatus } from './support/seed';
import { sharedServer } from './support/shared';
import type { SharedServer } from './support/shared-server';
import { contextAs, localBashRepo, seedBashResources, seedTeam, type Team } from './support/team';

let server: SharedServer;
let browser: Browser;
let team: Team;
let templateId: number;
let repoPath: string;

beforeAll(async () => {
  server = sharedServer();
  browser = await launch();
  team = await seedTeam(server.url, 'Guest task log');
  repoPath = localBashRepo('echo "started"\nsleep 120\n');
  const seeded = await seedBashResources(team.admin, team.projectId, repoPath);
  templateId = (
    await team.admin.post<{ id: number }>(`/project/${team.projectId}/templates`, {
      name: 'Long sleep',
      app: 'bash',
      playbook: 'run.sh',
      repository_id: seeded.repoId,
      environment_id: seeded.envId,
    })
  ).id;
});
afterAll(async () => {
  await browser?.close();
  if (repoPath) rmSync(repoPath, { recursive: true, force: true });
});

describe('task log dialog actions', () => {
  it('leaves Stop disabled, with the reason, for a guest; a task runner stops the task', async () => {
    const task = await team.admin.post<{ id: number }>(`/project/${team.projectId}/tasks`, {
      template_id: templateId,
    });
    await waitForStatus(team.admin, team.projectId, task.id, ['running']);

    const guest = await contextAs(browser, server.url, team.guest);
    await guest.page.goto(`/project/${team.projectId}/history?t=${task.id}`);
    const guestDialog = guest.page.getByRole('dialog');
    await guestDialog.getByText('Running', { exact: true }).waitFor();
    const guestStop = guestDialog.getByRole('button', { name: 'Stop' });
    await guestStop.waitFor();
    // Nothing is allowed while the role loads: look once it has arrived.
    await guest.page.waitForLoadState('networkidle');
    expect(await guestStop.isDisabled()).toBe(true);
    expect(await guestDialog.locator('[data-denied="runProjectTasks"]').count()).toBe(1);
    await guest.context.close();

    const runner = await contextAs(browser, server.url, team.runner);
    await runner.page.goto(`/project/${team.projectId}/history?t=${task.id}`);
    const runnerDialog = runner.page.getByRole('dialog');
    const runnerStop = runnerDialog.getByRole('button', { name: 'Stop' });
    await runnerStop.waitFor();
    await runner.page.waitForFunction(
      () => !document.querySelector('[role="dialog"] [data-denied="runProjectTasks"]'),
    );
    await runnerStop.click();
    const stopped = await waitForStatus(team.admin, team.projectId, task.id, ['stopped', 'stopping']);
    expect(['stopped', 'stopping']).toContain(stopped.status);
    await runner.context.close();
    if (stopped.status === 'stopping')
      await team.admin.post(`/project/${team.projectId}/tasks/${task.id}/stop`, { force: true });
  });
});
