import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldDescription, launch, PHONE, shot, takingScreenshots } from './support/browser';
import { ADMIN } from './support/server';
import { sharedServer } from './support/shared';
import type { SharedServer } from './support/shared-server';
import { contextAs, seedBashResources, seedTeam, type Team } from './support/team';

let server: SharedServer;
let browser: Browser;
let team: Team;

beforeAll(async () => {
  server = sharedServer();
  browser = await launch();
  team = await seedTeam(server.url, 'Duplicate names project');
  const seeded = await seedBashResources(team.admin, team.projectId);
  for (const playbook of ['build-a.sh', 'build-b.sh'])
    await team.admin.post(`/project/${team.projectId}/templates`, {
      name: 'Nightly build',
      app: 'bash',
      playbook,
      repository_id: seeded.repoId,
      environment_id: seeded.envId,
    });
});
afterAll(async () => {
  await browser?.close();
});

describe('duplicate names', () => {
  it("refuses a new project named like one of the user's projects, on the name field", async () => {
    const schemes = takingScreenshots ? (['light', 'dark'] as const) : (['light'] as const);
    const sizes = takingScreenshots ? ([undefined, PHONE] as const) : ([undefined] as const);
    for (const scheme of schemes)
      for (const viewport of sizes) {
        const { context, page } = await contextAs(browser, server.url, ADMIN, {
          colorScheme: scheme,
          ...(viewport ? { viewport } : {}),
        });
        await page.addInitScript((dark) => localStorage.setItem('darkMode', dark), String(scheme === 'dark'));
        await page.goto('/project/new');
        const name = page.getByRole('textbox', { name: 'Name', exact: true });
        await name.fill(' duplicate NAMES project ');
        await page.getByRole('button', { name: 'Create', exact: true }).click();
        await expect
          .poll(() => fieldDescription(name))
          .toBe('You already have a project with this name; pick another one');
        expect(await name.getAttribute('aria-invalid')).toBe('true');
        const projects = await team.admin.get<{ name: string }[]>('/projects');
        expect(
          projects.filter((p) => p.name.trim().toLowerCase() === 'duplicate names project'),
        ).toHaveLength(1);
        await shot(page, `project-name-taken-${scheme}-${viewport ? 390 : 1280}`);
        await context.close();
      }
  });

  it('tells two templates of one name apart in the schedule picker', async () => {
    const { context, page } = await contextAs(browser, server.url, team.manager);
    await page.goto(`/project/${team.projectId}/schedule`);
    await page.getByRole('button', { name: 'New Schedule' }).click();
    await page.getByRole('dialog').getByRole('combobox', { name: 'Template' }).click();
    const options = page.getByRole('option');
    await expect
      .poll(() => options.allTextContents())
      .toEqual(['Nightly build (build-a.sh)', 'Nightly build (build-b.sh)']);
    await context.close();
  });
});
