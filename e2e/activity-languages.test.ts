import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, PHONE, shot, takingScreenshots } from './support/browser';
import { useSharedServerAsAdmin } from './support/shared';

const suite = useSharedServerAsAdmin();
let projectId: number;

beforeAll(async () => {
  const project = await suite.admin.post<{ id: number }>('/projects', { name: 'Aktivität DE' });
  projectId = project.id;
  await suite.admin.post(`/project/${projectId}/views`, { title: 'Nachtläufe' });
  const env = await suite.admin.post<{ id: number }>(`/project/${projectId}/environment`, {
    name: 'Staging',
    json: '{}',
    env: '{}',
  });
  await suite.admin.put(`/project/${projectId}/environment/${env.id}`, {
    id: env.id,
    name: 'Produktion',
    json: '{}',
    env: '{}',
  });
  await suite.admin.post(`/project/${projectId}/keys`, { name: 'Deploy-Schlüssel', type: 'none' });
});

/** The descriptions the Activity page shows, table (desktop) or cards (phone). */
const shownTexts = (page: Page, phone: boolean) =>
  phone
    ? page
        .getByRole('list', { name: 'Aktivität' })
        .getByRole('listitem')
        .locator('p.MuiTypography-body2')
        .allTextContents()
    : page.getByRole('table', { name: 'Aktivität' }).locator('tbody tr td:last-child').allTextContents();

const GERMAN = [
  'Zugangsschlüssel Deploy-Schlüssel erstellt',
  'Umgebung Produktion geändert',
  'Umgebung Staging erstellt',
  'Ansicht Nachtläufe erstellt',
  'Projekt Aktivität DE erstellt',
];

describe('activity in the reader’s language', () => {
  it('words the events in German for a German browser, on desktop and phone', async () => {
    const schemes = takingScreenshots ? (['light', 'dark'] as const) : (['light'] as const);
    for (const colorScheme of schemes)
      for (const [viewport, size] of [
        [DESKTOP, '1280'],
        [PHONE, '390'],
      ] as const) {
        const page = await suite.pageAs(suite.admin, { locale: 'de-DE', viewport, colorScheme });
        await page.addInitScript(
          (dark) => localStorage.setItem('darkMode', dark),
          String(colorScheme === 'dark'),
        );
        await page.goto(`/project/${projectId}/activity`);
        const phone = size === '390';
        await expect.poll(() => shownTexts(page, phone)).toEqual(GERMAN);
        await shot(page, `activity-de-${colorScheme}-${size}`);
        await page.context().close();
      }
  });

  it('keeps the English description in the API', async () => {
    const events = await suite.admin.get<{ description: string; kind: string | null }[]>(
      `/project/${projectId}/events`,
    );
    expect(events.map((e) => [e.kind, e.description])).toEqual([
      ['key.created', 'Access key Deploy-Schlüssel created'],
      ['environment.updated', 'Environment Produktion updated'],
      ['environment.created', 'Environment Staging created'],
      ['view.created', 'View Nachtläufe created'],
      ['project.created', 'Project Aktivität DE created'],
    ]);
  });
});
