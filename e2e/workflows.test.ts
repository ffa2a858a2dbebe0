import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, createUser, login, type SeedUser } from './support/api';
import { launch, PHONE, shot, WAIT_MS } from './support/browser';
import { seedBashProject } from './support/seed';
import { useSharedServerAsAdmin } from './support/shared';
import { expectSnackbar, shotEach } from './support/team';

const suite = useSharedServerAsAdmin();
let projectId: number;
let approver: SeedUser;
let approverApi: Api;
let browser: Browser;
let productionEnv: number;
const repos: string[] = [];

type StoredWorkflow = {
  id: number;
  nodes: {
    id: string;
    name: string;
    type: string;
    extra_vars?: Record<string, unknown>;
    environment_id?: unknown;
    seconds?: number;
  }[];
  edges: { from: string; to: string; condition: string }[];
};

beforeAll(async () => {
  const admin = suite.admin;
  const seeded = await seedBashProject(admin, 'Release flow', {
    Build: ['build.sh', 'echo "building"\necho "release=1.4.2" >> "$SIGNALBOX_OUTPUTS"\n'],
    'Deploy A': ['deploy-a.sh', 'echo "deploying to A"\n'],
    'Deploy B': ['deploy-b.sh', 'echo "deploying to B at $TARGET"\n'],
    Smoke: ['smoke.sh', 'echo "smoke ok"\n'],
  });
  projectId = seeded.projectId;
  const repo = await admin.get<{ git_url: string }>(
    `/project/${projectId}/repositories/${seeded.repositoryId}`,
  );
  repos.push(repo.git_url);
  // Deploy B may run with another environment than its template's: the workflow picks Production.
  productionEnv = (
    await admin.post<{ id: number }>(`/project/${projectId}/environment`, {
      name: 'Production',
      project_id: projectId,
      json: '{}',
      env: JSON.stringify({ TARGET: 'production-b' }),
    })
  ).id;
  const deployB = await admin.get<Record<string, unknown>>(
    `/project/${projectId}/templates/${seeded.templates['Deploy B']}`,
  );
  await admin.put(`/project/${projectId}/templates/${seeded.templates['Deploy B']}`, {
    ...deployB,
    task_params: { allow_override_environment: true },
  });
  approver = await createUser(admin, { name: 'Ada Approver' });
  await admin.post(`/project/${projectId}/users`, { user_id: approver.id, role: 'manager' });
  approverApi = await login(suite.server.url, approver.username, approver.password);
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  for (const dir of repos) rmSync(dir, { recursive: true, force: true });
});

/** The graph's card of a node (React Flow renders each node in a wrapper carrying its id). */
const card = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
const panel = (page: Page) => page.locator('[data-panel-node]');

/** Picks an option of a MUI select by its label, with the mouse. */
async function pick(page: Page, scope: ReturnType<Page['locator']>, label: string, option: string) {
  await scope.getByRole('combobox', { name: label }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

/** Picks an option of a MUI select with the keyboard only: focus, open with Enter, walk to it, Enter. */
async function pickByKeyboard(page: Page, combobox: ReturnType<Page['locator']>, option: string) {
  await combobox.focus();
  await page.keyboard.press('Enter');
  const listbox = page.getByRole('listbox');
  await listbox.waitFor();
  // The menu moves the focus into the list once it has opened: walk from there.
  await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'option');
  const focused = () => page.evaluate(() => document.activeElement?.textContent ?? '');
  for (let i = 0; i < 20 && (await focused()) !== option; i++) await page.keyboard.press('ArrowDown');
  expect(await focused()).toBe(option);
  await page.keyboard.press('Enter');
  await listbox.waitFor({ state: 'detached' });
}

describe('workflows in the console', () => {
  it('are built in the editor by mouse and keyboard, run, approved from the inbox by another member, and watched live', async () => {
    const admin = suite.admin;
    const page = await suite.pageAs(admin);
    await page.goto(`/project/${projectId}/workflows`);
    await page.getByText('No workflows yet').waitFor();
    await page.getByRole('button', { name: 'New Workflow' }).click();
    await page.getByRole('textbox', { name: /^Name/ }).first().fill('Release');

    // Mouse: the build, then an approval after it (new nodes follow the selected node).
    await page.getByRole('button', { name: 'Add template' }).click();
    await card(page, 'template-1').waitFor();
    await pick(page, panel(page), 'Template', 'Build');
    await panel(page).getByLabel('Name', { exact: true }).fill('build');
    await page.getByRole('button', { name: 'Add approval' }).click();
    await panel(page).getByLabel('Name', { exact: true }).fill('approve');
    await panel(page).getByLabel('Message to approvers').fill('Ship 1.4.2?');
    // No approver at all: the server refuses it, and says so at the node.
    await panel(page).getByRole('checkbox', { name: 'Owner' }).uncheck();
    await panel(page).getByRole('checkbox', { name: 'Manager' }).uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await panel(page)
      .getByRole('alert')
      .filter({ hasText: 'Approval node approval-1 names nobody who may approve it' })
      .waitFor();
    expect(await card(page, 'approval-1').locator('[data-invalid="true"]').count()).toBe(1);
    await shot(page, 'workflow-editor-error-light-1280');
    await panel(page).getByRole('checkbox', { name: 'Manager' }).check();

    // Two parallel deploys after the approval, the first taking the build's output as an extra variable.
    await page.getByRole('button', { name: 'Add template' }).click();
    await pick(page, panel(page), 'Template', 'Deploy A');
    await panel(page).getByLabel('Name', { exact: true }).fill('deploy-a');
    await panel(page).locator('#node-template-2-extra-add-name').fill('release');
    await panel(page).getByRole('button', { name: 'Add', exact: true }).click();
    await pick(page, panel(page), 'release', 'Output of a node');
    await panel(page).getByLabel('Output', { exact: true }).fill('release');
    await card(page, 'approval-1').click();
    await page.getByRole('button', { name: 'Add template' }).click();
    await pick(page, panel(page), 'Template', 'Deploy B');
    await panel(page).getByLabel('Name', { exact: true }).fill('deploy-b');
    const environment = panel(page).getByRole('group', { name: 'Environment' });
    await pick(page, environment, 'Environment', 'Fixed value');
    await pick(page, environment, 'Value', 'Production');
    await shot(page, 'workflow-editor-environment-light-1280');

    // Keyboard: a delay after deploy-b, joined from deploy-a through the connect form, then the smoke test.
    await page.getByRole('button', { name: 'Add delay' }).focus();
    await page.keyboard.press('Enter');
    await card(page, 'delay-1').waitFor();
    await panel(page).getByLabel('Name', { exact: true }).focus();
    await page.keyboard.type('wait');
    await panel(page).getByLabel('Seconds').focus();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('2');
    await card(page, 'template-2').focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-panel-node="template-2"]').waitFor();
    await pickByKeyboard(page, panel(page).getByRole('combobox', { name: 'Connect to' }), 'wait');
    await panel(page).getByRole('button', { name: 'Connect', exact: true }).focus();
    await page.keyboard.press('Enter');
    await panel(page).locator('[data-edge="template-2→delay-1"]').waitFor();
    await card(page, 'delay-1').focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-panel-node="delay-1"]').waitFor();
    await page.getByRole('button', { name: 'Add template' }).focus();
    await page.keyboard.press('Enter');
    await pickByKeyboard(page, panel(page).getByRole('combobox', { name: 'Template' }), 'Smoke');
    await panel(page).getByLabel('Name', { exact: true }).focus();
    await page.keyboard.type('smoke');
    // A stray node, added and deleted with the Delete key on its card.
    await page.getByRole('button', { name: 'Add approval' }).focus();
    await page.keyboard.press('Enter');
    await card(page, 'approval-2').focus();
    await page.keyboard.press('Delete');
    await card(page, 'approval-2').waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Workflow "Release" saved');
    await page.waitForURL(/\/workflows\/\d+$/);
    const workflowId = Number(/\/workflows\/(\d+)$/.exec(page.url())?.[1]);
    const stored = await admin.get<StoredWorkflow>(`/project/${projectId}/workflows/${workflowId}`);
    expect(stored.nodes.map((n) => [n.id, n.name, n.type])).toEqual([
      ['template-1', 'build', 'template'],
      ['approval-1', 'approve', 'approval'],
      ['template-2', 'deploy-a', 'template'],
      ['template-3', 'deploy-b', 'template'],
      ['delay-1', 'wait', 'delay'],
      ['template-4', 'smoke', 'template'],
    ]);
    expect(stored.nodes.find((n) => n.id === 'delay-1')?.seconds).toBe(2);
    expect(stored.nodes.find((n) => n.id === 'template-3')?.environment_id).toEqual({
      from: 'fixed',
      value: productionEnv,
    });
    expect(stored.nodes.find((n) => n.id === 'template-2')?.extra_vars).toEqual({
      release: { from: 'output', node: 'template-1', name: 'release' },
    });
    expect(stored.edges.map((e) => `${e.from}>${e.to}:${e.condition}`).sort()).toEqual(
      [
        'template-1>approval-1:success',
        'approval-1>template-2:success',
        'approval-1>template-3:success',
        'template-3>delay-1:success',
        'template-2>delay-1:success',
        'delay-1>template-4:success',
      ].sort(),
    );
    await shot(page, 'workflow-editor-light-1280');

    // Run it: the run view follows it until the approval waits.
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const start = page.getByRole('dialog', { name: 'Run Release' });
    await start.getByLabel('Message').fill('release 1.4.2');
    await start.getByRole('button', { name: 'Run' }).click();
    await page.waitForURL(/\/workflow-runs\/\d+$/);
    const runId = Number(/\/workflow-runs\/(\d+)$/.exec(page.url())?.[1]);
    await card(page, 'template-1').locator('[data-status="success"]').waitFor({ timeout: 60_000 });
    await card(page, 'approval-1').locator('[data-status="waiting_approval"]').waitFor();
    await page.getByTestId('run-summary').locator('[data-status="waiting_approval"]').waitFor();
    // The run's clock redraws the nodes every second; no node may drop out of sight (React Flow hides a node it
    // has not measured) while it does.
    await page.evaluate(() => {
      const seen = window as unknown as { hiddenNodes: number };
      seen.hiddenNodes = 0;
      const nodes = document.querySelector('.react-flow__nodes');
      if (!nodes) throw new Error('no graph nodes');
      new MutationObserver((records) => {
        for (const r of records)
          if (r.oldValue?.includes('hidden') || (r.target as HTMLElement).style.visibility === 'hidden')
            seen.hiddenNodes++;
      }).observe(nodes, {
        subtree: true,
        attributes: true,
        attributeFilter: ['style'],
        attributeOldValue: true,
      });
    });
    const approvalCard = card(page, 'approval-1');
    for (let tick = 0; tick < 2; tick++) {
      const shown = await approvalCard.textContent();
      await expect.poll(() => approvalCard.textContent(), { timeout: WAIT_MS }).not.toBe(shown);
    }
    expect(await page.evaluate(() => (window as unknown as { hiddenNodes: number }).hiddenNodes)).toBe(0);

    // The approver sees it in the inbox (badge and page) and approves it.
    const other = await suite.pageAs(approverApi);
    await other.goto(`/project/${projectId}/history`);
    await other.locator('[data-testid="approvals-badge"][data-count="1"]').first().waitFor();
    await other.goto(`/project/${projectId}/approvals`);
    const row = other.locator(`[data-inbox-kind="workflow_node"][data-run-id="${runId}"]`);
    await row.getByText('Ship 1.4.2?').waitFor();
    await shot(other, 'workflow-inbox-light-1280');
    await row.getByRole('button', { name: 'Approve or reject' }).click();
    const dialog = other.getByRole('dialog', { name: `Approve approve of run #${runId}` });
    await dialog.getByText('0 of 1 approvals').waitFor();
    // The dialog shows what the deploys will run with: the build's output, and Deploy B's environment.
    const inputs = dialog.getByTestId('approval-inputs');
    await inputs
      .locator('[data-input="template-2.extra_vars.release"]')
      .getByText('1.4.2', { exact: true })
      .waitFor();
    await inputs.getByText('Output release of build').waitFor();
    await inputs
      .locator('[data-input="template-3.environment_id"]')
      .getByText(`Production (${productionEnv})`)
      .waitFor();
    await shot(other, 'workflow-approval-inputs-light-1280');
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await expectSnackbar(other, `approve of run #${runId} approved`);
    await other.getByText('Nothing else waits for you').waitFor();
    await other.context().close();

    // The admin's run view reaches success live: both deploys, the delay and the smoke test.
    await page.getByTestId('run-summary').locator('[data-status="success"]').waitFor({ timeout: 90_000 });
    for (const id of ['template-2', 'template-3', 'delay-1', 'template-4'])
      await card(page, id).locator('[data-status="success"]').waitFor();
    await shot(page, 'workflow-run-light-1280');

    // A click on a template node opens its task's log.
    await card(page, 'template-2').click();
    const log = page.getByRole('dialog');
    await log.getByText('deploying to A').waitFor();
    expect(new URL(page.url()).searchParams.get('t')).toMatch(/^\d+$/);
    await log.getByRole('link', { name: `Workflow run #${runId}, node template-2` }).waitFor();
    await page.keyboard.press('Escape');
    await log.waitFor({ state: 'detached' });
    // Deploy B ran with the environment the node chose, and its details name it.
    await card(page, 'template-3').click();
    await page.getByRole('dialog').getByText('deploying to B at production-b').waitFor();
    await page.getByRole('dialog').getByText('Production', { exact: true }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    // The build's log shows the output it published for the deploys.
    await card(page, 'template-1').click();
    const outputs = page.getByRole('dialog').locator('[data-task-outputs]');
    await outputs.getByText('release', { exact: true }).waitFor();
    await outputs.getByText('1.4.2', { exact: true }).waitFor();
    await shot(page, 'workflow-task-outputs-light-1280');
    await page.keyboard.press('Escape');

    // The run is listed among the workflow's runs.
    await page.goto(`/project/${projectId}/workflows/${workflowId}/runs`);
    await page.locator(`[data-run-id="${runId}"] [data-status="success"]`).waitFor();
    await page.context().close();

    // On a phone the run view lists the nodes instead of drawing the graph, and fits the width.
    const phone = await suite.pageAs(admin, { viewport: PHONE });
    await phone.goto(`/project/${projectId}/workflow-runs/${runId}`);
    const list = phone.getByRole('list', { name: 'Nodes' });
    await list.locator('[data-node-id="template-4"][data-status="success"]').waitFor();
    expect(await phone.getByTestId('workflow-graph').count()).toBe(0);
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await phone.context().close();

    // Light and dark, desktop and phone (saved by npm run screenshots; checked for overflow at 390 px always).
    const user = { username: approver.username, password: approver.password };
    await shotEach(browser, suite.server.url, user, [
      [`/project/${projectId}/workflows/${workflowId}`, 'workflow-editor'],
      [`/project/${projectId}/workflow-runs/${runId}`, 'workflow-run'],
      [`/project/${projectId}/workflows`, 'workflows'],
    ]);
  });

  it('are read-only for a guest, who sees the graph but no edit or run controls', async () => {
    const guest = await createUser(suite.admin, { name: 'Gil Guest' });
    await suite.admin.post(`/project/${projectId}/users`, { user_id: guest.id, role: 'guest' });
    const api = await login(suite.server.url, guest.username, guest.password);
    const page = await suite.pageAs(api);
    await page.goto(`/project/${projectId}/workflows`);
    await page.getByRole('link', { name: 'Release', exact: true }).click();
    await page.getByText('You can look at this workflow; only managers and owners change it.').waitFor();
    await card(page, 'template-1').waitFor();
    expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Add template' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Run', exact: true }).count()).toBe(0);
    await page.context().close();
  });

  it('are stopped, and re-run from a failed node, in the run view', async () => {
    const admin = suite.admin;
    const seeded = await seedBashProject(admin, 'Rerun flow', {
      Fail: ['fail.sh', 'echo "failing on purpose"\nexit 1\n'],
      Slow: ['slow.sh', 'echo "slow start"\nsleep 120\n'],
    });
    const base = `/project/${seeded.projectId}`;
    const repo = await admin.get<{ git_url: string }>(`${base}/repositories/${seeded.repositoryId}`);
    repos.push(repo.git_url);
    const workflow = async (name: string, template: number) =>
      (
        await admin.post<{ id: number }>(`${base}/workflows`, {
          name,
          nodes: [{ id: 'only', name: `${name} node`, type: 'template', template_id: template }],
        })
      ).id;
    const start = async (id: number) =>
      (await admin.post<{ id: number }>(`${base}/workflows/${id}/runs`, {})).id;
    const page = await suite.pageAs(admin);

    const failing = await start(await workflow('Failing', seeded.templates.Fail as number));
    await page.goto(`${base}/workflow-runs/${failing}`);
    await page.getByTestId('run-summary').locator('[data-status="failed"]').waitFor({ timeout: 60_000 });
    await card(page, 'only').focus();
    await page.keyboard.press('Enter');
    await panel(page).getByText('Failed').waitFor();
    await panel(page).getByRole('button', { name: 'Re-run from this node' }).click();
    await expectSnackbar(page, 'The run starts again from Failing node');
    await panel(page).getByText('Attempt 2').waitFor({ timeout: 60_000 });
    await page.getByTestId('run-summary').locator('[data-status="failed"]').waitFor({ timeout: 60_000 });

    const slow = await start(await workflow('Slow', seeded.templates.Slow as number));
    await page.goto(`${base}/workflow-runs/${slow}`);
    await card(page, 'only').locator('[data-status="running"]').waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Stop' }).click();
    await expectSnackbar(page, `Run #${slow} stopped`);
    await page.getByTestId('run-summary').locator('[data-status="stopped"]').waitFor({ timeout: 60_000 });
    expect(await page.getByRole('button', { name: 'Stop' }).count()).toBe(0);

    // The start dialog asks the workflow survey; a missing required answer is refused at its field.
    const asked = (
      await admin.post<{ id: number }>(`${base}/workflows`, {
        name: 'Asks a target',
        survey_vars: [{ name: 'target', title: 'Target', type: 'string', required: true }],
        nodes: [
          {
            id: 'only',
            type: 'template',
            template_id: seeded.templates.Fail,
            extra_vars: { target: { from: 'survey', name: 'target' } },
          },
        ],
      })
    ).id;
    await page.goto(`${base}/workflows`);
    await page.getByRole('button', { name: 'Run Asks a target' }).click();
    const dialog = page.getByRole('dialog', { name: 'Run Asks a target' });
    await dialog.getByRole('button', { name: 'Run' }).click();
    await dialog.getByText('Target is required').waitFor();
    await dialog.getByRole('textbox', { name: /^Target/ }).fill('staging');
    await dialog.getByRole('button', { name: 'Run' }).click();
    await page.waitForURL(/\/workflow-runs\/\d+$/);
    const askedRun = Number(/\/workflow-runs\/(\d+)$/.exec(page.url())?.[1]);
    const stored = await admin.get<{ workflow_id: number; survey: Record<string, unknown> }>(
      `${base}/workflow-runs/${askedRun}`,
    );
    expect(stored).toMatchObject({ workflow_id: asked, survey: { target: 'staging' } });
    await page.context().close();
  });
});
