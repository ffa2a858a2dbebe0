import { generateKeyPairSync } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Api, createUser, type SeedUser } from './support/api';
import { DESKTOP, launch, navigate, PHONE, shot, userMenuItem, WAIT_MS } from './support/browser';
import { startServer, type TestServer } from './support/server';
import { contextAs, expectSnackbar, seedBashResources, seedTeam, shotAll, type Team } from './support/team';

// Remote runner management in the console: an admin registers a runner with the one-time token the Register dialog
// shows, then disables, edits and deletes it; the list refreshes itself when the runner comes online. A project
// owner has the project's Runners tab, a guest does not. Screens light and dark, 1280 and 390 px.
let server: TestServer;
let browser: Browser;
let team: Team;
let admin: Api;
let owner: SeedUser;

type RunnerRow = { id: number; name: string; tags: string[]; active: boolean; max_parallel_tasks: number };

beforeAll(async () => {
  server = await startServer();
  browser = await launch();
  team = await seedTeam(server.url, 'Edge fleet');
  admin = team.admin;
  owner = await createUser(admin, { name: 'Olga Owner' });
  await admin.post(`/project/${team.projectId}/users`, { user_id: owner.id, role: 'owner' });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Runner sockets the tests opened, closed at the end. */
const sockets: WebSocket[] = [];
afterAll(() => {
  for (const ws of sockets) ws.close();
});

/**
 * Registers a runner with a registration token as `signalbox runner register` does: POST /api/internal/runners
 * with a fresh X25519 public key; a second registration with the same token is refused. The runner's own token.
 */
async function register(token: string, name: string, tags: string[]): Promise<string> {
  const { publicKey } = generateKeyPairSync('x25519');
  const public_key = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const res = await fetch(`${server.url}/api/internal/runners`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ registration_token: token, public_key, name, tags, max_parallel_tasks: 2 }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { id: number; token: string };
  expect(body.token).toBeTruthy();
  const again = await fetch(`${server.url}/api/internal/runners`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ registration_token: token, public_key, name: `${name}-again` }),
  });
  expect(again.status).toBe(401);
  return body.token;
}

/** Connects a runner as `signalbox runner start` does: the runner socket, its hello, and the server's welcome. */
async function connect(
  runnerToken: string,
  version: string,
  sandbox: { mode: 'bwrap' | 'off' | 'refused'; reason?: string } = { mode: 'bwrap' },
) {
  const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}/api/internal/runners/ws`, {
    headers: { 'x-runner-token': runnerToken },
  });
  sockets.push(ws);
  const welcome = new Promise<void>((resolve, reject) => {
    ws.on('message', (data) => {
      if ((JSON.parse(String(data)) as { type: string }).type === 'welcome') resolve();
    });
    ws.on('error', reject);
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  await new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve());
    ws.on('error', reject);
  });
  ws.send(
    JSON.stringify({
      type: 'hello',
      version,
      started_at: new Date().toISOString(),
      max_parallel_tasks: 2,
      running: [],
      sandbox,
    }),
  );
  await welcome;
}

const runnerNamed = async (name: string, path = '/runners') =>
  (await admin.get<RunnerRow[]>(path)).find((r) => r.name === name);

/** The command block of the open Register dialog, and the token in it. */
async function registerDialog(page: Page) {
  await page.getByRole('button', { name: 'Register a runner' }).click();
  const dialog = page.getByRole('dialog', { name: 'Register a runner' });
  const commands = dialog.getByLabel('Commands');
  await commands.waitFor();
  const text = await commands.textContent();
  // In the environment, quoted when it starts with '-' (so that it never reads as an option).
  const token = /SIGNALBOX_RUNNER_REGISTRATION_TOKEN='?([A-Za-z0-9_-]+)'?/.exec(text ?? '')?.[1] ?? '';
  return { dialog, commands, text, token };
}

describe('remote runners in the console', () => {
  it('lets an admin register a runner with the token the dialog shows, then disable, edit and delete it', async () => {
    const { context, page } = await contextAs(
      browser,
      server.url,
      { login: 'admin', password: 'admin-Passw0rd' },
      {
        viewport: DESKTOP,
      },
    );
    await page.goto('/');
    await (await userMenuItem(page, 'Runners')).click();
    await page.waitForURL('**/runners');
    await page.getByText(/^No global runners/).waitFor();

    // The server's own task sandbox, above the list.
    await page.getByTestId('server-sandbox').getByText('Task sandbox of this server:').waitFor();
    const { dialog, commands, text: plain, token } = await registerDialog(page);
    const env = `SIGNALBOX_RUNNER_REGISTRATION_TOKEN=${token.startsWith('-') ? `'${token}'` : token}`;
    expect(plain).toBe(
      `${env} npx signalbox runner register --url ${server.url}\nnpx signalbox runner start`,
    );
    expect(token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    // Name and tags go into the command.
    await dialog.getByLabel('Name (optional)').fill('build-01');
    await dialog.getByLabel('Tags').fill('linux');
    await dialog.getByLabel('Tags').press('Enter');
    await dialog.getByLabel('Tags').fill('x86_64');
    await dialog.getByLabel('Tags').press('Enter');
    const text = `${env} npx signalbox runner register --url ${server.url} --name build-01 --tag linux --tag x86_64\nnpx signalbox runner start`;
    await expect.poll(() => commands.textContent()).toBe(text);
    await dialog.getByRole('button', { name: 'Container' }).click();
    await expect.poll(() => commands.textContent()).toContain('docker run -d --name signalbox-runner');
    await shot(page, 'runners-register-container-light-1280');
    await dialog.getByRole('button', { name: 'Checkout' }).click();
    await expect.poll(() => commands.textContent()).toBe(text);
    await dialog.getByText('works for one registration').waitFor();
    await dialog.getByRole('button', { name: 'Copy commands' }).click();
    await expectSnackbar(page, 'Commands copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(text);
    await shot(page, 'runners-register-light-1280');
    await dialog.getByRole('button', { name: 'Close' }).click();

    const runnerToken = await register(token, 'build-01', ['linux', 'x86_64']);

    // The list refreshes itself: the new runner shows, then its connection.
    const row = page.locator('tr[data-runner="build-01"]');
    await row.waitFor({ timeout: WAIT_MS });
    await row.getByText('Offline').waitFor();
    await row.getByText('never connected').waitFor();
    await connect(runnerToken, '1.4.0', { mode: 'off', reason: 'bubblewrap (bwrap) is not installed' });
    await row.getByText('Online').waitFor({ timeout: WAIT_MS });
    await row.getByText(/^last heartbeat (now|\d+ seconds? ago)$/).waitFor();
    await row.getByText('1.4.0').waitFor();
    await row.getByText('0 / 2 running').waitFor();
    expect(await row.locator('.MuiChip-label').allInnerTexts()).toEqual([
      'linux',
      'x86_64',
      'Sandbox off',
      'Online',
    ]);
    // The sandbox being off is a warning, its reason on hover.
    const sandboxChip = row.locator('[data-sandbox="off"]');
    expect(await sandboxChip.getAttribute('class')).toContain('MuiChip-colorWarning');
    await sandboxChip.hover();
    await page
      .getByRole('tooltip')
      .getByText(/bubblewrap \(bwrap\) is not installed/)
      .waitFor();
    await shot(page, 'runners-sandbox-off-light-1280');
    await page.mouse.move(0, 0);

    await page.getByRole('switch', { name: 'Runner build-01 enabled' }).click();
    await expectSnackbar(page, 'Runner build-01 disabled');
    expect((await runnerNamed('build-01'))?.active).toBe(false);

    await page.getByRole('button', { name: 'Edit runner build-01' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit runner' });
    await edit.getByLabel('Name').fill('build-02');
    await edit.getByLabel('Tags').fill('arm64');
    await edit.getByLabel('Tags').press('Enter');
    await edit.getByLabel('Max parallel tasks').fill('0');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.getByText('Max parallel tasks must be 1 or greater').waitFor();
    await shot(page, 'runners-edit-light-1280');
    await edit.getByLabel('Max parallel tasks').fill('4');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Runner build-02 saved');
    expect(await runnerNamed('build-02')).toMatchObject({
      tags: ['linux', 'x86_64', 'arm64'],
      max_parallel_tasks: 4,
      active: false,
    });
    await page.locator('tr[data-runner="build-02"]').getByText('0 / 4 running').waitFor();

    await page.getByRole('button', { name: 'Delete runner build-02' }).click();
    await page.getByRole('dialog', { name: 'Delete runner' }).getByRole('button', { name: 'Delete' }).click();
    await expectSnackbar(page, 'Runner build-02 deleted');
    await page.getByText(/^No global runners/).waitFor();
    expect(await admin.get<RunnerRow[]>('/runners')).toEqual([]);
    await context.close();
  });

  it("shows a project's owner the Runners tab with --project in the commands; a guest has no tab", async () => {
    const { context, page } = await contextAs(browser, server.url, owner, { viewport: DESKTOP });
    await page.goto(`/project/${team.projectId}/activity`);
    await page.getByRole('tab', { name: 'Runners' }).click();
    await page.waitForURL(`**/project/${team.projectId}/runners`);
    const { dialog, token } = await registerDialog(page);
    await dialog.getByText(`--project ${team.projectId}`).waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();
    await register(token, 'edge-01', ['edge']);
    await page.locator('tr[data-runner="edge-01"]').waitFor({ timeout: WAIT_MS });
    expect((await runnerNamed('edge-01', `/project/${team.projectId}/runners`))?.tags).toEqual(['edge']);
    // Global runners do not show here, nor does the project runner in the admin's global list.
    expect(await admin.get<RunnerRow[]>('/runners')).toEqual([]);
    await context.close();

    // The admin sees it with its project once project runners are shown, and may disable it from there.
    const adminPage = await contextAs(
      browser,
      server.url,
      { login: 'admin', password: 'admin-Passw0rd' },
      {
        viewport: DESKTOP,
      },
    );
    await adminPage.page.goto('/runners');
    await adminPage.page.getByText(/^No global runners/).waitFor();
    await adminPage.page.getByRole('switch', { name: 'Show project runners' }).click();
    const edge = adminPage.page.locator('tr[data-runner="edge-01"]');
    await edge.getByText('Edge fleet').waitFor();
    await adminPage.page.getByRole('switch', { name: 'Runner edge-01 enabled' }).click();
    await expectSnackbar(adminPage.page, 'Runner edge-01 disabled');
    expect((await runnerNamed('edge-01', `/project/${team.projectId}/runners`))?.active).toBe(false);
    await adminPage.context.close();

    const guest = await contextAs(browser, server.url, team.guest, { viewport: DESKTOP });
    await guest.page.goto(`/project/${team.projectId}/activity`);
    await guest.page.getByRole('tab', { name: 'Activity' }).waitFor();
    expect(await guest.page.getByRole('tab', { name: 'Runners' }).count()).toBe(0);
    await guest.page.goto(`/project/${team.projectId}/runners`);
    await guest.page.waitForURL(/\/activity$|\/history$/);
    expect(await guest.page.getByRole('button', { name: 'Register a runner' }).count()).toBe(0);
    await guest.context.close();
  });

  it("offers the runners' tags for an inventory's and a template's runner tag, and saves the one chosen", async () => {
    const base = `/project/${team.projectId}`;
    const res = await seedBashResources(admin, team.projectId);
    const template = await admin.post<{ id: number }>(`${base}/templates`, {
      name: 'Deploy edge',
      app: 'bash',
      playbook: 'run.sh',
      repository_id: res.repoId,
      environment_id: res.envId,
      inventory_id: res.inventoryId,
      runner_tag: 'edge',
    });
    const { context, page } = await contextAs(browser, server.url, owner, { viewport: DESKTOP });
    await page.goto(`${base}/inventory`);
    await page.getByRole('button', { name: 'Edit Seed hosts' }).click();
    const dialog = page.getByRole('dialog');
    const tag = dialog.getByRole('combobox', { name: 'Runner tag' });
    await dialog.getByText('Tasks then run only on a remote runner with this tag').waitFor();
    await tag.click();
    // edge-01 (this project's runner, registered above) carries "edge".
    await page.getByRole('option', { name: 'edge', exact: true }).click();
    await shot(page, 'runners-inventory-tag-light-1280');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Inventory Seed hosts saved');
    const inventories = await admin.get<{ id: number; runner_tag: string | null }[]>(`${base}/inventory`);
    expect(inventories.find((i) => i.id === res.inventoryId)?.runner_tag).toBe('edge');

    await navigate(page, `${base}/templates/${template.id}/edit`);
    const field = page.getByRole('combobox', { name: 'Runner tag' });
    await field.waitFor();
    expect(await field.inputValue()).toBe('edge');
    await field.fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(new RegExp(`/templates/${template.id}$`));
    expect(
      (await admin.get<{ runner_tag: string | null }>(`${base}/templates/${template.id}`)).runner_tag,
    ).toBeNull();
    await context.close();
  });

  it('fits a phone and both themes, with a runner online and one disabled', async () => {
    const tokens = [
      (await admin.post<{ token: string }>('/runners/registration-tokens')).token,
      (await admin.post<{ token: string }>('/runners/registration-tokens')).token,
    ];
    const linux = await register(tokens[0]!, 'linux-builder-01', ['linux', 'docker', 'x86_64']);
    await register(tokens[1]!, 'mac-signer', ['macos', 'arm64']);
    await connect(linux, '1.4.0');
    const mac = await runnerNamed('mac-signer');
    await admin.put(`/runners/${mac!.id}`, { active: false });
    const adminUser = { login: 'admin', password: 'admin-Passw0rd' };
    await shotAll(browser, server.url, adminUser, '/runners', 'runners');
    await shotAll(browser, server.url, owner, `/project/${team.projectId}/runners`, 'runners-project');

    // The phone shows cards (no table) and the register dialog fits.
    const { context, page } = await contextAs(browser, server.url, adminUser, {
      viewport: PHONE,
      colorScheme: 'dark',
    });
    await page.addInitScript(() => localStorage.setItem('darkMode', 'true'));
    await page.goto('/runners');
    await page.getByText('linux-builder-01').waitFor();
    expect(await page.locator('table').count()).toBe(0);
    await registerDialog(page);
    await shot(page, 'runners-register-dark-390');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await context.close();
  });
});
