import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, createUser, login, type SeedUser } from './support/api';
import { DESKTOP, launch, newContext, screenVariants, shot, useSession } from './support/browser';
import { seedBashProject, waitForStatus as waitForTaskStatus } from './support/seed';
import { ADMIN, startServer, type TestServer } from './support/server';
import { everyActionPlan, terraformStandInEnv } from './support/terraform';

// The approved plan is the applied plan, and drift, in the console: a plan approved by a second person in the
// structured confirm dialog, a plan-only task's plan applied later, and a drifted template's badge and drift view.
let server: TestServer;
let browser: Browser;
let admin: Api;
let approver: SeedUser;
let projectId: number;
const templates: Record<string, number> = {};

/** A refresh-only plan's JSON: resources changed outside Terraform, one of them by a tag the rules ignore. */
const driftPlan = JSON.stringify({
  format_version: '1.2',
  resource_drift: [
    {
      address: 'aws_s3_bucket.logs',
      change: {
        actions: ['update'],
        before: { tags: { Owner: 'ops', LastScanned: '1' } },
        after: { tags: { Owner: 'dev', LastScanned: '2' } },
      },
    },
    {
      address: 'aws_instance.legacy',
      change: { actions: ['delete'], before: { ami: 'ami-1' }, after: null },
    },
    {
      address: 'aws_autoscaling_group.web',
      change: { actions: ['update'], before: { desired_capacity: 2 }, after: { desired_capacity: 5 } },
    },
  ],
});

beforeAll(async () => {
  server = await startServer(terraformStandInEnv());
  browser = await launch();
  admin = await login(server.url, ADMIN.login, ADMIN.password);
  const seeded = await seedBashProject(
    admin,
    'Network Infra',
    { Noop: ['noop.sh', 'true\n'] },
    {
      'core/main.tf': '# every kind of change\n',
      'core/plan.json': everyActionPlan,
      'edge/main.tf': '# drifted\n',
      'edge/drift.json': driftPlan,
      'edge/plan.json': everyActionPlan,
    },
  );
  projectId = seeded.projectId;
  approver = await createUser(admin, { name: 'Ada Approver' });
  await admin.post(`/project/${projectId}/users`, { user_id: approver.id, role: 'task_runner' });
  const base = `/project/${projectId}`;
  const template = async (name: string, playbook: string, task_params: Record<string, unknown>) =>
    (
      await admin.post<{ id: number }>(`${base}/templates`, {
        name,
        app: 'terraform',
        playbook,
        repository_id: seeded.repositoryId,
        environment_id: seeded.environmentId,
        project_id: projectId,
        task_params,
      })
    ).id;
  templates.Core = await template('Core network', 'core', { approver_must_differ: true });
  templates.Edge = await template('Edge network', 'edge', {
    drift_check: true,
    drift_cron: '0 */6 * * *',
    drift_ignore_attributes: ['tags.LastScanned'],
    drift_ignore_addresses: ['aws_autoscaling_group.*'],
  });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function pageAs(api: Api, viewport = DESKTOP, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const context = await newContext(browser, server.url, { viewport, colorScheme });
  await useSession(context, server.url, api.cookie);
  return context.newPage();
}
const waitForStatus = (taskId: number, statuses: string[], timeout = 60_000) =>
  waitForTaskStatus(admin, projectId, taskId, statuses, timeout);

describe('Terraform plan approval in the console', () => {
  it('refuses the starter, and a second user approves in the structured confirm dialog', async () => {
    const task = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, {
      template_id: templates.Core,
    });
    await waitForStatus(task.id, ['waiting_confirmation']);
    const plan = await admin.get<{ plan_file: { digest: string } }>(
      `/project/${projectId}/tasks/${task.id}/plan`,
    );

    const own = await pageAs(admin);
    await own.goto(`/project/${projectId}/history?t=${task.id}`);
    const ownDialog = own.getByRole('dialog');
    await ownDialog.locator('[data-plan-summary]').waitFor();
    await ownDialog.getByRole('button', { name: 'Confirm' }).click();
    await own
      .getByText('This template requires someone other than who started the run to approve its plan')
      .waitFor();
    await own.context().close();

    const second = await login(server.url, approver.username, approver.password);
    // Every scheme and width under `npm run screenshots`, else the phone width.
    for (const { scheme, viewport, size } of screenVariants()) {
      const page = await pageAs(second, viewport, scheme);
      await page.goto(`/project/${projectId}/history?t=${task.id}`);
      const dialog = page.getByRole('dialog');
      const summary = dialog.locator('[data-plan-summary]');
      await summary.locator('[data-plan-group="delete"]').waitFor();
      // What the approver reads is bound to the plan file: its SHA-256 is shown.
      await expect
        .poll(() => summary.locator('[data-plan-file]').textContent())
        .toContain(`SHA-256 ${plan.plan_file.digest.slice(0, 12)}`);
      await shot(page, `plan-approval-${scheme}-${size}`);
      await page.context().close();
    }
    const page = await pageAs(second);
    await page.goto(`/project/${projectId}/history?t=${task.id}`);
    const dialog = page.getByRole('dialog');
    await dialog.locator('[data-plan-summary]').waitFor();
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    expect((await waitForStatus(task.id, ['success', 'error'])).status).toBe('success');
    await expect
      .poll(() => dialog.locator('[data-plan-file]').textContent())
      .toContain(`approved by ${approver.name}`);
    await page.context().close();
  });

  it("applies a plan-only task's stored plan from its page with Apply this plan", async () => {
    const task = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, {
      template_id: templates.Core,
      params: { plan: true },
    });
    expect((await waitForStatus(task.id, ['success', 'error'])).status).toBe('success');
    const second = await login(server.url, approver.username, approver.password);
    const page = await pageAs(second);
    await page.goto(`/project/${projectId}/history?t=${task.id}`);
    const dialog = page.getByRole('dialog');
    await expect
      .poll(() => dialog.locator('[data-plan-file]').textContent())
      .toContain('can be applied until');
    await shot(page, 'plan-stored-light-1280');
    await dialog.getByRole('button', { name: 'Apply this plan' }).click();
    await page.waitForURL((u) => u.searchParams.get('t') !== String(task.id));
    const applyId = Number(new URL(page.url()).searchParams.get('t'));
    expect(applyId).toBeGreaterThan(task.id);
    expect((await waitForStatus(applyId, ['success', 'error'])).status).toBe('success');
    await dialog
      .getByRole('log')
      .getByText(`Applying the plan of task ${task.id}`, { exact: false })
      .waitFor();
    // The plan task now says which task applied it, and offers no second apply.
    await page.goto(`/project/${projectId}/history?t=${task.id}`);
    await expect
      .poll(() => page.getByRole('dialog').locator('[data-plan-file]').textContent())
      .toContain(`applied by task #${applyId}`);
    expect(await page.getByRole('button', { name: 'Apply this plan' }).count()).toBe(0);
    await page.context().close();
  });
});

describe('drift in the console', () => {
  it('shows a drifted template with a badge and its drift view, and reconciles it', async () => {
    const check = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, {
      template_id: templates.Edge,
      params: { drift_check: true },
    });
    expect((await waitForStatus(check.id, ['success', 'error'])).status).toBe('success');
    // Every scheme and width under `npm run screenshots`, else the phone width.
    for (const { scheme, viewport, size } of screenVariants()) {
      const page = await pageAs(admin, viewport, scheme);
      await page.goto(`/project/${projectId}/templates`);
      await page.locator('[data-drift-badge]').first().waitFor();
      await shot(page, `templates-drift-${scheme}-${size}`);
      await page.locator('[data-drift-badge]').first().click();
      const view = page.locator('[data-drift-view]');
      await view.locator('[data-drift-status="drifted"]').waitFor();
      await view.locator('[data-drift-address="aws_s3_bucket.logs"]').waitFor();
      await shot(page, `template-drift-${scheme}-${size}`);
      await page.context().close();
    }
    const page = await pageAs(admin);
    await page.goto(`/project/${projectId}/templates/${templates.Edge}`);
    const view = page.locator('[data-drift-view]');
    await view.locator('[data-drift-status="drifted"]').waitFor();
    // What differs, by address and attribute path; ignored resources and paths are left out.
    expect(
      await view
        .locator('[data-drift-address]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-drift-address'))),
    ).toEqual(expect.arrayContaining(['aws_s3_bucket.logs', 'aws_instance.legacy']));
    expect(await view.locator('[data-drift-address="aws_autoscaling_group.web"]').count()).toBe(0);
    await expect
      .poll(() => view.locator('[data-drift-address="aws_s3_bucket.logs"]').textContent())
      .toContain('tags.Owner');
    expect(await view.textContent()).not.toContain('LastScanned');
    expect(await view.textContent()).toContain('Drifted since');
    await view.getByRole('button', { name: 'Reconcile' }).click();
    await page.waitForURL((u) => u.searchParams.has('t'));
    const reconcileId = Number(new URL(page.url()).searchParams.get('t'));
    expect(reconcileId).toBeGreaterThan(check.id);
    await waitForStatus(reconcileId, ['waiting_confirmation']);
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).waitFor();
    await page.context().close();
  });

  it('sets the drift options in the template form and names a bad cron', async () => {
    const page = await pageAs(admin);
    await page.goto(`/project/${projectId}/templates/${templates.Edge}/edit`);
    const cron = page.locator('[data-field="drift_cron"]');
    await cron.waitFor();
    expect(await cron.inputValue()).toBe('0 */6 * * *');
    expect(await page.locator('[data-field="drift_ignore_attributes"]').inputValue()).toBe(
      'tags.LastScanned',
    );
    await cron.fill('every day');
    await page.locator('[data-field="plan_ttl_hours"]').fill('48');
    await page.getByRole('button', { name: /^Save/ }).first().click();
    await page
      .getByText(/Drift check schedule/)
      .first()
      .waitFor();
    await cron.fill('0 3 * * *');
    await page.getByRole('button', { name: /^Save/ }).first().click();
    await expect
      .poll(
        async () =>
          (
            await admin.get<{ task_params: Record<string, unknown> }>(
              `/project/${projectId}/templates/${templates.Edge}`,
            )
          ).task_params,
      )
      .toMatchObject({ drift_cron: '0 3 * * *', plan_ttl_hours: 48 });
    await page.context().close();
  });
});
