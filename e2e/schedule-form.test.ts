import type { Schedule } from '@signalbox/contracts';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, PHONE, shot, takingScreenshots } from './support/browser';
import { sharedServer } from './support/shared';
import type { SharedServer } from './support/shared-server';
import { contextAs, seedBashResources, seedTeam, type Team } from './support/team';

let server: SharedServer;
let browser: Browser;
let team: Team;
let templateId: number;
/** A second template, whose schedules the template form's cron field of the first never picks. */
let otherTemplateId: number;

beforeAll(async () => {
  server = sharedServer();
  browser = await launch();
  team = await seedTeam(server.url, 'Schedule form project');
  const seeded = await seedBashResources(team.admin, team.projectId);
  ({ id: templateId } = await team.admin.post<{ id: number }>(`/project/${team.projectId}/templates`, {
    name: 'Nightly report',
    app: 'bash',
    playbook: 'run.sh',
    repository_id: seeded.repoId,
    environment_id: seeded.envId,
  }));
  ({ id: otherTemplateId } = await team.admin.post<{ id: number }>(`/project/${team.projectId}/templates`, {
    name: 'Weekly report',
    app: 'bash',
    playbook: 'run.sh',
    repository_id: seeded.repoId,
    environment_id: seeded.envId,
  }));
});
afterAll(async () => {
  await browser?.close();
});

async function openNewSchedule(page: Page) {
  await page.goto(`/project/${team.projectId}/schedule`);
  await page.getByRole('button', { name: 'New Schedule' }).click();
  const d = page.getByRole('dialog');
  await d.getByRole('button', { name: 'Timing' }).click();
  return d;
}

/** The left edges of a checkbox group's cells: a grid has as many distinct edges as it has columns. */
async function columnsOf(page: Page, group: string) {
  const boxes = await page
    .getByTestId(`timing-${group}`)
    .locator('label')
    .evaluateAll((els) =>
      els.map((el) => {
        const r = el.getBoundingClientRect();
        return { left: Math.round(r.left), top: Math.round(r.top), right: Math.round(r.right) };
      }),
    );
  const firstRow = boxes.filter((b) => b.top === boxes[0]?.top);
  return { boxes, firstRow, lefts: new Set(boxes.map((b) => b.left)) };
}

describe('schedule dialog timing panel', () => {
  it('always agrees with the cron field, both ways, and says when it cannot show a cron', async () => {
    const { context, page } = await contextAs(browser, server.url, team.manager);
    const d = await openNewSchedule(page);
    const cron = d.getByRole('textbox', { name: 'Cron' });
    const timing = d.getByRole('combobox', { name: 'Timing' });
    // The default cron runs every minute: the panel says so, and does not claim "daily at 0:00".
    expect(await cron.inputValue()).toBe('* * * * *');
    await timing.filter({ hasText: 'Every minute' }).waitFor();
    expect(
      await d.getByText('The simple panel cannot show this cron; picking a timing here replaces it.').count(),
    ).toBe(0);
    expect(await timing.textContent()).not.toContain('Daily');
    expect(await d.getByRole('checkbox').count()).toBe(0);
    // The schedule's name (the list's Name column) is a field of the dialog.
    await d.getByRole('textbox', { name: 'Name' }).waitFor();

    // Typing a cron the panel can show updates the panel.
    await cron.fill('30 2 * * 1');
    await timing.filter({ hasText: 'Weekly' }).waitFor();
    const group = (name: string) => d.getByRole('group', { name });
    expect(await group('Weekdays').getByRole('checkbox', { name: 'Mon' }).isChecked()).toBe(true);
    expect(await group('Weekdays').getByRole('checkbox', { name: 'Sun' }).isChecked()).toBe(false);
    expect(await group('Hours').getByRole('checkbox', { name: '2', exact: true }).isChecked()).toBe(true);
    expect(await group('Minutes').getByRole('checkbox', { name: '30', exact: true }).isChecked()).toBe(true);

    // Changing the panel updates the cron.
    await group('Hours').getByRole('checkbox', { name: '4', exact: true }).check();
    await group('Weekdays').getByRole('checkbox', { name: 'Fri' }).check();
    expect(await cron.inputValue()).toBe('30 2,4 * * 1,5');
    await timing.click();
    await page.getByRole('option', { name: 'Daily' }).click();
    expect(await cron.inputValue()).toBe('30 2,4 * * *');

    // A cron the panel would rebuild differently is not shown as something else.
    await cron.fill('*/10 * * * *');
    await d.getByText('The simple panel cannot show this cron; picking a timing here replaces it.').waitFor();
    expect(await d.getByRole('checkbox').count()).toBe(0);
    await timing.click();
    await page.getByRole('option', { name: 'Hourly' }).click();
    expect(await cron.inputValue()).toBe('0 * * * *');
    await context.close();
  });

  it('keeps the task parameters set through the API when the dialog saves an edit', async () => {
    const created = await team.admin.post<Schedule>(`/project/${team.projectId}/schedules`, {
      template_id: otherTemplateId,
      cron_format: '15 1 * * *',
      name: 'With parameters',
      task_params: { environment: '{"REGION":"eu"}', message: 'from the schedule' },
    });
    const { context, page } = await contextAs(browser, server.url, team.manager);
    await page.goto(`/project/${team.projectId}/schedule`);
    await page.getByRole('button', { name: 'Edit With parameters' }).first().click();
    const d = page.getByRole('dialog');
    await d.getByRole('textbox', { name: 'Name' }).fill('With parameters, renamed');
    await d.getByRole('button', { name: 'Save' }).click();
    await d.waitFor({ state: 'hidden' });
    const saved = await team.admin.get<Schedule>(`/project/${team.projectId}/schedules/${created.id}`);
    expect(saved.name).toBe('With parameters, renamed');
    expect(saved.task_params).toMatchObject({ environment: '{"REGION":"eu"}', message: 'from the schedule' });
    await context.close();
  });

  it('clears a cron error once the cron is fixed', async () => {
    const { context, page } = await contextAs(browser, server.url, team.manager);
    const d = await openNewSchedule(page);
    await d.getByRole('combobox', { name: 'Template' }).click();
    await page.getByRole('option', { name: 'Nightly report', exact: true }).click();
    const cron = d.getByRole('textbox', { name: 'Cron' });
    await cron.fill('99 * * * *');
    await d.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => cron.getAttribute('aria-invalid')).toBe('true');
    await cron.fill('0 3 * * *');
    await expect.poll(() => cron.getAttribute('aria-invalid')).toBe('false');
    await context.close();
  });

  it('lines the checkboxes up in columns, at desktop and phone width', async () => {
    const schemes = takingScreenshots ? (['light', 'dark'] as const) : (['light'] as const);
    for (const [viewport, scheme] of [undefined, PHONE].flatMap((v) => schemes.map((s) => [v, s] as const))) {
      const { context, page } = await contextAs(browser, server.url, team.manager, {
        colorScheme: scheme,
        ...(viewport ? { viewport } : {}),
      });
      await page.addInitScript((dark) => localStorage.setItem('darkMode', dark), String(scheme === 'dark'));
      const d = await openNewSchedule(page);
      await d.getByRole('textbox', { name: 'Cron' }).fill('0 0 1 1 *');
      await d.getByRole('combobox', { name: 'Timing' }).filter({ hasText: 'Yearly' }).waitFor();
      for (const group of ['months', 'days', 'hours', 'minutes']) {
        const { boxes, firstRow, lefts } = await columnsOf(page, group);
        // Every row starts its cells at the first row's column edges, and all cells have one width.
        expect(firstRow.length).toBeGreaterThan(1);
        // (within a pixel: equal fractions of the width round either way).
        for (const left of lefts) expect(firstRow.some((b) => Math.abs(b.left - left) <= 1)).toBe(true);
        const widths = boxes.map((b) => b.right - b.left);
        expect(Math.max(...widths) - Math.min(...widths)).toBeLessThanOrEqual(1);
      }
      if (viewport) {
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(1);
      }
      await shot(page, `schedule-timing-dialog-${scheme}-${viewport ? 390 : 1280}`);
      await context.close();
    }
  });
});

describe("the template form's cron schedule", () => {
  it('shows a paused schedule as paused', async () => {
    await team.admin.post(`/project/${team.projectId}/schedules`, {
      template_id: templateId,
      cron_format: '0 4 * * *',
      active: false,
    });
    const { context, page } = await contextAs(browser, server.url, team.manager);
    await page.goto(`/project/${team.projectId}/templates/${templateId}/edit`);
    const cron = page.getByRole('textbox', { name: 'Cron schedule' });
    await cron.waitFor();
    expect(await cron.inputValue()).toBe('0 4 * * *');
    await page.locator('[data-schedule-paused]').getByText('Paused').waitFor();
    await page
      .getByText('This schedule is paused: it does not run until it is resumed on the Schedule page.')
      .waitFor();
    await context.close();
  });
});
