import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldDescription, launch, PHONE, shot, takingScreenshots } from './support/browser';
import { sharedServer } from './support/shared';
import type { SharedServer } from './support/shared-server';
import { contextAs, seedTeam, type Team } from './support/team';

let server: SharedServer;
let browser: Browser;
let team: Team;

beforeAll(async () => {
  server = sharedServer();
  browser = await launch();
  team = await seedTeam(server.url, 'Unique names project');
  await team.admin.post(`/project/${team.projectId}/keys`, { name: 'Deploy', type: 'none' });
});
afterAll(async () => {
  await browser?.close();
});

describe('unique names', () => {
  it('refuses a second key of the same name and says so on the name field', async () => {
    const schemes = takingScreenshots ? (['light', 'dark'] as const) : (['light'] as const);
    const sizes = takingScreenshots ? ([undefined, PHONE] as const) : ([undefined] as const);
    for (const scheme of schemes)
      for (const viewport of sizes) {
        const { context, page } = await contextAs(browser, server.url, team.manager, {
          colorScheme: scheme,
          ...(viewport ? { viewport } : {}),
        });
        await page.addInitScript((dark) => localStorage.setItem('darkMode', dark), String(scheme === 'dark'));
        await page.goto(`/project/${team.projectId}/keys`);
        await page.getByRole('button', { name: 'New Key' }).click();
        const d = page.getByRole('dialog');
        const name = d.getByRole('textbox', { name: 'Name', exact: true });
        await name.fill(' deploy ');
        await d.getByRole('combobox', { name: 'Type' }).click();
        await page.getByRole('option', { name: 'None', exact: true }).click();
        await d.getByRole('button', { name: 'Save' }).click();
        // The message sits under the name field (its description), not only in the dialog's alert.
        await expect.poll(() => fieldDescription(name)).toBe('This name is already in use; pick another one');
        expect(await name.getAttribute('aria-invalid')).toBe('true');
        const keys = await team.admin.get<{ name: string }[]>(`/project/${team.projectId}/keys`);
        expect(keys.filter((k) => k.name.trim().toLowerCase() === 'deploy')).toHaveLength(1);
        await shot(page, `key-name-taken-dialog-${scheme}-${viewport ? 390 : 1280}`);
        await context.close();
      }
  });
});
