import type { Schedule } from '@signalbox/contracts';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldDescription, launch, WAIT_MS } from './support/browser';
import { startServer, type TestServer } from './support/server';
import { contextAs, seedBashResources, seedTeam, shotAll, type Team } from './support/team';

// A schedule time zone far from the browser's (UTC): a next run read in the wrong zone is 9 hours off.
const TIMEZONE = 'Asia/Tokyo';

let server: TestServer;
let browser: Browser;
let team: Team;
let templateId: number;

beforeAll(async () => {
  server = await startServer({ SIGNALBOX_SCHEDULE_TIMEZONE: TIMEZONE });
  browser = await launch();
  team = await seedTeam(server.url, 'Schedule list project');
  const seeded = await seedBashResources(team.admin, team.projectId);
  const template = await team.admin.post<{ id: number }>(`/project/${team.projectId}/templates`, {
    name: 'Nightly report',
    app: 'bash',
    playbook: 'run.sh',
    repository_id: seeded.repoId,
    environment_id: seeded.envId,
  });
  templateId = template.id;
  const weekly = await team.admin.post<{ id: number }>(`/project/${team.projectId}/templates`, {
    name: 'Weekly cleanup',
    app: 'bash',
    playbook: 'run.sh',
    repository_id: seeded.repoId,
    environment_id: seeded.envId,
  });
  const schedule = (body: object) => team.admin.post(`/project/${team.projectId}/schedules`, body);
  await schedule({
    template_id: templateId,
    cron_format: '0 3 * * *',
    name: 'Nightly at three',
    task_params: { environment: '{"REPORT":"daily"}', message: 'nightly report' },
  });
  await schedule({ template_id: weekly.id, cron_format: '30 5 * * 1' });
  await schedule({ template_id: weekly.id, cron_format: '0 4 * * *', name: 'Switched off', active: false });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const schedules = () => team.admin.get<Schedule[]>(`/project/${team.projectId}/schedules`);
const byName = async (name: string) => (await schedules()).find((s) => s.name === name);

/** Polls the API until `check` holds (the page saves in the background). */
async function until(check: () => Promise<boolean>, what: string) {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The next 03:00 in Tokyo (UTC+9, no daylight saving): 18:00 UTC today or tomorrow. */
function nextThreeInTokyo(now = new Date()): Date {
  const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 18, 0, 0));
  if (at <= now) at.setUTCDate(at.getUTCDate() + 1);
  return at;
}

/** How the console writes a time in this browser (the app's formatter: medium date and time). */
const formatted = (page: Page, at: Date) =>
  page.evaluate(
    (iso) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }),
    at.toISOString(),
  );

const row = (page: Page, name: string) =>
  page.getByRole('table', { name: 'Schedule' }).getByRole('row').filter({ hasText: name });

describe('schedules list', () => {
  it('shows each schedule by name with its next run in the server time zone', async () => {
    const { context, page } = await contextAs(browser, server.url, team.manager);
    await page.goto(`/project/${team.projectId}/schedule`);
    const nightly = row(page, 'Nightly at three');
    await nightly.waitFor();
    const expected = await formatted(page, nextThreeInTokyo());
    await nightly.getByTestId('next-run').filter({ hasText: expected }).waitFor();
    // A schedule without a name is shown by its template's name.
    const unnamed = row(page, '30 5 * * 1');
    expect(await unnamed.getByRole('cell').first().textContent()).toBe('Weekly cleanup');
    // An inactive schedule will not run.
    expect(await row(page, 'Switched off').getByTestId('next-run').textContent()).toBe('—');
    await context.close();
  });

  it('switches a schedule off and on in place', async () => {
    const { context, page } = await contextAs(browser, server.url, team.manager);
    await page.goto(`/project/${team.projectId}/schedule`);
    const toggle = page.getByRole('switch', { name: 'Active: Nightly at three' });
    expect(await toggle.isChecked()).toBe(true);
    await toggle.click();
    await until(
      async () => (await byName('Nightly at three'))?.active === false,
      'the schedule to be inactive',
    );
    await row(page, 'Nightly at three').getByTestId('next-run').filter({ hasText: /^—$/ }).waitFor();
    // Nothing else of the schedule changed, its task parameters (set through the API) neither.
    const off = await byName('Nightly at three');
    expect(off?.cron_format).toBe('0 3 * * *');
    expect(off?.task_params).toMatchObject({ environment: '{"REPORT":"daily"}', message: 'nightly report' });
    await toggle.click();
    await until(async () => (await byName('Nightly at three'))?.active === true, 'the schedule to be active');
    await context.close();
  });

  it('shows a guest the switch disabled, with the reason', async () => {
    const { context, page } = await contextAs(browser, server.url, team.guest);
    await page.goto(`/project/${team.projectId}/schedule`);
    const toggle = page.getByRole('switch', { name: 'Active: Nightly at three' });
    await toggle.waitFor();
    expect(await toggle.isDisabled()).toBe(true);
    expect(
      await row(page, 'Nightly at three').locator('[data-denied="manageProjectResources"]').count(),
    ).toBe(1);
    await context.close();
  });

  it('the template form cron field creates, changes and removes the template schedule', async () => {
    const { context, page } = await contextAs(browser, server.url, team.manager);
    const formSchedules = async () =>
      (
        await team.admin.get<Schedule[]>(`/project/${team.projectId}/templates/${templateId}/schedules`)
      ).filter((s) => s.cron_format.startsWith('15 '));
    const edit = async () => {
      await page.goto(`/project/${team.projectId}/templates/${templateId}/edit`);
      const field = page.getByRole('textbox', { name: 'Cron schedule' });
      await field.waitFor();
      return field;
    };
    // Every request the page makes that writes something: a save is one request, template and schedule together.
    const writes: string[] = [];
    page.on('request', (request) => {
      if (request.method() !== 'GET') writes.push(`${request.method()} ${new URL(request.url()).pathname}`);
    });
    const templateUrl = `/api/project/${team.projectId}/templates/${templateId}`;

    // The field edits the template's first cron schedule without a repository: here "Nightly at three".
    let field = await edit();
    expect(await field.inputValue()).toBe('0 3 * * *');

    // A wrong cron is refused by the server's rules, with its message on the field, and nothing is saved: not
    // the template's other changes either.
    await page.getByRole('textbox', { name: 'Description' }).fill('Changed with a wrong cron');
    await field.fill('15 4 * *');
    await page.getByRole('button', { name: 'Save' }).click();
    // The message is the field's own description (its helper text), not only the form's alert.
    await expect
      .poll(() => fieldDescription(field))
      .toContain('Invalid cron expression "15 4 * *": expected 5 fields');
    expect(writes).toEqual([`PUT ${templateUrl}`]);
    expect((await byName('Nightly at three'))?.cron_format).toBe('0 3 * * *');
    expect((await team.admin.get<{ description: string }>(templateUrl.replace('/api', ''))).description).toBe(
      '',
    );

    writes.length = 0;
    await field.fill('15 4 * * *');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(`**/templates/${templateId}`);
    expect(writes).toEqual([`PUT ${templateUrl}`]);
    await until(
      async () => (await byName('Nightly at three'))?.cron_format === '15 4 * * *',
      'the cron to change',
    );
    expect((await team.admin.get<{ description: string }>(templateUrl.replace('/api', ''))).description).toBe(
      'Changed with a wrong cron',
    );

    // Cleared: the schedule is removed; then a new cron creates one, which the list shows.
    field = await edit();
    await field.fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(`**/templates/${templateId}`);
    await until(async () => !(await byName('Nightly at three')), 'the schedule to be removed');
    field = await edit();
    expect(await field.inputValue()).toBe('');
    await field.fill('15 6 * * *');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(`**/templates/${templateId}`);
    await until(async () => (await formSchedules()).length === 1, 'the schedule to be created');
    const [created] = await formSchedules();
    expect(created).toMatchObject({ cron_format: '15 6 * * *', repository_id: null, active: true, type: '' });
    await page.goto(`/project/${team.projectId}/schedule`);
    await row(page, '15 6 * * *').getByRole('cell', { name: 'Nightly report' }).first().waitFor();
    await context.close();
  });

  it('fits a phone and looks right in both themes', async () => {
    await shotAll(browser, server.url, team.manager, `/project/${team.projectId}/schedule`, 'schedules-list');
  });
});
