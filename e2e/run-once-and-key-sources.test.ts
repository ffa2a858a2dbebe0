import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from './support/api';
import { launch, shot, WAIT_MS } from './support/browser';
import { sharedServer } from './support/shared';
import type { SharedServer } from './support/shared-server';
import { contextAs, expectSnackbar, seedBashResources, seedTeam, shotAll, type Team } from './support/team';

let server: SharedServer;
let browser: Browser;
let team: Team;
let templateId: number;

beforeAll(async () => {
  server = sharedServer();
  browser = await launch();
  team = await seedTeam(server.url, 'Run-once project');
  const seeded = await seedBashResources(team.admin, team.projectId);
  templateId = (
    await team.admin.post<{ id: number }>(`/project/${team.projectId}/templates`, {
      name: 'Go live',
      app: 'bash',
      playbook: 'run.sh',
      repository_id: seeded.repoId,
      environment_id: seeded.envId,
    })
  ).id;
});
afterAll(async () => {
  await browser?.close();
});

const dialog = (page: Page) => page.getByRole('dialog');

/** Signed in as `user` in a browser whose clock reads `timezoneId`, as a user elsewhere in the world would be. */
async function contextIn(
  user: { username?: string; login?: string; password: string },
  timezoneId: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const api = await login(server.url, user.username ?? user.login!, user.password);
  const context = await browser.newContext({ baseURL: server.url, locale: 'en-US', timezoneId });
  context.setDefaultTimeout(WAIT_MS);
  const [name, ...value] = api.cookie.split('=');
  await context.addCookies([{ name, value: value.join('='), url: server.url }]);
  return { context, page: await context.newPage() };
}

describe('run-once schedule', () => {
  it('is created in the dialog from a local date and time, stored as UTC and listed in the user’s locale', async () => {
    const { context, page } = await contextIn(team.manager, 'Asia/Tokyo');
    await page.goto(`/project/${team.projectId}/schedule`);
    await page.getByRole('button', { name: 'New Schedule' }).click();
    const d = dialog(page);
    await d.getByRole('combobox', { name: 'Template' }).click();
    await page.getByRole('option', { name: 'Go live', exact: true }).click();
    await d.getByRole('radio', { name: 'Run once' }).check();
    await d.getByText('In your time zone (Asia/Tokyo); stored as UTC').waitFor();
    expect(await d.getByRole('textbox', { name: 'Cron' }).count()).toBe(0);

    // A time that has passed is refused before anything is sent.
    const when = d.getByLabel('Date and time');
    await when.fill('2020-01-01T10:00');
    await d.getByRole('button', { name: 'Save' }).click();
    await d.getByText('Pick a time in the future').waitFor();

    await when.fill('2031-06-15T09:30');
    await d.getByText('Runs once: Jun 15, 2031, 9:30:00 AM').waitFor();
    expect(await d.getByText('Pick a time in the future').count()).toBe(0);
    await d.getByLabel('Delete the schedule after it runs').check();
    await shot(page, 'schedule-run-once-dialog-light-1280');
    await d.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Schedule of Go live created');

    // Tokyo is UTC+9: 09:30 there is 00:30 UTC.
    const stored = await team.admin.get<
      { template_id: number; type: string; run_at: string; delete_after_run: boolean; active: boolean }[]
    >(`/project/${team.projectId}/schedules`);
    expect(stored).toEqual([
      expect.objectContaining({
        template_id: templateId,
        type: 'run_at',
        run_at: '2031-06-15T00:30:00.000Z',
        delete_after_run: true,
        active: true,
      }),
    ]);
    await page.getByRole('cell', { name: 'Once: Jun 15, 2031, 9:30:00 AM Waiting to run' }).waitFor();
    await shot(page, 'schedule-run-once-list-light-1280');

    // The same schedule seen from Berlin (UTC+2 in June) shows Berlin time, and edits keep it.
    await context.close();
    const berlin = await contextIn(team.manager, 'Europe/Berlin');
    await berlin.page.goto(`/project/${team.projectId}/schedule`);
    await berlin.page.getByRole('cell', { name: 'Once: Jun 15, 2031, 2:30:00 AM Waiting to run' }).waitFor();
    await berlin.page.getByRole('button', { name: 'Edit Go live' }).click();
    expect(await dialog(berlin.page).getByLabel('Date and time').inputValue()).toBe('2031-06-15T02:30');
    await dialog(berlin.page).getByLabel('Date and time').fill('2031-06-15T03:45');
    await dialog(berlin.page).getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(berlin.page, 'Schedule of Go live saved');
    const [edited] = await team.admin.get<{ run_at: string }[]>(`/project/${team.projectId}/schedules`);
    expect(edited?.run_at).toBe('2031-06-15T01:45:00.000Z');
    await berlin.context.close();
    await shotAll(
      browser,
      server.url,
      team.manager,
      `/project/${team.projectId}/schedule`,
      'schedule-run-once',
    );
  });
});

describe('keys read on the server', () => {
  it('lets an admin pick an environment variable as the secret; others do not see the choice', async () => {
    const { context, page } = await contextAs(browser, server.url, {
      login: 'admin',
      password: 'admin-Passw0rd',
    });
    await page.goto(`/project/${team.projectId}/keys`);
    await page.getByRole('button', { name: 'New Key' }).click();
    const d = dialog(page);
    await d.getByRole('textbox', { name: 'Name', exact: true }).fill('Deploy from env');
    await d.getByRole('combobox', { name: 'Type' }).click();
    await page.getByRole('option', { name: 'Login with password', exact: true }).click();
    await d.getByRole('combobox', { name: 'Secret' }).click();
    await page.getByRole('option', { name: 'Environment variable of the server', exact: true }).click();
    expect(await d.locator('input[name="login_password.password"]').count()).toBe(0);
    await d.getByLabel('Login (optional)').fill('deploy');
    const variable = d.getByRole('textbox', { name: 'Environment variable' });
    // A name outside the allowed prefix is refused by the server, naming the rule.
    await variable.fill('HOME');
    await d.getByRole('button', { name: 'Save' }).click();
    await d
      .getByText(/key variables must start with SIGNALBOX_KEY_/)
      .first()
      .waitFor();
    await variable.fill('SIGNALBOX_KEY_E2E_DEPLOY');
    await shot(page, 'key-from-env-dialog-light-1280');
    await d.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Key Deploy from env created');
    await page
      .getByRole('cell', {
        name: 'Login with password Read on the server from the environment variable SIGNALBOX_KEY_E2E_DEPLOY.',
      })
      .waitFor();
    const keys = await team.admin.get<
      { name: string; source_storage_type?: string; source_storage_key?: string }[]
    >(`/project/${team.projectId}/keys`);
    expect(keys.find((k) => k.name === 'Deploy from env')).toMatchObject({
      source_storage_type: 'env',
      source_storage_key: 'SIGNALBOX_KEY_E2E_DEPLOY',
    });
    await context.close();

    // A manager: no source choice for a new key; the admin's key is shown read-only.
    const manager = await contextAs(browser, server.url, team.manager);
    await manager.page.goto(`/project/${team.projectId}/keys`);
    await manager.page.getByRole('button', { name: 'New Key' }).click();
    await dialog(manager.page).getByRole('textbox', { name: 'Name', exact: true }).waitFor();
    expect(await dialog(manager.page).getByRole('combobox', { name: 'Secret' }).count()).toBe(0);
    await dialog(manager.page).getByRole('button', { name: 'Cancel' }).click();
    await manager.page.getByRole('button', { name: 'Edit Deploy from env' }).click();
    await dialog(manager.page).getByText('Only administrators can change it.').waitFor();
    expect(await dialog(manager.page).getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
    await manager.context.close();
    await shotAll(browser, server.url, team.manager, `/project/${team.projectId}/keys`, 'keys-from-server');
  });
});
