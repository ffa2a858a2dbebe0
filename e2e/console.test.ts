import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createUser, login } from './support/api';
import { navigate, settled, shot, userMenuItem } from './support/browser';
import { ADMIN, root } from './support/server';
import { useSharedServerAsAdmin } from './support/shared';

const suite = useSharedServerAsAdmin();
const { pageAs } = suite;

const snackbar = (page: Page, text: string) =>
  page.locator('#notistack-snackbar').filter({ hasText: text }).waitFor();
const field = (scope: Page | Locator, name: string) => scope.getByRole('textbox', { name, exact: true });
const navItems = (page: Page) =>
  page.getByRole('navigation', { name: 'Project navigation' }).getByRole('link').allTextContents();

describe('projects', () => {
  it('creates a project and a demo project from /project/new', async () => {
    const page = await pageAs(suite.admin);
    await page.goto('/project/new');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByText('Name is required').waitFor();
    await field(page, 'Name').fill('Web Ops');
    await page.getByLabel('Max parallel tasks').fill('-1');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByText('Max parallel tasks must be 0 or greater').waitFor();
    await page.getByLabel('Max parallel tasks').fill('2');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await snackbar(page, 'Project Web Ops created');
    await page.waitForURL(/\/project\/\d+\/history$/);
    const projects =
      await suite.admin.get<{ id: number; name: string; max_parallel_tasks: number }[]>('/projects');
    expect(projects.find((p) => p.name === 'Web Ops')?.max_parallel_tasks).toBe(2);
    expect(await navItems(page)).toEqual([
      'Dashboard',
      'Task Templates',
      'Workflows',
      'Schedule',
      'Inventory',
      'Environment',
      'Key Store',
      'Repositories',
      'Option Lists',
      'Terraform states',
      'Integrations',
      'Team',
      'Approvals',
    ]);
    await page.getByRole('tab', { name: 'Activity' }).click();
    await page.getByRole('cell', { name: 'Project Web Ops created' }).waitFor();
    await page.getByRole('cell', { name: ADMIN.name }).first().waitFor();

    await navigate(page, '/project/new');
    await page.getByRole('button', { name: 'Create Demo Project' }).click();
    // The first project's message may still be showing: wait for this one's.
    await snackbar(page, 'Project Demo Project created');
    await page.waitForURL(/\/project\/\d+\//);
    // The page it went to is a new project of the admin (other files create projects on this server too).
    const demoId = Number(/\/project\/(\d+)\//.exec(page.url())?.[1]);
    expect(projects.map((p) => p.id)).not.toContain(demoId);
    const after = await suite.admin.get<{ id: number }[]>('/projects');
    expect(after.map((p) => p.id)).toContain(demoId);
    await page.context().close();
  });

  it('/project/{id} redirects to history and remembers the project', async () => {
    const project = await suite.admin.post<{ id: number }>('/projects', { name: 'Remembered' });
    const page = await pageAs(suite.admin);
    await page.goto(`/project/${project.id}`);
    await page.waitForURL(`**/project/${project.id}/history`);
    expect(await page.evaluate(() => localStorage.getItem('projectId'))).toBe(String(project.id));
    await page.goto('/');
    await page.waitForURL(`**/project/${project.id}/history`);
    // The project selector lists the projects with initials avatars and offers New/Restore to admins.
    await page.getByRole('button', { name: 'Select project' }).click();
    await page.getByRole('menuitem', { name: 'New project' }).waitFor();
    await page.getByRole('menuitem', { name: 'Restore project' }).waitFor();
    await page.getByRole('menuitem', { name: /Remembered/ }).waitFor();
    await page.context().close();
  });

  it('settings: save, backup download, delete with confirmation', async () => {
    const project = await suite.admin.post<{ id: number }>('/projects', { name: 'Settings Demo' });
    const page = await pageAs(suite.admin);
    await page.goto(`/project/${project.id}/settings`);
    await field(page, 'Name').fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Name is required').waitFor();
    await field(page, 'Name').fill('Settings Renamed');
    await page.getByLabel('Max parallel tasks').fill('1.5');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Max parallel tasks must be an integer').waitFor();
    await page.getByLabel('Max parallel tasks').fill('3');
    await page.getByLabel('Send alerts about failed tasks').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await snackbar(page, 'Project Settings Renamed saved');
    const saved = await suite.admin.get<{ name: string; max_parallel_tasks: number; alert: boolean }>(
      `/project/${project.id}`,
    );
    expect(saved).toMatchObject({ name: 'Settings Renamed', max_parallel_tasks: 3, alert: true });
    await shot(page, 'settings-light-1280');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Backup' }).click(),
    ]);
    const path = await download.path();
    const { readFileSync } = await import('node:fs');
    const backup = JSON.parse(readFileSync(path, 'utf8'));
    expect(backup.meta?.name ?? backup.name).toBe('Settings Renamed');

    // Restore the backup as a new project from the project menu.
    await page.getByRole('button', { name: 'Select project' }).click();
    await page.getByRole('menuitem', { name: 'Restore project' }).click();
    const restore = page.getByRole('dialog', { name: 'Restore project' });
    await restore.getByLabel('Backup file').setInputFiles(path);
    await restore.getByRole('button', { name: 'Restore' }).click();
    await snackbar(page, 'Project Settings Renamed restored');
    await page.waitForURL((u) => !u.pathname.startsWith(`/project/${project.id}/`));
    const restored = (await suite.admin.get<{ id: number; name: string }[]>('/projects')).filter(
      (p) => p.name === 'Settings Renamed',
    );
    expect(restored.length).toBe(2);
    // A whole load: the console may still be on its way to the restored project, and a history entry pushed now
    // would be replaced by that navigation.
    await page.goto(`/project/${project.id}/settings`);

    await page.getByRole('button', { name: 'Delete project' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this project?' });
    await dialog.getByText('cannot be undone').waitFor();
    await dialog.getByRole('button', { name: 'Delete project' }).click();
    await snackbar(page, 'Project Settings Renamed deleted');
    expect(await suite.admin.status('GET', `/project/${project.id}`)).toBe(404);
    await page.context().close();
  });
});

describe('users', () => {
  it('creates, edits, changes a password and deletes users; refuses self-delete', async () => {
    const page = await pageAs(suite.admin);
    await page.goto('/users');
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await page.getByRole('button', { name: 'New user' }).click();
    const dialog = page.getByRole('dialog', { name: 'New user' });
    await dialog.getByRole('button', { name: 'Create' }).click();
    for (const message of ['Name is required', 'Username is required', 'Email is required'])
      await dialog.getByText(message, { exact: true }).waitFor();
    // The password is optional (a user of LDAP or OIDC): the field says what leaving it empty means.
    await dialog.getByText(/^Optional: without one, nobody signs in/).waitFor();
    await shot(page, 'user-new-light-1280');
    await field(dialog, 'Name').fill('Grace Hopper');
    await field(dialog, 'Username').fill('grace');
    await field(dialog, 'Email').fill('not-an-email');
    await dialog.getByLabel('Password').fill('Cobol-1959');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.getByText('Email must be a valid e-mail address').waitFor();
    await field(dialog, 'Email').fill('grace@example.com');
    await dialog.getByLabel('Admin').check();
    await dialog.getByRole('button', { name: 'Create' }).click();
    await snackbar(page, 'User Grace Hopper created');
    let users =
      await suite.admin.get<{ id: number; username: string; admin: boolean; name: string }[]>('/users');
    const grace = users.find((u) => u.username === 'grace')!;
    expect(grace).toMatchObject({ name: 'Grace Hopper', admin: true });
    await (await login(suite.server.url, 'grace', 'Cobol-1959')).get('/user');

    // A duplicate username shows the server's message in the form.
    await page.getByRole('button', { name: 'New user' }).click();
    await field(dialog, 'Name').fill('Other Grace');
    await field(dialog, 'Username').fill('grace');
    await field(dialog, 'Email').fill('other@example.com');
    await dialog.getByLabel('Password').fill('x-password');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.getByRole('alert').waitFor();
    expect(await dialog.getByRole('alert').textContent()).not.toMatch(/Request failed/);
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // A user without a password is created; no password signs in to the account until one is set.
    await page.getByRole('button', { name: 'New user' }).click();
    await field(dialog, 'Name').fill('Ada Lovelace');
    await field(dialog, 'Username').fill('ada');
    await field(dialog, 'Email').fill('ada@example.com');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await snackbar(page, 'User Ada Lovelace created');
    users = await suite.admin.get('/users');
    expect(users.find((u) => u.username === 'ada')).toMatchObject({ name: 'Ada Lovelace', admin: false });
    await expect(login(suite.server.url, 'ada', 'any-password')).rejects.toThrow(/login ada: 401/);

    await page.getByRole('button', { name: 'Edit user Grace Hopper' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit user' });
    await field(edit, 'Name').fill('Grace B. Hopper');
    await edit.getByRole('button', { name: 'Save' }).click();
    await snackbar(page, 'User Grace B. Hopper saved');
    users = await suite.admin.get('/users');
    expect(users.find((u) => u.id === grace.id)?.name).toBe('Grace B. Hopper');

    await page.getByRole('button', { name: 'Change password of Grace B. Hopper' }).click();
    const pw = page.getByRole('dialog', { name: 'Change password of Grace B. Hopper' });
    // An administrator resetting someone else's password gives no current password.
    expect(await pw.getByLabel('Current password').count()).toBe(0);
    expect(await pw.getByLabel('Also revoke the API tokens of Grace B. Hopper').isChecked()).toBe(true);
    await pw.getByRole('button', { name: 'Save' }).click();
    await pw.getByText('Password is required').waitFor();
    await pw.getByLabel('New password').fill('Navy-1986');
    await pw.getByRole('button', { name: 'Save' }).click();
    await snackbar(page, 'Password of Grace B. Hopper changed');
    await (await login(suite.server.url, 'grace', 'Navy-1986')).get('/user');
    await shot(page, 'users-light-1280');

    // The signed-in admin cannot delete themselves.
    expect(await page.getByRole('button', { name: `Delete user ${ADMIN.name}` }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Delete user Grace B. Hopper' }).click();
    await page.getByRole('dialog', { name: 'Delete user' }).getByRole('button', { name: 'Delete' }).click();
    await snackbar(page, 'User Grace B. Hopper deleted');
    users = await suite.admin.get('/users');
    expect(users.some((u) => u.id === grace.id)).toBe(false);
    await page.context().close();
  });

  it('pages users 20 at a time and hides the Users menu from non-admins', async () => {
    for (let i = 0; i < 21; i++)
      await createUser(suite.admin, { name: `Paged ${String(i).padStart(2, '0')}` });
    const page = await pageAs(suite.admin);
    await page.goto('/users');
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    // The rows arrive after the heading: wait for the first page to fill, then for the second to replace it.
    await expect.poll(() => page.locator('tbody tr').count()).toBe(20);
    const firstOfPageOne = await page.locator('tbody tr').first().textContent();
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect
      .poll(async () => (await page.locator('tbody tr').first().textContent()) !== firstOfPageOne)
      .toBe(true);
    expect(await page.locator('tbody tr').count()).toBeGreaterThan(0);
    await page.context().close();

    const plain = await createUser(suite.admin, { name: 'Plain User' });
    const project = await suite.admin.post<{ id: number }>('/projects', { name: 'Plain project' });
    await suite.admin.post(`/project/${project.id}/users`, { user_id: plain.id, role: 'guest' });
    const api = await login(suite.server.url, plain.username, plain.password);
    const userPage = await pageAs(api);
    await userPage.goto(`/project/${project.id}/history`);
    // The top bar is drawn again once the session's user has loaded: click the menu of the page as it settles.
    await settled(userPage);
    await userMenuItem(userPage, 'Edit account');
    expect(await userPage.getByRole('menuitem', { name: 'Users' }).count()).toBe(0);
    await userPage.keyboard.press('Escape');
    await userPage.getByRole('button', { name: 'Select project' }).click();
    expect(await userPage.getByRole('menuitem', { name: 'New project' }).count()).toBe(0);
    expect(await userPage.getByRole('menuitem', { name: 'Restore project' }).count()).toBe(0);
    await userPage.keyboard.press('Escape');
    // Guests see no Settings tab.
    expect(await userPage.getByRole('tab', { name: 'Settings' }).count()).toBe(0);
    // /users is for admins only.
    await navigate(userPage, '/users');
    await userPage.waitForURL((u) => !u.pathname.startsWith('/users'));
    await userPage.context().close();
  });

  /** A new non-admin user who owns a new project, signed in on its history page. */
  async function ownerOnHistory(name: string) {
    const me = await createUser(suite.admin, { name });
    const project = await suite.admin.post<{ id: number }>('/projects', { name: `${name} project` });
    await suite.admin.post(`/project/${project.id}/users`, { user_id: me.id, role: 'owner' });
    const api = await login(suite.server.url, me.username, me.password);
    const page = await pageAs(api);
    await page.goto(`/project/${project.id}/history`);
    return { api, page };
  }

  it('edits the own account from the user menu', async () => {
    const { api, page } = await ownerOnHistory('Self Editor');
    await (await userMenuItem(page, 'Edit account')).click();
    const dialog = page.getByRole('dialog', { name: 'Edit account' });
    expect(await dialog.getByLabel('Admin').count()).toBe(0);
    await field(dialog, 'Name').fill('Self Edited');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await snackbar(page, 'User Self Edited saved');
    expect((await api.get<{ name: string }>('/user')).name).toBe('Self Edited');
    await page.context().close();
  });

  it('changes the own password from the user menu with the current one, revoking API tokens', async () => {
    const { api, page } = await ownerOnHistory('Password Changer');
    const me = await api.get<{ username: string }>('/user');
    const token = (await api.post<{ token: string }>('/user/tokens', { name: 'ci' })).token;
    const bearer = () =>
      fetch(`${suite.server.url}/api/user`, { headers: { authorization: `Bearer ${token}` } }).then(
        (r) => r.status,
      );
    expect(await bearer()).toBe(200);

    await (await userMenuItem(page, 'Change password')).click();
    const dialog = page.getByRole('dialog', { name: 'Change password of Password Changer' });
    const revoke = dialog.getByLabel('Also revoke my API tokens');
    expect(await revoke.isChecked()).toBe(true);
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByText('Current password is required').waitFor();
    await dialog.getByText('Password is required', { exact: true }).waitFor();

    await dialog.getByLabel('Current password').fill('not-my-password');
    await dialog.getByLabel('New password').fill('Fresh-Secret-2');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Current password is incorrect' }).waitFor();
    expect(await bearer()).toBe(200);

    await dialog.getByLabel('Current password').fill('Secret-pass-1');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await snackbar(page, 'Password of Password Changer changed');
    // This session goes on; the token stopped working; the new password signs in.
    expect((await api.get<{ username: string }>('/user')).username).toBe(me.username);
    expect(await bearer()).toBe(401);
    await login(suite.server.url, me.username, 'Fresh-Secret-2');
    await page.context().close();
  });

  it('creates an API token shown once, which works as Bearer until it is deleted', async () => {
    const { api, page } = await ownerOnHistory('Token Keeper');
    await page
      .context()
      .grantPermissions(['clipboard-read', 'clipboard-write'], { origin: suite.server.url });
    const bearer = (token: string) =>
      fetch(`${suite.server.url}/api/user`, { headers: { authorization: `Bearer ${token}` } }).then(
        (r) => r.status,
      );

    await (await userMenuItem(page, 'API tokens')).click();
    const dialog = page.getByRole('dialog', { name: 'API tokens' });
    await dialog.getByText('You have no API tokens.').waitFor();
    await field(dialog, 'Name').fill('deploy bot');
    await dialog.getByRole('combobox', { name: 'Expires after' }).click();
    await page.getByRole('option', { name: '30 days' }).click();
    await dialog.getByRole('button', { name: 'Create token' }).click();

    // Shown once, copyable, and it authenticates.
    const shown = dialog.getByRole('textbox', { name: 'New token' });
    await shown.waitFor();
    const token = await shown.inputValue();
    expect(token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    await dialog.getByRole('button', { name: 'Copy token' }).click();
    await snackbar(page, 'The token has been copied to the clipboard.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    expect(await bearer(token)).toBe(200);
    const row = dialog.getByRole('row').filter({ hasText: 'deploy bot' });
    await row.waitFor();
    await page.mouse.move(0, 0);
    const listed = await api.get<{ name: string; expires: string }[]>('/user/tokens');
    expect(listed).toHaveLength(1);
    const days = (Date.parse(listed[0].expires) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    await shot(page, 'api-tokens-light-1280');

    // Reopening never shows the token again.
    await dialog.getByRole('button', { name: 'Close' }).click();
    await (await userMenuItem(page, 'API tokens')).click();
    await dialog.getByRole('row').filter({ hasText: 'deploy bot' }).waitFor();
    expect(await dialog.getByRole('textbox', { name: 'New token' }).count()).toBe(0);
    expect(await page.content()).not.toContain(token);

    // Delete asks first, then the token stops working.
    await dialog.getByRole('button', { name: 'Delete token deploy bot' }).click();
    await page.getByRole('dialog', { name: 'Delete token' }).getByRole('button', { name: 'Delete' }).click();
    await snackbar(page, 'Token deploy bot deleted');
    await dialog.getByText('You have no API tokens.').waitFor();
    expect(await bearer(token)).toBe(401);
    await page.context().close();
  });

  it('marks a token past its expiry Expired until its owner deletes it', async () => {
    const { api, page } = await ownerOnHistory('Token Expirer');
    const made = await api.post<{ token_id: string }>('/user/tokens', {
      name: 'old bot',
      expires_in_days: 7,
    });
    // Its week has passed: the expiry is moved back in the test server's database.
    const require = createRequire(join(root, 'packages/server/package.json'));
    const Database = require('better-sqlite3');
    const db = new Database(suite.server.dbFile);
    db.pragma('busy_timeout = 10000');
    db.prepare('UPDATE api_token SET expires = ? WHERE id = ?').run(
      '2020-01-01T00:00:00.000Z',
      made.token_id,
    );
    db.close();
    await (await userMenuItem(page, 'API tokens')).click();
    const dialog = page.getByRole('dialog', { name: 'API tokens' });
    const row = dialog.getByRole('row').filter({ hasText: 'old bot' });
    await row.getByText('Expired', { exact: true }).waitFor();
    await page.mouse.move(0, 0);
    await shot(page, 'api-tokens-expired-light-1280');
    await dialog.getByRole('button', { name: 'Delete token old bot' }).click();
    await page.getByRole('dialog', { name: 'Delete token' }).getByRole('button', { name: 'Delete' }).click();
    await snackbar(page, 'Token old bot deleted');
    await dialog.getByText('You have no API tokens.').waitFor();
    await page.context().close();
  });
});

describe('team', () => {
  it('adds members, changes roles inline, and applies the leave rules', async () => {
    const project = await suite.admin.post<{ id: number }>('/projects', { name: 'Team project' });
    const owner = await createUser(suite.admin, { name: 'Olivia Owner' });
    const guest = await createUser(suite.admin, { name: 'Gus Guest' });
    const runner = await createUser(suite.admin, { name: 'Tara Runner' });
    await suite.admin.post(`/project/${project.id}/users`, { user_id: owner.id, role: 'owner' });
    await suite.admin.post(`/project/${project.id}/users`, { user_id: runner.id, role: 'task_runner' });
    const ownerApi = await login(suite.server.url, owner.username, owner.password);

    // An admin adds a member (the user list, GET /api/users, is for admins).
    const adminPage = await pageAs(suite.admin);
    await adminPage.goto(`/project/${project.id}/team`);
    await adminPage.getByRole('button', { name: 'Add member' }).click();
    const dialog = adminPage.getByRole('dialog', { name: 'Add member' });
    await dialog.getByRole('button', { name: 'Add' }).click();
    await dialog.getByText('User is required').waitFor();
    await dialog.getByRole('combobox', { name: 'User' }).click();
    await adminPage.getByRole('option', { name: new RegExp(guest.username) }).click();
    await dialog.getByRole('combobox', { name: 'Role' }).click();
    await adminPage.getByRole('option', { name: 'Guest' }).click();
    await dialog.getByRole('button', { name: 'Add' }).click();
    await snackbar(adminPage, 'Gus Guest added to the team');
    await adminPage.context().close();

    // The owner changes roles inline and cannot leave.
    const page = await pageAs(ownerApi);
    await page.goto(`/project/${project.id}/team`);
    await page.getByText('You can run any tasks').waitFor();
    expect(await page.getByRole('button', { name: 'Leave Project' }).isDisabled()).toBe(true);
    await page.getByRole('combobox', { name: 'Role of Tara Runner' }).click();
    await page.getByRole('option', { name: 'Manager' }).click();
    await snackbar(page, 'Tara Runner is now Manager');
    const members = await ownerApi.get<{ user_id: number; role: string }[]>(`/project/${project.id}/users`);
    expect(members.find((m) => m.user_id === runner.id)?.role).toBe('manager');
    expect(members.find((m) => m.user_id === guest.id)?.role).toBe('guest');
    await shot(page, 'team-light-1280');
    await page.context().close();

    // A manager runs tasks but cannot manage the team or see Settings.
    const managerPage = await pageAs(await login(suite.server.url, runner.username, runner.password));
    await managerPage.goto(`/project/${project.id}/team`);
    await managerPage.getByText('You can run any tasks').waitFor();
    expect(await managerPage.getByRole('button', { name: 'Add member' }).count()).toBe(0);
    expect(await managerPage.getByRole('combobox', { name: /Role of/ }).count()).toBe(0);
    await navigate(managerPage, `/project/${project.id}/history`);
    await managerPage.getByRole('tab', { name: 'Activity' }).waitFor();
    expect(await managerPage.getByRole('tab', { name: 'Settings' }).count()).toBe(0);
    await managerPage.context().close();

    // A guest has read-only access and may leave.
    const guestApi = await login(suite.server.url, guest.username, guest.password);
    const guestPage = await pageAs(guestApi);
    await guestPage.goto(`/project/${project.id}/team`);
    await guestPage.getByText('You have read-only access').waitFor();
    await guestPage.getByRole('button', { name: 'Leave Project' }).click();
    await guestPage
      .getByRole('dialog', { name: 'Leave Project' })
      .getByRole('button', { name: 'Leave Project' })
      .click();
    await guestPage.waitForURL('**/project/new');
    expect(await guestApi.get<unknown[]>('/projects')).toEqual([]);
    await guestPage.context().close();
  });
});

describe('live updates', () => {
  it('says on every page when /api/ws cannot be reached, and clears once it connects', async () => {
    const project = await suite.admin.post<{ id: number }>('/projects', { name: 'Live banner project' });
    const page = await pageAs(suite.admin);
    // A proxy that does not forward WebSocket upgrades: every socket fails until the test lets them through.
    await page.addInitScript(() => {
      const w = window as unknown as {
        WebSocket: unknown;
        failSockets: boolean;
        failedSockets: number;
        firstFailedAt?: number;
      };
      const Real = window.WebSocket;
      w.failSockets = true;
      w.failedSockets = 0;
      w.WebSocket = function FailingWebSocket(url: string | URL) {
        if (!w.failSockets) return new Real(url);
        w.failedSockets += 1;
        w.firstFailedAt ??= Date.now();
        const fake: Record<string, unknown> = { readyState: 3, close() {}, send() {} };
        setTimeout(() => {
          (fake.onerror as ((event: Event) => void) | undefined)?.(new Event('error'));
          // As a browser does for a connection that never opened: code 1006, no reason.
          (fake.onclose as ((event: CloseEvent) => void) | undefined)?.(
            new CloseEvent('close', { code: 1006, reason: '', wasClean: false }),
          );
        }, 10);
        return fake;
      };
    });
    // The page's clock is the test's, and stands still from before the document loads: however long the page takes
    // to load on a busy machine, the banner's 8 s pass only as the test moves the clock on, and then the banner's
    // delay and the reconnects' back-off pass at once.
    await page.clock.install();
    await page.clock.pauseAt(Date.now() + 60_000);
    await page.goto(`/project/${project.id}/history`);
    const banner = page.getByRole('status').filter({ hasText: 'Live updates are unavailable' });
    const failed = () => page.evaluate(() => (window as unknown as { failedSockets: number }).failedSockets);
    // The console needs its timers to load (its queries deliver their answers on one, and it waits a few hundred ms
    // of its time before the socket), so the clock moves on in small steps, looked at often, until the first socket
    // has failed. The banner's delay counts from that failure, whatever page time the load used.
    await expect
      .poll(
        async () => {
          await page.clock.runFor(20);
          return failed();
        },
        { interval: 5 },
      )
      .toBeGreaterThan(0);
    // Not before the banner's delay: a reconnect that succeeds within it says nothing.
    const sinceFailure = await page.evaluate(
      () => Date.now() - ((window as unknown as { firstFailedAt: number }).firstFailedAt ?? Number.NaN),
    );
    expect(sinceFailure).toBeGreaterThanOrEqual(0);
    expect(sinceFailure).toBeLessThan(1000);
    await page.clock.runFor(7000 - sinceFailure);
    expect(await banner.count()).toBe(0);
    await page.clock.resume();
    await page.clock.runFor(2000);
    await banner.waitFor();
    expect(await banner.textContent()).toContain('let it forward WebSocket upgrades for /api/ws');
    await shot(page, 'live-unavailable-light-1280');
    // The same banner on another page.
    await page.goto('/users');
    await expect.poll(failed).toBeGreaterThan(0);
    await page.clock.runFor(9000);
    await banner.waitFor();
    await page.evaluate(() => {
      (window as unknown as { failSockets: boolean }).failSockets = false;
    });
    // The next reconnect (at most 30 s away) opens a real socket.
    await page.clock.runFor(31_000);
    await banner.waitFor({ state: 'detached' });
    await page.context().close();
  });
});

describe('theme and languages', () => {
  it('switches dark, light and system (following prefers-color-scheme live)', async () => {
    const project = await suite.admin.post<{ id: number }>('/projects', { name: 'Theme project' });
    const page = await pageAs(suite.admin, { colorScheme: 'light' });
    await page.goto(`/project/${project.id}/history`);
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = await background();
    await page.getByRole('switch', { name: 'Dark mode' }).check();
    const dark = await background();
    expect(dark).not.toBe(light);
    expect(await page.evaluate(() => localStorage.getItem('darkMode'))).toBe('dark');
    await page.getByRole('switch', { name: 'Dark mode' }).uncheck();
    expect(await background()).toBe(light);
    await page.getByRole('button', { name: 'Theme' }).click();
    await page.getByRole('menuitem', { name: 'System' }).click();
    expect(await page.evaluate(() => localStorage.getItem('darkMode'))).toBe('system');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(background).toBe(dark);
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(background).toBe(light);
    await page.reload();
    await page.getByRole('switch', { name: 'Dark mode' }).waitFor();
    expect(await background()).toBe(light);
    await page.context().close();
  });

  it('switches each of the 12 languages from the language menu and remembers it', async () => {
    const project = await suite.admin.post<{ id: number }>('/projects', { name: 'Language project' });
    const page = await pageAs(suite.admin);
    await page.goto(`/project/${project.id}/history`);
    const expected: Record<string, [string, string]> = {
      Deutsch: ['de', 'Zeitplan'],
      Español: ['es', 'Programación'],
      Français: ['fr', 'Planification'],
      Italiano: ['it', 'Pianificazione'],
      Nederlands: ['nl', 'Planning'],
      Polski: ['pl', 'Harmonogram'],
      Português: ['pt', 'Agendamento'],
      'Português (Brasil)': ['pt-br', 'Agendamento'],
      Русский: ['ru', 'Расписание'],
      简体中文: ['zh-cn', '计划'],
      繁體中文: ['zh-tw', '排程'],
      English: ['en', 'Schedule'],
    };
    const nav = page.getByRole('navigation');
    for (const [name, [code, schedule]] of Object.entries(expected)) {
      await page.locator('[aria-haspopup="menu"]').nth(1).click();
      await page.getByRole('menuitem', { name, exact: true }).click();
      // The next round opens the menu again only once this one has closed (a click on a closing menu is lost).
      await page.getByRole('menu').waitFor({ state: 'hidden' });
      // pt and pt-br share the word: wait for the language itself, then for the string.
      await page.waitForFunction((c) => document.documentElement.lang === c, code);
      await nav.getByRole('link', { name: schedule, exact: true }).waitFor();
      expect(await page.evaluate(() => localStorage.getItem('lang'))).toBe(code);
    }
    await page.context().close();
  });
});
