import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type SeedUser } from './support/api';
import { launch, navigate, settled } from './support/browser';
import { waitForStatus } from './support/seed';
import { sharedServer } from './support/shared';
import type { SharedServer } from './support/shared-server';
import { contextAs, seedBashResources, seedTeam, shotAll, shotEach, type Team } from './support/team';

// What each project role holds (SPEC: runProjectTasks=1, updateProject=2, manageProjectResources=4,
// manageProjectUsers=8). The console must offer exactly the actions these bits allow.
const RUN = 1;
const UPDATE_PROJECT = 2;
const RESOURCES = 4;
const USERS = 8;
type Role = 'guest' | 'task_runner' | 'manager' | 'owner';
const roleBits: Record<Role, number> = { guest: 0, task_runner: RUN, manager: RUN | RESOURCES, owner: 15 };

let server: SharedServer;
let browser: Browser;
let team: Team;
let owner: SeedUser;
let templateId: number;
const users = (): Record<Role, SeedUser> => ({
  guest: team.guest,
  task_runner: team.runner,
  manager: team.manager,
  owner,
});

beforeAll(async () => {
  server = sharedServer();
  browser = await launch();
  team = await seedTeam(server.url, 'Roles project');
  owner = await createUser(team.admin, { name: 'Ola Owner' });
  await team.admin.post(`/project/${team.projectId}/users`, { user_id: owner.id, role: 'owner' });
  const p = `/project/${team.projectId}`;
  const seeded = await seedBashResources(team.admin, team.projectId);
  templateId = (
    await team.admin.post<{ id: number }>(`${p}/templates`, {
      name: 'Roles template',
      app: 'bash',
      playbook: 'run.sh',
      repository_id: seeded.repoId,
      environment_id: seeded.envId,
    })
  ).id;
  const task = await team.admin.post<{ id: number }>(`${p}/tasks`, { template_id: templateId });
  await waitForStatus(team.admin, team.projectId, task.id, ['success', 'error']);
  await team.admin.post(`${p}/schedules`, {
    template_id: templateId,
    cron_format: '0 3 * * *',
    active: false,
  });
  const hook = await team.admin.post<{ id: number }>(`${p}/integrations`, {
    name: 'Roles hook',
    template_id: templateId,
  });
  await team.admin.post(`${p}/integrations/${hook.id}/matchers`, {
    name: 'Main branch',
    match_type: 'body',
    body_data_type: 'json',
    key: 'ref',
    method: 'equals',
    value: 'refs/heads/main',
  });
  await team.admin.post(`${p}/integrations/${hook.id}/values`, {
    name: 'Commit',
    value_source: 'body',
    body_data_type: 'json',
    key: 'after',
    variable: 'COMMIT',
  });
});
afterAll(async () => {
  await browser?.close();
});

/** An action is usable when it is on the page and enabled; hidden and disabled both count as not offered. */
async function usable(target: Locator): Promise<boolean> {
  const count = await target.count();
  if (count === 0) return false;
  for (let i = 0; i < count; i++) if (await target.nth(i).isEnabled()) return true;
  return false;
}

type Check = { action: string; needs: number; target: (page: Page) => Locator };
type Screen = { path: () => string; ready: (page: Page) => Locator; checks: Check[] };

const button = (name: string) => (page: Page) => page.getByRole('button', { name, exact: true });
const inDialogless = (name: string) => (page: Page) =>
  page.getByRole('main').getByRole('button', { name, exact: true });
const base = () => `/project/${team.projectId}`;

const screens: Record<string, Screen> = {
  templates: {
    path: () => `${base()}/templates`,
    ready: (page) => page.getByRole('link', { name: 'Roles template', exact: true }),
    checks: [
      { action: 'New Template', needs: RESOURCES, target: button('New Template') },
      { action: 'Run (row)', needs: RUN, target: button('Run: Roles template') },
      { action: 'Edit views', needs: RESOURCES, target: button('Edit views') },
    ],
  },
  'template detail': {
    path: () => `${base()}/templates/${templateId}`,
    // The detail's own title and its last tasks: the list left behind also has a table of links, and the router
    // keeps it on screen until the detail page can show.
    ready: (page) =>
      page
        .getByRole('main')
        .filter({ has: page.getByRole('heading', { level: 1, name: 'Roles template', exact: true }) })
        .getByRole('table')
        .getByRole('link')
        .first(),
    checks: [
      { action: 'Run', needs: RUN, target: inDialogless('Run') },
      { action: 'Re-Run', needs: RUN, target: inDialogless('Re-Run') },
      { action: 'Edit', needs: RESOURCES, target: button('Edit Template') },
      { action: 'Copy', needs: RESOURCES, target: button('Copy template') },
      { action: 'Delete', needs: RESOURCES, target: button('Delete template') },
    ],
  },
  keys: {
    path: () => `${base()}/keys`,
    ready: (page) => page.getByRole('cell', { name: 'Seed none key', exact: true }),
    checks: [
      { action: 'New Key', needs: RESOURCES, target: button('New Key') },
      { action: 'Edit', needs: RESOURCES, target: button('Edit Seed none key') },
      { action: 'Delete', needs: RESOURCES, target: button('Delete Seed none key') },
    ],
  },
  inventory: {
    path: () => `${base()}/inventory`,
    ready: (page) => page.getByRole('cell', { name: 'Seed hosts', exact: true }),
    checks: [
      { action: 'New Inventory', needs: RESOURCES, target: button('New Inventory') },
      { action: 'Edit', needs: RESOURCES, target: button('Edit Seed hosts') },
      { action: 'Delete', needs: RESOURCES, target: button('Delete Seed hosts') },
    ],
  },
  environment: {
    path: () => `${base()}/environment`,
    ready: (page) => page.getByRole('cell', { name: 'Seed env', exact: true }),
    checks: [
      { action: 'New Environment', needs: RESOURCES, target: button('New Environment') },
      { action: 'Edit', needs: RESOURCES, target: button('Edit Seed env') },
      { action: 'Delete', needs: RESOURCES, target: button('Delete Seed env') },
    ],
  },
  repositories: {
    path: () => `${base()}/repositories`,
    ready: (page) => page.getByRole('cell', { name: 'Local scripts', exact: true }),
    checks: [
      { action: 'New Repository', needs: RESOURCES, target: button('New Repository') },
      { action: 'Edit', needs: RESOURCES, target: button('Edit Local scripts') },
      { action: 'Delete', needs: RESOURCES, target: button('Delete Local scripts') },
    ],
  },
  schedules: {
    path: () => `${base()}/schedule`,
    ready: (page) => page.getByRole('link', { name: 'Roles template', exact: true }),
    checks: [
      { action: 'New Schedule', needs: RESOURCES, target: button('New Schedule') },
      { action: 'Edit', needs: RESOURCES, target: button('Edit Roles template') },
      { action: 'Delete', needs: RESOURCES, target: button('Delete Roles template') },
    ],
  },
  integrations: {
    path: () => `${base()}/integrations`,
    ready: (page) => page.getByRole('link', { name: 'Roles hook', exact: true }),
    checks: [
      { action: 'New Integration', needs: UPDATE_PROJECT, target: button('New Integration') },
      { action: 'Edit', needs: UPDATE_PROJECT, target: button('Edit Roles hook') },
      { action: 'Delete', needs: UPDATE_PROJECT, target: button('Delete Roles hook') },
      { action: 'Add alias', needs: UPDATE_PROJECT, target: button('Add alias') },
      // Alias URLs start tasks: members who may not run tasks do not see them.
      {
        action: 'Project alias URLs',
        needs: RUN,
        target: (page) => page.getByRole('heading', { name: 'Project aliases', exact: true }),
      },
    ],
  },
  'integration detail': {
    path: () => `${base()}/integrations`,
    ready: (page) => page.getByRole('cell', { name: 'Main branch', exact: true }),
    checks: [
      { action: 'Edit integration', needs: UPDATE_PROJECT, target: inDialogless('Edit') },
      { action: 'New matcher', needs: UPDATE_PROJECT, target: button('New Matcher') },
      { action: 'Edit matcher', needs: UPDATE_PROJECT, target: button('Edit Main branch') },
      { action: 'Delete matcher', needs: UPDATE_PROJECT, target: button('Delete Main branch') },
      { action: 'New value', needs: UPDATE_PROJECT, target: button('New Extracted Value') },
      { action: 'Edit value', needs: UPDATE_PROJECT, target: button('Edit Commit') },
      { action: 'Delete value', needs: UPDATE_PROJECT, target: button('Delete Commit') },
      {
        action: 'Alias URLs',
        needs: RUN,
        target: (page) => page.getByRole('heading', { name: 'Aliases', exact: true }),
      },
    ],
  },
  team: {
    path: () => `${base()}/team`,
    ready: (page) => page.getByRole('cell', { name: /^Gus Guest/ }).first(),
    checks: [
      { action: 'Add member', needs: USERS, target: button('Add member') },
      {
        action: 'Change role',
        needs: USERS,
        target: (page) => page.getByRole('combobox', { name: 'Role of Gus Guest' }),
      },
      { action: 'Remove member', needs: USERS, target: button('Remove Gus Guest') },
    ],
  },
};

describe('what each project role is offered', () => {
  it.each(['guest', 'task_runner', 'manager', 'owner'] as const)(
    '%s sees exactly the actions its role allows, on every screen',
    async (role) => {
      const { context, page } = await contextAs(browser, server.url, users()[role]);
      const seen: Record<string, boolean> = {};
      const wanted: Record<string, boolean> = {};
      for (const [name, screen] of Object.entries(screens)) {
        await navigate(page, screen.path());
        await settled(page);
        if (name === 'integration detail')
          await page.getByRole('link', { name: 'Roles hook', exact: true }).click();
        await screen.ready(page).waitFor();
        await settled(page);
        for (const check of screen.checks) {
          const key = `${name}: ${check.action}`;
          seen[key] = await usable(check.target(page));
          wanted[key] = (roleBits[role] & check.needs) !== 0;
        }
      }
      expect(seen, role).toEqual(wanted);
      await context.close();
    },
  );

  it('tells a guest in plain words why Run is disabled', async () => {
    const { context, page } = await contextAs(browser, server.url, team.guest);
    await page.goto(`${base()}/templates/${templateId}`);
    const run = page.getByRole('main').getByRole('button', { name: 'Run', exact: true });
    await run.waitFor();
    expect(await run.isDisabled()).toBe(true);
    await run.locator('xpath=..').hover();
    await page
      .getByRole('tooltip', { name: 'Your role in this project does not allow running tasks.' })
      .waitFor();
    // Read-only users open a resource to look at it, not to edit it.
    await navigate(page, `${base()}/keys`);
    await page.getByRole('button', { name: 'View Seed none key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('You have read-only access').waitFor();
    expect(await usable(dialog.getByRole('button', { name: 'Save' }))).toBe(false);
    await context.close();
  });
});

describe('pages a role may not use', () => {
  it.each([
    [
      'the edit page of a template',
      () => `${base()}/templates/${templateId}/edit`,
      'You cannot edit this template',
    ],
    ['the new-template page', () => `${base()}/templates/new/edit?app=bash`, 'You cannot create templates'],
    [
      'a copy of a template',
      () => `${base()}/templates/new/edit?copy=${templateId}`,
      'You cannot create templates',
    ],
  ])('a task runner opening %s is told so and has no Save', async (_what, path, title) => {
    const { context, page } = await contextAs(browser, server.url, team.runner);
    await page.goto(path());
    await page.getByRole('heading', { name: title }).waitFor();
    await page.getByText('Only project owners and managers can change this.').waitFor();
    await settled(page);
    expect(await usable(page.getByRole('button', { name: 'Save' }))).toBe(false);
    expect(await page.getByRole('textbox').count()).toBe(0);
    await context.close();
  });

  it('a refused action shows what the role may not do in German, never the permission name', async () => {
    const runner = await createUser(team.admin, { name: 'Rita Runner' });
    const members = `/project/${team.projectId}/users`;
    await team.admin.post(members, { user_id: runner.id, role: 'task_runner' });
    const { context, page } = await contextAs(browser, server.url, runner);
    await page.addInitScript(() => localStorage.setItem('lang', 'de'));
    await page.goto(`${base()}/templates/${templateId}`);
    await page.getByRole('main').getByRole('button', { name: 'Ausführen', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('textbox').first().waitFor();
    // The role is taken away while the dialog is open: the server refuses the run with a 403.
    await team.admin.put(`${members}/${runner.id}`, { role: 'guest' });
    const refused = page.waitForResponse(
      (r) => r.url().endsWith('/tasks') && r.request().method() === 'POST',
    );
    await dialog.getByRole('button', { name: 'Ausführen', exact: true }).click();
    const response = await refused;
    expect(response.status()).toBe(403);
    expect(await response.json()).toMatchObject({
      code: 'missing_permission',
      params: { permission: 'runProjectTasks' },
    });
    await dialog
      .getByRole('alert')
      .filter({ hasText: 'Ihre Rolle in diesem Projekt erlaubt es nicht, Aufgaben auszuführen.' })
      .waitFor();
    expect(await dialog.textContent()).not.toContain('runProjectTasks');
    await context.close();
  });
});

describe('screenshots', () => {
  it('templates as a guest (read-only) and the template edit page as a task runner', async () => {
    await shotEach(browser, server.url, team.guest, [
      [`${base()}/templates`, 'templates-read-only'],
      [`${base()}/templates/${templateId}`, 'template-read-only'],
    ]);
    const edit = `${base()}/templates/${templateId}/edit`;
    await shotAll(browser, server.url, team.runner, edit, 'template-edit-not-allowed');
  });
});
