import { readFileSync } from 'node:fs';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Download, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Api, createUser, login, type SeedUser } from './support/api';
import { chooseOption, PHONE, screenVariants, shot, userMenuItem } from './support/browser';
import { useSharedServerAsAdmin } from './support/shared';

type Event = {
  id: number;
  project_id: number | null;
  object_type: string;
  description: string;
  username: string | null;
  created: string;
};

const suite = useSharedServerAsAdmin();
let projectId: number;
let manager: SeedUser;
let managerApi: Api;
let guest: SeedUser;
const VIEWS = 55;

/** Today and tomorrow as the date inputs write them (YYYY-MM-DD, this machine's time zone, as the browser's). */
const day = (plusDays = 0) => {
  const d = new Date();
  d.setDate(d.getDate() + plusDays);
  return [d.getFullYear(), d.getMonth() + 1, d.getDate()].map((n) => String(n).padStart(2, '0')).join('-');
};

beforeAll(async () => {
  const project = await suite.admin.post<{ id: number }>('/projects', { name: 'Activity Demo' });
  projectId = project.id;
  manager = await createUser(suite.admin, { name: 'Mia Activity' });
  guest = await createUser(suite.admin, { name: 'Gus Activity' });
  for (const [user, role] of [
    [manager, 'manager'],
    [guest, 'guest'],
  ] as const)
    await suite.admin.post(`/project/${projectId}/users`, { user_id: user.id, role });
  managerApi = await login(suite.server.url, manager.username, manager.password);
  // Events of several kinds and users: views (more than one page of them), an environment, a key.
  for (let i = 0; i < VIEWS; i++)
    await managerApi.post(`/project/${projectId}/views`, { title: `Board ${i}` });
  await managerApi.post(`/project/${projectId}/views`, { title: 'Nightly "quoted, builds"' });
  await managerApi.post(`/project/${projectId}/environment`, { name: 'Staging env', json: '{}', env: '{}' });
  await suite.admin.post(`/project/${projectId}/keys`, { name: '=Deploy key', type: 'none' });
});

const table = (page: Page) => page.getByRole('table', { name: 'Activity' });
const rows = (page: Page) => table(page).locator('tbody tr');
const descriptions = (page: Page) => rows(page).locator('td:last-child').allTextContents();
const shown = (page: Page, count: number) =>
  page.getByText(`Events shown: ${count}`, { exact: true }).waitFor();

async function download(page: Page, button: string): Promise<{ file: Download; text: string }> {
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: button }).click(),
  ]);
  return { file, text: readFileSync(await file.path(), 'utf8') };
}

describe('project activity', () => {
  it('shows the events newest first, pages with Load more, filters and exports what matches', async () => {
    const page = await suite.pageAs(await login(suite.server.url, guest.username, guest.password));
    await page.goto(`/project/${projectId}/activity`);
    await rows(page).first().waitFor();
    // The newest event first: the key the admin created; 50 rows, then the rest on Load more.
    await expect.poll(() => rows(page).first().textContent()).toContain('Access key =Deploy key created');
    expect(await rows(page).first().textContent()).toContain('Key #');
    await shown(page, 50);
    await page.getByRole('button', { name: 'Load more' }).click();
    const all = await suite.admin.get<Event[]>(`/project/${projectId}/events?limit=1000`);
    await shown(page, all.length);
    expect(await rows(page).count()).toBe(all.length);
    await expect.poll(() => page.getByRole('button', { name: 'Load more' }).count()).toBe(0);

    // Object type and text filters.
    await chooseOption(page, 'Object type', 'Environment');
    await expect.poll(() => descriptions(page)).toEqual(['Environment Staging env created']);
    await chooseOption(page, 'Object type', 'View');
    await page.getByLabel('Search descriptions').fill('nightly');
    await expect.poll(() => descriptions(page)).toEqual(['View Nightly "quoted, builds" created']);
    expect(await rows(page).first().textContent()).toContain(manager.name);

    // The CSV export holds what the filters match, quoted.
    const csv = await download(page, 'Export CSV');
    expect(csv.file.suggestedFilename()).toMatch(
      new RegExp(`^signalbox-events-project-${projectId}-\\d{4}-\\d{2}-\\d{2}\\.csv$`),
    );
    const records = parseCsv(csv.text, { bom: true, columns: true }) as Record<string, string>[];
    expect(records).toEqual([
      expect.objectContaining({
        object_type: 'view',
        description: 'View Nightly "quoted, builds" created',
        username: manager.username,
        project_name: 'Activity Demo',
      }),
    ]);

    // User filter, then the JSON export of every view event of the manager.
    await page.getByLabel('Search descriptions').fill('');
    await page.getByLabel('User', { exact: true }).fill(manager.name.toUpperCase());
    await expect.poll(() => rows(page).count()).toBe(50);
    await expect.poll(async () => (await descriptions(page)).every((d) => d.startsWith('View '))).toBe(true);
    const json = await download(page, 'Export JSON');
    expect(json.file.suggestedFilename()).toMatch(/\.json$/);
    const exported = JSON.parse(json.text) as Event[];
    expect(exported.map((e) => e.id)).toEqual(
      all.filter((e) => e.object_type === 'view' && e.username === manager.username).map((e) => e.id),
    );
    expect(exported).toHaveLength(VIEWS + 1);

    // Date range: today holds them all, tomorrow nothing; a range ending before it starts is refused on the spot.
    // Cleared, the list starts again at its first page of every kind of event (not the two pages loaded before).
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => rows(page).first().textContent()).toContain('Access key =Deploy key created');
    await shown(page, 50);
    expect(await rows(page).count()).toBe(50);
    await page.getByLabel('From').fill(day());
    await page.getByLabel('To', { exact: true }).fill(day());
    await shown(page, 50);
    const today = JSON.parse((await download(page, 'Export JSON')).text) as Event[];
    expect(today.map((e) => e.id)).toEqual(all.map((e) => e.id));
    await page.getByLabel('From').fill(day(1));
    await page.getByText('Must not be before From').waitFor();
    await page.getByLabel('To', { exact: true }).fill(day(2));
    await page.getByText('No events match these filters.').waitFor();
    await page.context().close();
  });

  it('lays events out as cards at phone width, without sideways scrolling', async () => {
    const page = await suite.pageAs(suite.admin, { viewport: PHONE });
    await page.goto(`/project/${projectId}/activity`);
    const list = page.getByRole('list', { name: 'Activity' });
    await list.getByRole('listitem').first().waitFor();
    expect(await list.getByRole('listitem').count()).toBe(50);
    expect(await page.getByRole('table').count()).toBe(0);
    expect(await list.getByRole('listitem').first().textContent()).toContain(
      'Access key =Deploy key created',
    );
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await page.context().close();
  });
});

describe('global activity log', () => {
  it('is in the admin user menu and lists every project and the events of no project', async () => {
    const page = await suite.pageAs(suite.admin);
    await page.goto(`/project/${projectId}/history`);
    await (await userMenuItem(page, 'Activity log')).click();
    await page.waitForURL('**/activity');
    await page.getByRole('heading', { name: 'Activity log' }).waitFor();
    const globalTable = page.getByRole('table', { name: 'Activity log' });
    await globalTable.locator('tbody tr').first().waitFor();
    expect(await globalTable.getByRole('columnheader').allTextContents()).toEqual([
      'Time',
      'User',
      'Project',
      'Object',
      'Description',
    ]);
    // Users created by the admin: events of no project, only here.
    await chooseOption(page, 'Object type', 'User');
    await page.getByLabel('Search descriptions').fill(guest.username);
    await globalTable.getByText(`User ${guest.username} created`).waitFor();
    // The project filter.
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await chooseOption(page, 'Project', 'Activity Demo');
    await expect
      .poll(async () =>
        (await globalTable.locator('tbody tr td:nth-child(3)').allTextContents()).every(
          (c) => c === 'Activity Demo',
        ),
      )
      .toBe(true);
    await page.context().close();
  });

  it('is for admins only', async () => {
    const page = await suite.pageAs(managerApi);
    await page.goto('/activity');
    await page.waitForURL((url) => url.pathname !== '/activity');
    await userMenuItem(page, 'Sign out');
    expect(await page.getByRole('menuitem', { name: 'Activity log' }).count()).toBe(0);
    await page.context().close();
  });

  // Every scheme and width under `npm run screenshots`; otherwise the phone width, where a screen overflows first.
  it('fits its screens, light and dark, wide and on a phone', async () => {
    const guestApi = await login(suite.server.url, guest.username, guest.password);
    for (const [api, path, name, ready] of [
      [guestApi, `/project/${projectId}/activity`, 'activity-filtered', 'Activity'],
      [suite.admin, '/activity', 'activity-global', 'Activity log'],
    ] as const) {
      for (const { scheme, viewport, size } of screenVariants()) {
        const page = await suite.pageAs(api, { viewport, colorScheme: scheme });
        await page.addInitScript((dark) => localStorage.setItem('darkMode', dark), String(scheme === 'dark'));
        await page.goto(path);
        const phone = viewport === PHONE;
        const events = page.getByRole(phone ? 'list' : 'table', { name: ready, exact: true });
        await events
          .locator(phone ? 'li' : 'tbody tr')
          .first()
          .waitFor();
        if (name === 'activity-filtered') {
          await chooseOption(page, 'Object type', 'View');
          await page.getByLabel('Search descriptions').fill('board 1');
          await shown(page, 11);
        }
        await page.mouse.move(0, 0);
        await shot(page, `${name}-${scheme}-${size}`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(1);
        await page.context().close();
      }
    }
  });
});
