import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, createUser, login, type SeedUser } from './support/api';
import { DESKTOP, launch, navigate, PHONE, shot } from './support/browser';
import { waitForStatus } from './support/seed';
import { ADMIN } from './support/server';
import { sharedServer } from './support/shared';
import type { SharedServer } from './support/shared-server';
import { contextAs, shotEach } from './support/team';

// The lists of the console on the demo project: tables that fit a 1280 px screen, cards on a phone, buttons that
// keep their label on one line in every language, and the small facts the lists and the detail page show.
let server: SharedServer;
let browser: Browser;
let admin: Api;
let projectId: number;
let manager: SeedUser;
let templateIds: Record<string, number>;
const adminUser = { login: ADMIN.login, password: ADMIN.password };
const PROJECT = 'Demo of the layout checks';

/** The columns the templates table shows until someone picks others. */
const DEFAULT_HEADERS = ['Name', 'Version', 'Status', 'Last task', 'Playbook', 'Inventory', 'Actions'];

beforeAll(async () => {
  server = sharedServer();
  browser = await launch();
  admin = await login(server.url, ADMIN.login, ADMIN.password);
  const project = await admin.post<{ id: number }>('/projects', { name: PROJECT, demo: true });
  projectId = project.id;
  manager = await createUser(admin, { name: 'Layout Manager' });
  await admin.post(`/project/${projectId}/users`, { user_id: manager.id, role: 'manager' });
  const templates = await admin.get<{ id: number; name: string }[]>(`/project/${projectId}/templates`);
  templateIds = Object.fromEntries(templates.map((t) => [t.name, t.id]));
  const bash = templateIds['Print system info (Bash)'];
  // A task started by a user, one by a run-once schedule and one by an integration.
  const byUser = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, { template_id: bash });
  await waitForStatus(admin, projectId, byUser.id, ['success', 'error']);
  await admin.post(`/project/${projectId}/schedules`, {
    template_id: bash,
    type: 'run_at',
    run_at: new Date(Date.now() + 2000).toISOString(),
    name: 'Morning report',
  });
  const hook = await admin.post<{ id: number }>(`/project/${projectId}/integrations`, {
    name: 'Release hook',
    template_id: bash,
  });
  const alias = await admin.post<{ url: string }>(
    `/project/${projectId}/integrations/${hook.id}/aliases`,
    {},
  );
  const hit = await fetch(alias.url, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });
  expect(hit.status).toBeLessThan(300);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const tasks = await admin.get<{ schedule_id: number | null; integration_id: number | null }[]>(
      `/project/${projectId}/tasks/last`,
    );
    if (tasks.some((t) => t.schedule_id) && tasks.some((t) => t.integration_id)) break;
    if (Date.now() > deadline) throw new Error('the schedule or the integration started no task');
    await new Promise((r) => setTimeout(r, 250));
  }
});
afterAll(async () => {
  await browser?.close();
});

const templatesTable = (page: Page) => page.getByRole('table', { name: 'Task Templates' });

/** How far an element's content reaches past its box, sideways. */
const sidewaysOverflow = (el: Locator) => el.evaluate((node) => node.scrollWidth - node.clientWidth);

/** How many lines an element's text takes. */
const lineCount = (el: Locator) =>
  el.evaluate((node) => {
    const tops: number[] = [];
    const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      if (!text.textContent?.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(text);
      for (const rect of range.getClientRects())
        if (rect.width > 0 && !tops.some((top) => Math.abs(top - rect.top) < rect.height / 2))
          tops.push(rect.top);
    }
    return tops.length;
  });

/** The table's scroll container (the frame around it). */
const tableFrame = (page: Page) => templatesTable(page).locator('xpath=..');

async function expectHeadersInside(page: Page, headers: string[]) {
  const frame = await tableFrame(page).boundingBox();
  for (const name of headers) {
    const header = templatesTable(page).getByRole('columnheader', { name, exact: true });
    const box = await header.boundingBox();
    expect(box, `header ${name}`).not.toBeNull();
    expect(box!.x + box!.width, `header ${name} right edge`).toBeLessThanOrEqual(frame!.x + frame!.width + 1);
    expect(await header.isVisible(), `header ${name}`).toBe(true);
  }
}

describe('templates at 1280 px', () => {
  it('fit without sideways scrolling, with the default columns, tooltips and a visible Re-Run', async () => {
    const { context, page } = await contextAs(browser, server.url, adminUser, { viewport: DESKTOP });
    await page.goto(`/project/${projectId}/templates`);
    await templatesTable(page).getByRole('link', { name: 'Apply infrastructure (Terraform)' }).waitFor();
    expect(await sidewaysOverflow(tableFrame(page))).toBeLessThanOrEqual(0);
    const headers = await templatesTable(page).getByRole('columnheader').allTextContents();
    expect(headers.filter(Boolean)).toEqual(DEFAULT_HEADERS);
    await expectHeadersInside(page, DEFAULT_HEADERS);
    // Names and playbooks stay on one line (cut with an ellipsis), the full text in a tooltip.
    for (const name of Object.keys(templateIds)) {
      const link = templatesTable(page).getByRole('link', { name, exact: true });
      const lines = await link.evaluate((el) => {
        const range = document.createRange();
        range.selectNodeContents(el);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      });
      expect(lines, `${name} on one line`).toBe(1);
    }
    await templatesTable(page).getByRole('link', { name: 'Deploy demo app to Production' }).hover();
    await page.getByRole('tooltip', { name: 'Deploy demo app to Production' }).waitFor();
    // The expanded row's Re-Run is on screen.
    await page.getByRole('button', { name: 'Show the last tasks of Print system info (Bash)' }).click();
    const rerun = page
      .getByRole('table', { name: 'Last tasks of Print system info (Bash)' })
      .getByRole('button', { name: 'Re-Run' })
      .first();
    await rerun.waitFor();
    const box = await rerun.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(DESKTOP.width);
    expect(await sidewaysOverflow(tableFrame(page))).toBeLessThanOrEqual(0);
    await context.close();
  });

  it('remembers the picked columns per user, and still fits with every column on', async () => {
    const { context, page } = await contextAs(browser, server.url, adminUser, { viewport: DESKTOP });
    await page.goto(`/project/${projectId}/templates`);
    await templatesTable(page).getByRole('link', { name: 'Ping' }).waitFor();
    await page.getByRole('button', { name: 'Columns' }).click();
    const sheet = page.getByRole('dialog', { name: 'Columns' });
    for (const column of ['Environment', 'Repository']) await sheet.getByLabel(column).check();
    await page.keyboard.press('Escape');
    await page.reload();
    await templatesTable(page).getByRole('columnheader', { name: 'Repository' }).waitFor();
    const all = [...DEFAULT_HEADERS.slice(0, -1), 'Environment', 'Repository', 'Actions'];
    await expectHeadersInside(page, all);
    expect(await sidewaysOverflow(tableFrame(page))).toBeLessThanOrEqual(0);
    // Another user in the same browser keeps the default columns.
    const other = await login(server.url, manager.username, manager.password);
    const [name, ...value] = other.cookie.split('=');
    await context.addCookies([{ name, value: value.join('='), url: server.url }]);
    await page.reload();
    await templatesTable(page).getByRole('link', { name: 'Ping' }).waitFor();
    const headers = await templatesTable(page).getByRole('columnheader').allTextContents();
    expect(headers.filter(Boolean)).toEqual(DEFAULT_HEADERS);
    await context.close();
  });
});

describe('lists on a 390 px phone', () => {
  const phonePage = async () => contextAs(browser, server.url, adminUser, { viewport: PHONE });
  const noOverflow = async (page: Page) =>
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);

  it('shows templates as cards with their Run buttons, and the project name in the top bar', async () => {
    const { context, page } = await phonePage();
    await page.goto(`/project/${projectId}/templates`);
    const cards = page.getByRole('list', { name: 'Task Templates' });
    await cards.getByRole('link', { name: 'Pulumi preview' }).waitFor();
    expect(await cards.getByRole('listitem').count()).toBe(Object.keys(templateIds).length);
    expect(await page.getByRole('table').count()).toBe(0);
    await cards.getByRole('button', { name: 'Run: Ping' }).waitFor();
    await noOverflow(page);
    await page.locator('header').getByText(PROJECT).waitFor();
    // A card's last tasks are cards too, with Re-Run.
    await cards.getByRole('button', { name: 'Show the last tasks of Print system info (Bash)' }).click();
    const tasks = page.getByRole('list', { name: 'Last tasks of Print system info (Bash)' });
    await tasks.getByRole('button', { name: 'Re-Run' }).first().waitFor();
    await noOverflow(page);
    await context.close();
  });

  it('shows history and users as cards', async () => {
    const { context, page } = await phonePage();
    await page.goto(`/project/${projectId}/history`);
    const history = page.getByRole('list', { name: 'History' });
    await history.getByText('Print system info (Bash)').first().waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    await noOverflow(page);
    await navigate(page, '/users');
    const users = page.getByRole('list', { name: 'Users' });
    await users.getByText('Ada Admin', { exact: true }).waitFor();
    await users.getByRole('button', { name: 'Edit user Ada Admin' }).waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    await noOverflow(page);
    await context.close();
  });
});

describe('history', () => {
  it('names the schedule and the integration that started a task, with links', async () => {
    const { context, page } = await contextAs(browser, server.url, adminUser, { viewport: DESKTOP });
    await page.goto(`/project/${projectId}/history`);
    const table = page.getByRole('table', { name: 'History' });
    const schedule = table.getByRole('link', { name: 'Morning report' });
    await schedule.waitFor();
    expect(await schedule.getAttribute('href')).toBe(`/project/${projectId}/schedule`);
    const hook = table.getByRole('link', { name: 'Release hook' });
    expect(await hook.getAttribute('href')).toMatch(new RegExp(`^/project/${projectId}/integration/\\d+$`));
    await context.close();
  });
});

describe('template detail', () => {
  it('shows the description, build template, autorun and survey variables', async () => {
    const dev = templateIds['Deploy demo app to Dev'];
    const tpl = await admin.get<Record<string, unknown>>(`/project/${projectId}/templates/${dev}`);
    await admin.put(`/project/${projectId}/templates/${dev}`, {
      ...tpl,
      survey_vars: [
        { name: 'region', title: 'Region', description: '', type: 'string', required: true, values: [] },
        {
          name: 'api_token',
          title: 'API token',
          description: '',
          type: 'secret',
          required: false,
          values: [],
        },
      ],
    });
    const { context, page } = await contextAs(browser, server.url, adminUser, { viewport: DESKTOP });
    await page.goto(`/project/${projectId}/templates/${dev}`);
    const facts = page.getByRole('definition');
    await page.getByText('Deploys a build to Dev; runs on its own after every successful build.').waitFor();
    const build = facts.getByRole('link', { name: 'Build demo app' });
    expect(await build.getAttribute('href')).toBe(
      `/project/${projectId}/templates/${templateIds['Build demo app']}`,
    );
    await page.getByRole('term').filter({ hasText: 'Autorun' }).waitFor();
    await facts.getByText('Yes', { exact: true }).waitFor();
    await facts.getByText('Region (region)').waitFor();
    await facts.getByText('API token (api_token)').waitFor();
    await context.close();
  });
});

describe('languages', () => {
  it('keeps buttons and column headers on one line in Chinese, with the Playbook header translated', async () => {
    const bash = templateIds['Print system info (Bash)'];
    for (const [locale, run, rerun] of [
      ['zh-CN', '运行', '重新运行'],
      ['zh-TW', '執行', '重新執行'],
    ] as const) {
      for (const viewport of [DESKTOP, PHONE]) {
        const { context, page } = await contextAs(browser, server.url, adminUser, { viewport, locale });
        await page.addInitScript((lang) => localStorage.setItem('lang', lang), locale.toLowerCase());
        await page.goto(`/project/${projectId}/templates`);
        const runs = page.getByRole('button', { name: new RegExp(`^${run}: `) });
        await runs.first().waitFor();
        const where = `${locale} ${viewport.width}px`;
        for (const button of await runs.all()) expect(await lineCount(button), `${where} run button`).toBe(1);
        if (viewport === DESKTOP) {
          const headers = page.getByRole('table').first().getByRole('columnheader');
          for (const header of await headers.all()) {
            const text = (await header.textContent()) ?? '';
            expect(text, `${where} header`).not.toMatch(/[A-Za-z]/);
            if (text) expect(await lineCount(header), `${where} header ${text}`).toBe(1);
          }
        }
        // The detail page: its run button and each task's re-run.
        await navigate(page, `/project/${projectId}/templates/${bash}`);
        const again = page.getByRole('button', { name: rerun });
        await again.first().waitFor();
        for (const button of [page.getByRole('button', { name: run, exact: true }), ...(await again.all())])
          expect(await lineCount(button), `${where} detail button`).toBe(1);
        await context.close();
      }
    }
  });

  it('keeps every templates header and last-task time whole in German at 1280 px', async () => {
    const { context, page } = await contextAs(browser, server.url, adminUser, {
      viewport: DESKTOP,
      locale: 'de-DE',
    });
    await page.addInitScript(() => localStorage.setItem('lang', 'de'));
    await page.goto(`/project/${projectId}/templates`);
    const table = page.getByRole('table').first();
    await table.getByRole('columnheader').first().waitFor();
    // A template that has run shows its last task's time.
    await table.locator('tbody').getByText(/#\d+/).first().waitFor();
    await shot(page, 'templates-german-light-1280');
    // Cut: the header's text reaches past its cell (drawn over the next one), or an element inside it cuts it.
    const cut = async (locator: Locator) =>
      locator.evaluate((node) =>
        ([node, ...node.querySelectorAll('*')] as HTMLElement[]).some(
          (el) => el.scrollWidth > el.clientWidth + 1,
        ),
      );
    for (const header of await table.getByRole('columnheader').all()) {
      const text = (await header.textContent()) ?? '';
      expect(await cut(header), `header ${text} cut`).toBe(false);
    }
    const times = table.locator('[data-last-task-time]');
    expect(await times.count()).toBeGreaterThan(0);
    for (const time of await times.all()) {
      // The time is whole: inside its cell, on one line.
      const inCell = await time.evaluate((n) => {
        const cell = n.closest('td')!.getBoundingClientRect();
        const box = n.getBoundingClientRect();
        return box.left >= cell.left - 1 && box.right <= cell.right + 1;
      });
      expect(inCell, `time ${await time.textContent()}`).toBe(true);
      expect(await lineCount(time)).toBe(1);
    }
    expect(await sidewaysOverflow(table.locator('xpath=..'))).toBeLessThanOrEqual(1);
    await context.close();
  });

  it('names the script field of a Bash template in its required message', async () => {
    const { context, page } = await contextAs(browser, server.url, adminUser, { viewport: DESKTOP });
    await page.goto(`/project/${projectId}/templates/new/edit?app=bash`);
    await page.getByRole('textbox', { name: 'Script filename' }).waitFor();
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByText('Script filename is required').waitFor();
    expect(await page.getByText('Playbook filename is required').count()).toBe(0);
    await context.close();
  });
});

describe('screens', () => {
  it('fit 390 px (saved light/dark at 1280 and 390 px under npm run screenshots)', async () => {
    await shotEach(browser, server.url, adminUser, [
      [`/project/${projectId}/templates`, 'templates-demo'],
      [`/project/${projectId}/history`, 'history-demo'],
      [`/project/${projectId}/templates/${templateIds['Deploy demo app to Dev']}`, 'template-detail-demo'],
      ['/users', 'users-list'],
    ]);
  });
});
