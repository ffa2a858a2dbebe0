import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, login } from './support/api';
import { DESKTOP, launch, newContext, PHONE, shot, useSession, WAIT_MS } from './support/browser';
import { seedBashProject, waitForStatus as waitForTaskStatus } from './support/seed';
import { ADMIN, root, startServer, type TestServer } from './support/server';
import { everyActionPlan, PLAN_SECRET, terraformStandInEnv } from './support/terraform';

// Its own server: the 200,000-line log is written straight into the server's SQLite file in one
// transaction, which would hold the write lock of a shared server for a while as other files save.
let server: TestServer;
let browser: Browser;
let admin: Api;
let projectId: number;
const templates: Record<string, number> = {};

beforeAll(async () => {
  server = await startServer(terraformStandInEnv());
  browser = await launch();
  admin = await login(server.url, ADMIN.login, ADMIN.password);
  const seeded = await seedBashProject(
    admin,
    'Live Tasks',
    {
      Ticker: [
        'tick.sh',
        'for i in $(seq 1 3000); do printf "\\033[32mtick %d\\033[0m ok\\n" "$i"; sleep 0.2; done\n',
      ],
      Quick: ['quick.sh', 'echo "quick run"\n'],
    },
    {
      'infra/main.tf': 'resource "null_resource" "example" {}\n',
      'planned/main.tf': '# every kind of change\n',
      'planned/plan.json': everyActionPlan,
    },
  );
  projectId = seeded.projectId;
  Object.assign(templates, seeded.templates);
  const base = `/project/${projectId}`;
  templates.Infra = (
    await admin.post<{ id: number }>(`${base}/templates`, {
      name: 'Infra',
      app: 'terraform',
      playbook: 'infra',
      repository_id: seeded.repositoryId,
      environment_id: seeded.environmentId,
      project_id: projectId,
    })
  ).id;
  templates.Planned = (
    await admin.post<{ id: number }>(`${base}/templates`, {
      name: 'Planned',
      app: 'terraform',
      playbook: 'planned',
      repository_id: seeded.repositoryId,
      environment_id: seeded.environmentId,
      project_id: projectId,
    })
  ).id;
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

describe('task log dialog', () => {
  it('opens by ?t=, shows live coloured lines of a running task, and stops it', async () => {
    const task = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, {
      template_id: templates.Ticker,
    });
    await waitForStatus(task.id, ['running']);
    const page = await pageAs(admin);
    await page.goto(`/project/${projectId}/history`);
    await page.getByRole('link', { name: `#${task.id}` }).click();
    await page.waitForURL((u) => u.searchParams.get('t') === String(task.id));
    const dialog = page.getByRole('dialog');
    await dialog.getByText(`Task #${task.id}`).waitFor();
    await dialog.getByRole('link', { name: 'Ticker' }).waitFor();
    await dialog.getByText('Running', { exact: true }).waitFor();
    const log = dialog.getByRole('log');
    // The last line shown: the log follows a running task's new lines (however many came before it opened).
    const lastTick = async () =>
      Number(
        /tick (\d+) ok/.exec((await log.locator('[data-log-line]').last().textContent()) ?? '')?.[1] ?? 0,
      );
    await expect.poll(lastTick).toBeGreaterThan(0);
    const seen = await lastTick();
    await expect.poll(lastTick).toBeGreaterThanOrEqual(seen + 3);
    // Left short of the bottom by no person (a busy browser lays out lines later than they come): the view still
    // follows, and the next lines bring it back to the tail.
    const scroller = log.locator('[data-virtuoso-scroller]');
    await expect
      .poll(() => scroller.evaluate((el) => el.scrollHeight - el.clientHeight))
      .toBeGreaterThan(200);
    const leftBehind = await scroller.evaluate((el) => {
      el.scrollTop -= 120;
      return el.scrollHeight - el.scrollTop - el.clientHeight;
    });
    expect(leftBehind).toBeGreaterThan(100);
    const belowView = () => scroller.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
    await expect.poll(belowView).toBeLessThan(5);
    const behind = await lastTick();
    await expect.poll(lastTick).toBeGreaterThanOrEqual(behind + 3);
    // The log re-renders as lines arrive: a span read while it is replaced has no style yet, so read again.
    await expect
      .poll(() =>
        log
          .locator('[data-log-line] span')
          .first()
          .evaluate((el) => getComputedStyle(el).color),
      )
      .toMatch(/rgb\(0, 187, 0\)|rgb\(\d+, \d+, \d+\)/);
    expect(await dialog.getByRole('button', { name: 'Confirm' }).count()).toBe(0);
    await shot(page, 'task-log-running-light-1280');

    // Search within the log.
    await dialog.getByRole('textbox', { name: 'Search in log' }).fill('tick 2 ');
    await dialog.getByText(/^1 of 1$/).waitFor();
    await log.locator('mark').first().waitFor();
    await dialog.getByRole('textbox', { name: 'Search in log' }).fill('');

    await dialog.getByRole('button', { name: 'Stop' }).click();
    const stopped = await waitForStatus(task.id, ['stopped', 'stopping']);
    expect(['stopped', 'stopping']).toContain(stopped.status);
    await dialog.getByText(/^Stopp(ed|ing\.\.\.)$/).waitFor();
    if (stopped.status === 'stopping') {
      // The script may end on SIGTERM before Force stop is clicked: then the button is gone and that is fine.
      const force = dialog.getByRole('button', { name: 'Force stop' });
      await Promise.race([force.waitFor(), dialog.getByText('Stopped', { exact: true }).waitFor()]);
      if (await force.isVisible()) await force.click({ timeout: 2000 }).catch(() => {});
      await waitForStatus(task.id, ['stopped']);
    }
    await dialog.getByText('Stopped', { exact: true }).waitFor();
    expect(await dialog.getByRole('button', { name: /Stop/ }).count()).toBe(0);

    // The history shows the new status; closing the dialog removes t.
    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.waitForURL((u) => !u.searchParams.has('t'));
    await page.getByRole('table', { name: 'History' }).getByText('Stopped').first().waitFor();
    await shot(page, 'history-light-1280');
    await page.context().close();
  });

  it('confirms a Terraform plan from the dialog, which then applies it', async () => {
    const task = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, {
      template_id: templates.Infra,
    });
    await waitForStatus(task.id, ['waiting_confirmation', 'error', 'success']);
    const page = await pageAs(admin);
    await page.goto(`/project/${projectId}/history?t=${task.id}`);
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Waiting confirmation', { exact: true }).waitFor();
    await dialog.getByRole('log').getByText('Plan: 1 to add, 0 to change, 0 to destroy.').waitFor();
    // Stop stays available while the plan waits.
    await dialog.getByRole('button', { name: 'Stop' }).waitFor();
    await shot(page, 'task-log-confirm-light-1280');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.getByText('Success', { exact: true }).waitFor({ timeout: WAIT_MS });
    await dialog
      .getByRole('log')
      .getByText(/^Apply complete! Resources: 1 added/)
      .waitFor();
    expect(await dialog.getByRole('button', { name: 'Confirm' }).count()).toBe(0);
    expect((await waitForStatus(task.id, ['success'])).status).toBe('success');
    await page.context().close();
  });

  it('shows the plan to confirm as a structured diff: grouped, destroying changes in red, searchable', async () => {
    const task = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, {
      template_id: templates.Planned,
    });
    await waitForStatus(task.id, ['waiting_confirmation', 'error', 'success']);
    const page = await pageAs(admin);
    await page.goto(`/project/${projectId}/history?t=${task.id}`);
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Waiting confirmation', { exact: true }).waitFor();
    const plan = dialog.getByRole('region', { name: 'Plan' });
    for (const count of ['1 to add', '1 to change', '2 to replace', '1 to destroy', '1 to read'])
      await plan.getByText(count, { exact: true }).waitFor();
    // Open at once while the task waits for confirmation; destroying groups first, no-op not listed.
    const groups = () =>
      plan
        .locator('[data-plan-group]')
        .evaluateAll((els) => els.map((el) => el.getAttribute('data-plan-group')));
    expect(await groups()).toEqual(['delete', 'replace', 'update', 'create', 'read']);
    const addresses = () =>
      plan
        .locator('[data-plan-address]')
        .evaluateAll((els) => els.map((el) => el.getAttribute('data-plan-address')));
    expect(await addresses()).toEqual([
      'aws_security_group.old',
      'aws_instance.db',
      'aws_lb.front',
      'aws_db_instance.main',
      'aws_instance.web',
      'data.aws_ami.latest',
    ]);
    const color = (address: string) =>
      plan.locator(`[data-plan-address="${address}"]`).evaluate((el) => getComputedStyle(el).color);
    const red = await color('aws_security_group.old');
    expect(red).toMatch(/^rgb\((\d+), (\d+), (\d+)\)$/);
    const [r, g, b] = (/\d+, \d+, \d+/.exec(red)?.[0] ?? '').split(', ').map(Number);
    expect(r).toBeGreaterThan(150);
    expect(Math.max(g ?? 255, b ?? 255)).toBeLessThan(100);
    expect(await color('aws_lb.front')).toBe(red);
    expect(await color('aws_instance.web')).not.toBe(red);
    await plan.locator('[data-plan-address="aws_instance.db"]').getByText('-/+ aws_instance.db').waitFor();
    await plan.locator('[data-plan-address="aws_lb.front"]').getByText('(create, then destroy)').waitFor();
    await plan.locator('[data-plan-address="aws_db_instance.main"]').getByText('(sensitive)').waitFor();
    expect(await page.content()).not.toContain(PLAN_SECRET);
    await shot(page, 'task-plan-confirm-light-1280');

    // Searching by address keeps the matching changes only.
    await plan.getByRole('textbox', { name: 'Search by address' }).fill('AWS_INSTANCE');
    await expect.poll(addresses).toEqual(['aws_instance.db', 'aws_instance.web']);
    expect(await groups()).toEqual(['replace', 'create']);
    await plan.getByRole('textbox', { name: 'Search by address' }).fill('nothing-like-it');
    await plan.getByText('No resource change matches.').waitFor();

    // The raw log stays below it; confirming applies the plan.
    await dialog
      .getByRole('log')
      .getByText('Plan: 1 to add, 1 to change, 1 to destroy, 2 to replace.')
      .waitFor();
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.getByText('Success', { exact: true }).waitFor({ timeout: WAIT_MS });
    // A finished task keeps its plan, folded.
    await plan.getByRole('button', { name: 'Show changes' }).waitFor();
    await page.context().close();
  });

  // A log 400 times the rows the DOM may hold; the 1,000,000-line log's speed is bench/log-dialog.mjs's (loading
  // a million lines took 88-135 s of this test beside a busy suite).
  it('opens a finished 200,000-line log with fewer than 500 rows in the DOM, from the first line to the last', async () => {
    const task = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, {
      template_id: templates.Quick,
    });
    await waitForStatus(task.id, ['success', 'error']);
    // Insert the rows straight into the test server's SQLite database (one transaction).
    const require = createRequire(join(root, 'packages/server/package.json'));
    const Database = require('better-sqlite3');
    const db = new Database(server.dbFile);
    db.pragma('busy_timeout = 10000');
    const insert = db.prepare('INSERT INTO task_output (task_id, time, output) VALUES (?, ?, ?)');
    const time = new Date().toISOString();
    db.transaction(() => {
      for (let i = 1; i <= 200_000; i++) insert.run(task.id, time, `line ${i} \u001b[36mcyan ${i}\u001b[0m`);
    })();
    db.close();

    const page = await pageAs(admin);
    await page.goto(`/project/${projectId}/history`);
    // How fast the first lines show is measured by bench/log-dialog.mjs; this checks what is shown.
    await page.getByRole('link', { name: `#${task.id}` }).click();
    const log = page.getByRole('dialog').getByRole('log');
    await log.getByText('line 1 cyan 1', { exact: true }).waitFor();
    expect(await log.locator('[data-log-line]').count()).toBeLessThan(500);
    // Scroll to the end once everything is loaded: still a handful of rows in the DOM.
    await page
      .getByRole('dialog')
      .getByText(/^Lines: 20000\d$/)
      .waitFor({ timeout: 90_000 });
    await log.locator('[data-virtuoso-scroller]').evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await log.getByText('line 200000 cyan 200000').waitFor();
    expect(await log.locator('[data-log-line]').count()).toBeLessThan(500);
    await page.context().close();
  }, 180_000);

  it('shows the dialog on a phone and in dark mode', async () => {
    const task = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, {
      template_id: templates.Quick,
    });
    await waitForStatus(task.id, ['success', 'error']);
    for (const [viewport, scheme, size] of [
      [PHONE, 'light', '390'],
      [PHONE, 'dark', '390'],
      [DESKTOP, 'dark', '1280'],
    ] as const) {
      const page = await pageAs(admin, viewport, scheme);
      await page.goto(`/project/${projectId}/history?t=${task.id}`);
      await page.getByRole('dialog').getByText('quick run').waitFor();
      await shot(page, `task-log-${scheme}-${size}`);
      await page.context().close();
    }
  });
});
