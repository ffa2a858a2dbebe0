import { rmSync } from 'node:fs';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageOverflow, screenVariants, shot } from './support/browser';
import { waitForStatus } from './support/seed';
import { useSharedServerAsAdmin } from './support/shared';
import { expectSnackbar, seedBashResources } from './support/team';

const suite = useSharedServerAsAdmin();
let projectId: number;
let templateId: number;
let repoPath: string;
let agent: McpClient;

beforeAll(async () => {
  const admin = suite.admin;
  projectId = (await admin.post<{ id: number }>('/projects', { name: 'Agent approvals' })).id;
  const seeded = await seedBashResources(admin, projectId);
  repoPath = seeded.repoPath;
  templateId = (
    await admin.post<{ id: number }>(`/project/${projectId}/templates`, {
      name: 'Agent deploy',
      app: 'bash',
      playbook: 'run.sh',
      repository_id: seeded.repoId,
      environment_id: seeded.envId,
      allow_parallel_tasks: true,
    })
  ).id;
  const { token } = await admin.post<{ token: string }>('/user/tokens', {
    name: 'assistant',
    scopes: ['read', 'run'],
  });
  agent = new McpClient({ name: 'e2e-agent', version: '1.0.0' });
  await agent.connect(
    new StreamableHTTPClientTransport(new URL(`${suite.server.url}/api/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
});
afterAll(async () => {
  await agent?.close();
  if (repoPath) rmSync(repoPath, { recursive: true, force: true });
});

/** A run the assistant starts through MCP; the project asks for approval, so it waits for a person. */
async function agentRun(message: string): Promise<number> {
  const result = (await agent.callTool({
    name: 'run_template',
    arguments: { project_id: projectId, template_id: templateId, answers: {}, message },
  })) as { content: { text: string }[] };
  const started = JSON.parse(result.content[0]!.text) as { task_id: number; status: string };
  expect(started.status).toBe('waiting_approval');
  return started.task_id;
}

describe('runs started by an AI agent', () => {
  it('wait in the Approvals page, where a member approves one and rejects another with a reason', async () => {
    const admin = suite.admin;
    const approved = await agentRun('restart the web tier');
    const rejected = await agentRun('drop the cache');

    const page = await suite.pageAs(admin);
    await page.goto(`/project/${projectId}/approvals`);
    await page.getByRole('heading', { name: 'Runs waiting for approval' }).waitFor();
    const row = (id: number) => page.getByRole('row').filter({ hasText: `#${id}` });
    await row(approved).waitFor();
    expect(await row(approved).locator('[data-source="mcp"]').count()).toBe(1);
    expect(await row(rejected).getByText('drop the cache').count()).toBe(1);
    // A run that starts waiting while the page is open appears without a reload, and leaves when it is answered
    // elsewhere.
    const live = await agentRun('rotate the logs');
    await row(live).waitFor();
    await admin.post(`/project/${projectId}/tasks/${live}/reject`, { reason: 'answered elsewhere' });
    await row(live).waitFor({ state: 'detached' });

    await row(approved).getByRole('button', { name: 'Approve' }).click();
    await expectSnackbar(page, `Task #${approved} approved`);
    await row(approved).waitFor({ state: 'detached' });
    await waitForStatus(admin, projectId, approved, ['success']);

    await row(rejected).getByRole('button', { name: 'Reject' }).click();
    const dialog = page.getByRole('dialog', { name: `Reject task #${rejected}` });
    await dialog.getByLabel('Reason (optional)').fill('not during the freeze');
    await dialog.getByRole('button', { name: 'Reject' }).click();
    await expectSnackbar(page, `Task #${rejected} rejected`);
    await page.getByText('No run waits for approval').waitFor();
    const task = await admin.get<{ status: string; message: string }>(
      `/project/${projectId}/tasks/${rejected}`,
    );
    expect(task).toMatchObject({ status: 'rejected', message: 'not during the freeze' });

    // The history shows both with the MCP chip and their statuses.
    await page.goto(`/project/${projectId}/history`);
    const history = (id: number) => page.getByRole('row').filter({ hasText: `#${id}` });
    await history(rejected).locator('[data-status="rejected"]').waitFor();
    await history(approved).locator('[data-status="success"]').waitFor();
    expect(await history(approved).locator('[data-source="mcp"]').count()).toBe(1);
    await page.context().close();
  });

  it('wait in the inbox and show their MCP chip once approved, light and dark, at desktop and phone width', async () => {
    const admin = suite.admin;
    for (const { scheme, viewport, size } of screenVariants()) {
      const id = await agentRun(`release ${scheme} ${size}`);
      const page = await suite.pageAs(admin, { colorScheme: scheme, viewport });
      await page.addInitScript((dark) => localStorage.setItem('darkMode', dark), String(scheme === 'dark'));
      await page.goto(`/project/${projectId}/approvals`);
      const row = page.locator(`[data-task-id="${id}"]`);
      await row.waitFor();
      expect(await row.locator('[data-source="mcp"]').count()).toBe(1);
      await page.mouse.move(0, 0);
      expect(await pageOverflow(page)).toBeLessThanOrEqual(1);
      // The buttons are on the screen, not past a list that scrolls sideways.
      const approve = await row.getByRole('button', { name: 'Approve' }).boundingBox();
      expect((approve?.x ?? Infinity) + (approve?.width ?? 0)).toBeLessThanOrEqual(viewport.width);
      await shot(page, `approvals-${scheme}-${size}`);

      await row.getByRole('button', { name: 'Approve' }).click();
      await expectSnackbar(page, `Task #${id} approved`);
      await waitForStatus(admin, projectId, id, ['success']);
      await page.goto(`/project/${projectId}/history?t=${id}`);
      const dialog = page.getByRole('dialog');
      await dialog.locator('[data-status="success"]').waitFor();
      expect(await dialog.locator('[data-source="mcp"]').count()).toBe(1);
      await dialog.getByText('release').first().waitFor();
      expect(await pageOverflow(page)).toBeLessThanOrEqual(1);
      await shot(page, `task-mcp-${scheme}-${size}`);
      await page.context().close();
    }
  });

  it('can be approved from the task dialog, and the project setting shows on the settings page', async () => {
    const admin = suite.admin;
    const id = await agentRun('from the dialog');
    const page = await suite.pageAs(admin);
    await page.goto(`/project/${projectId}/history?t=${id}`);
    const dialog = page.getByRole('dialog');
    await dialog.locator('[data-status="waiting_approval"]').waitFor();
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await dialog.locator('[data-status="success"]').waitFor();
    await page.keyboard.press('Escape');

    await page.goto(`/project/${projectId}/settings`);
    const setting = page.getByRole('checkbox', { name: 'Runs started by AI agents need approval' });
    expect(await setting.isChecked()).toBe(true);
    await setting.uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(
        async () =>
          (await admin.get<{ agent_runs_need_approval: boolean }>(`/project/${projectId}`))
            .agent_runs_need_approval,
      )
      .toBe(false);
    await page.context().close();
  });
});
