import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from './support/api';
import { launch, newContext, shot, signIn } from './support/browser';
import { ADMIN, startServer, type TestServer } from './support/server';

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer();
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const dialog = (page: Page) => page.getByRole('dialog');

async function pick(page: Page, label: string, option: string) {
  await dialog(page).getByRole('combobox', { name: label }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

/** Runs a template from the list and waits for its task to succeed in the task log dialog. */
async function runToSuccess(page: Page, projectId: number, name: string) {
  await page.goto(`/project/${projectId}/templates`);
  await page.getByRole('button', { name: `Run: ${name}` }).click();
  await dialog(page).getByRole('textbox', { name: 'Message (optional)' }).fill(`scenario ${name}`);
  await dialog(page).getByRole('button', { name: 'Run', exact: true }).click();
  await page.waitForURL(/[?&]t=\d+/);
  await page.getByRole('dialog').locator('[data-status=success]').waitFor({ timeout: 180_000 });
  return Number(new URL(page.url()).searchParams.get('t'));
}

describe('a first day with Signalbox, as a new user would spend it', () => {
  it('signs in, creates the demo project, runs Bash and Ansible to Success, schedules one, triggers one by alias, sees them in History', async () => {
    const context = await newContext(browser, server.url);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const page = await context.newPage();
    await signIn(page, ADMIN.login, ADMIN.password);
    await page.waitForURL('**/project/new');
    await page.getByRole('button', { name: 'Create Demo Project' }).click();
    await page.waitForURL(/\/project\/\d+\//);
    const projectId = Number(/\/project\/(\d+)/.exec(page.url())![1]);

    const bashTask = await runToSuccess(page, projectId, 'Print system info (Bash)');
    await shot(page, 'first-day-bash-log-light-1280');
    const pingTask = await runToSuccess(page, projectId, 'Ping');
    await shot(page, 'first-day-ansible-log-light-1280');

    // Schedule the Bash template every minute through the schedule page.
    await page.goto(`/project/${projectId}/schedule`);
    await page.getByRole('button', { name: 'New Schedule' }).click();
    await pick(page, 'Template', 'Print system info (Bash)');
    await dialog(page).getByRole('textbox', { name: 'Cron' }).fill('* * * * *');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await page.getByText('Schedule of Print system info (Bash) created').waitFor();

    // An integration for Ping, triggered through its alias with a plain HTTP request (as curl would).
    await page.goto(`/project/${projectId}/integrations`);
    await page.getByRole('button', { name: 'New Integration' }).click();
    await dialog(page).getByRole('textbox', { name: 'Name', exact: true }).fill('Scenario hook');
    await pick(page, 'Template', 'Ping');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await page.getByRole('link', { name: 'Scenario hook' }).click();
    // The list page has its own (project-level) "Add alias": wait for the integration's page first.
    await page.waitForURL(/\/integration\/\d+/);
    await page.getByRole('heading', { name: 'Scenario hook' }).waitFor();
    await page.getByRole('button', { name: 'Add alias' }).click();
    const url = (await page.getByTestId('alias-url').first().textContent())!.trim();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBeLessThan(300);

    const api = await login(server.url, ADMIN.login, ADMIN.password);
    type T = { id: number; status: string; integration_id: number | null; schedule_id?: number | null };
    const waitFor = async (check: (tasks: T[]) => T | undefined, ms: number) => {
      const end = Date.now() + ms;
      for (;;) {
        const found = check(await api.get<T[]>(`/project/${projectId}/tasks/last`));
        if (found) return found;
        if (Date.now() > end) throw new Error('task did not appear');
        await new Promise((r) => setTimeout(r, 1000));
      }
    };
    const hookTask = await waitFor(
      (ts) => ts.find((t) => t.integration_id && t.status === 'success'),
      180_000,
    );
    const scheduled = await waitFor((ts) => ts.find((t) => t.schedule_id && t.status === 'success'), 150_000);

    await page.goto(`/project/${projectId}/history`);
    for (const id of [bashTask, pingTask, hookTask.id, scheduled.id])
      await page
        .getByRole('link', { name: new RegExp(`#${id}\\b`) })
        .first()
        .waitFor();
    await shot(page, 'first-day-history-light-1280');
    await context.close();
  }, 600_000);
});
