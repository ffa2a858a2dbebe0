import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, navigate, settled } from './support/browser';
import { ADMIN } from './support/server';
import { sharedServer } from './support/shared';
import type { SharedServer } from './support/shared-server';
import { contextAs, expectSnackbar, localBashRepo, seedTeam, shotEach, type Team } from './support/team';

let server: SharedServer;
let browser: Browser;
let team: Team;
const admin = { login: ADMIN.login, password: ADMIN.password };

beforeAll(async () => {
  server = sharedServer();
  browser = await launch();
  team = await seedTeam(server.url, 'Resources project');
});
afterAll(async () => {
  await browser?.close();
});

const dialog = (page: Page) => page.getByRole('dialog');

async function choose(page: Page, label: string, option: string) {
  await dialog(page).getByLabel(label, { exact: false }).first().click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

describe('key store', () => {
  it('creates, edits with the override lock, validates and deletes a key', async () => {
    const { context, page } = await contextAs(browser, server.url, team.manager);
    await page.goto(`/project/${team.projectId}/keys`);
    await page.getByRole('button', { name: 'New Key' }).click();
    // Validation: name, and the private key of a new ssh key.
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await dialog(page).getByText('Name is required', { exact: true }).waitFor();
    await dialog(page).getByText('Private key is required').waitFor();
    await dialog(page).getByRole('textbox', { name: 'Name', exact: true }).fill('Deploy key');
    await choose(page, 'Type', 'Login with password');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await dialog(page).getByText('Password is required').waitFor();
    await dialog(page).getByLabel('Login (optional)').fill('deploy');
    await dialog(page).locator('input[name="login_password.password"]').fill('s3cret');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Key Deploy key created');
    await page.getByRole('cell', { name: 'Deploy key', exact: true }).waitFor();

    // Existing key: the stored secret shows as kept; Replace asks for a new one.
    await page.getByRole('button', { name: 'Edit Deploy key' }).click();
    const password = dialog(page).locator('input[name="login_password.password"]');
    expect(await password.inputValue()).toBe('');
    await dialog(page).getByText('Stored — leave empty to keep').first().waitFor();
    await dialog(page)
      .getByRole('button', { name: /^Replace/ })
      .first()
      .click();
    await dialog(page).getByRole('textbox', { name: 'Name', exact: true }).fill('Deploy key 2');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await dialog(page).getByText('Password is required').waitFor();
    await password.fill('n3w-s3cret');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Key Deploy key 2 saved');
    const keys = await team.admin.get<{ name: string }[]>(`/project/${team.projectId}/keys`);
    expect(keys.map((k) => k.name)).toContain('Deploy key 2');

    await page.getByRole('button', { name: 'Delete Deploy key 2' }).click();
    await page.getByRole('dialog').getByText('Delete "Deploy key 2"? This cannot be undone.').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expectSnackbar(page, 'Key Deploy key 2 deleted');
    await context.close();
  });
});

describe('repositories and the refs dialog', () => {
  it('rewrites the URL prefix by type chip, says Incorrect URL, disables the branch for local, lists refs', async () => {
    const key = await team.admin.post<{ id: number }>(`/project/${team.projectId}/keys`, {
      name: 'Repo key',
      type: 'none',
    });
    const { context, page } = await contextAs(browser, server.url, team.manager);
    await page.goto(`/project/${team.projectId}/repositories`);
    await page.getByRole('button', { name: 'New Repository' }).click();
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await dialog(page).getByText('Name is required', { exact: true }).waitFor();
    await dialog(page).getByText('URL is required').waitFor();
    await dialog(page).getByRole('textbox', { name: 'Name', exact: true }).fill('App repo');
    const url = dialog(page).getByRole('textbox', { name: 'URL' });
    await url.fill('ftp://example.com/repo.git');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await dialog(page).getByText('Incorrect URL').waitFor();
    await dialog(page).getByRole('button', { name: 'HTTPS' }).click();
    expect(await url.inputValue()).toBe('https://example.com/repo.git');
    await dialog(page).getByRole('button', { name: 'Local' }).click();
    expect(await url.inputValue()).toBe('/example.com/repo.git');
    expect(await dialog(page).getByLabel('Branch').isDisabled()).toBe(true);
    await url.fill(localBashRepo());
    await choose(page, 'Access key', 'Repo key');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Repository App repo created');

    await page.getByRole('button', { name: 'Edit App repo' }).click();
    await dialog(page).getByRole('button', { name: 'SSH' }).click();
    expect(await dialog(page).getByLabel('Branch').isDisabled()).toBe(false);
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await dialog(page).getByText('Branch is required').waitFor();
    await dialog(page).getByLabel('Branch').fill('main');
    await dialog(page).getByRole('textbox', { name: 'Name', exact: true }).fill('App repo (ssh)');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Repository App repo (ssh) saved');

    // In use by a template: the refs dialog lists it instead of the confirmation.
    const repos = await team.admin.get<{ id: number; name: string }[]>(
      `/project/${team.projectId}/repositories`,
    );
    const repo = repos.find((r) => r.name === 'App repo (ssh)')!;
    const env = await team.admin.post<{ id: number }>(`/project/${team.projectId}/environment`, {
      name: 'Refs env',
    });
    await team.admin.post(`/project/${team.projectId}/templates`, {
      name: 'Uses the repo',
      app: 'bash',
      playbook: 'run.sh',
      repository_id: repo.id,
      environment_id: env.id,
    });
    await page.getByRole('button', { name: 'Delete App repo (ssh)' }).click();
    await page.getByText("Can't delete the repository because it is used by the resources below").waitFor();
    await page.getByRole('dialog').getByRole('link', { name: 'Uses the repo' }).waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    expect(key.id).toBeGreaterThan(0);
    await context.close();
  });
});

describe('inventory', () => {
  it('offers generic/terraform/tofu/terragrunt, edits INI and YAML, needs a path for files, creates workspaces on the None key', async () => {
    await team.admin.post(`/project/${team.projectId}/keys`, { name: 'Inv key', type: 'none' });
    const { context, page } = await contextAs(browser, server.url, team.manager);
    await page.goto(`/project/${team.projectId}/inventory`);
    await page.getByRole('button', { name: 'New Inventory' }).click();
    const menu = page.getByRole('menu');
    for (const item of [
      'Ansible inventory',
      'Terraform workspace',
      'OpenTofu workspace',
      'Terragrunt workspace',
    ])
      await menu.getByRole('menuitem', { name: item }).waitFor();
    await menu.getByRole('menuitem', { name: 'Ansible inventory' }).click();
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await dialog(page).getByText('Name is required', { exact: true }).waitFor();
    await dialog(page).getByText('User credentials is required').waitFor();
    await dialog(page).getByRole('textbox', { name: 'Name', exact: true }).fill('Web hosts');
    await choose(page, 'User credentials', 'Inv key');
    await dialog(page).locator('[data-testid=inventory-editor] .cm-content').click();
    await page.keyboard.type('[web]\nweb1.example.com\n');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Inventory Web hosts created');
    const list = await team.admin.get<{ name: string; inventory: string }[]>(
      `/project/${team.projectId}/inventory`,
    );
    expect(list.find((i) => i.name === 'Web hosts')?.inventory).toContain('web1.example.com');

    await page.getByRole('button', { name: 'Edit Web hosts' }).click();
    await choose(page, 'Type', 'File');
    await dialog(page).getByRole('textbox', { name: 'Path' }).fill('');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await dialog(page).getByText('Path is required').waitFor();
    await choose(page, 'Type', 'Static (YAML)');
    await dialog(page).getByText('Inventory (YAML)').waitFor();
    await dialog(page).getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: 'New Inventory' }).click();
    await page.getByRole('menuitem', { name: 'Terraform workspace' }).click();
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await dialog(page).getByText('Name is required', { exact: true }).waitFor();
    await dialog(page).getByText('Workspace name is required').waitFor();
    await dialog(page).getByLabel('Display name').fill('Staging');
    await dialog(page).getByLabel('Workspace name').fill('staging');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Inventory Staging created');
    const after = await team.admin.get<{ name: string; type: string; ssh_key_id: number }[]>(
      `/project/${team.projectId}/inventory`,
    );
    const keys = await team.admin.get<{ id: number; type: string }[]>(`/project/${team.projectId}/keys`);
    const staging = after.find((i) => i.name === 'Staging')!;
    expect(staging.type).toBe('terraform-workspace');
    expect(keys.find((k) => k.id === staging.ssh_key_id)?.type).toBe('none');

    await page.getByRole('button', { name: 'Delete Staging' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expectSnackbar(page, 'Inventory Staging deleted');
    await context.close();
  });
});

describe('environment', () => {
  it('edits JSON, toggles ANSIBLE_HOST_KEY_CHECKING, keeps secrets, shows invalid JSON in a red snackbar', async () => {
    const { context, page } = await contextAs(browser, server.url, team.manager);
    await page.goto(`/project/${team.projectId}/environment`);
    await page.getByRole('button', { name: 'New Environment' }).click();
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await dialog(page).getByText('Name is required', { exact: true }).waitFor();
    await dialog(page).getByRole('textbox', { name: 'Name', exact: true }).fill('Production');
    await dialog(page).getByLabel('Do not check SSH host keys (ANSIBLE_HOST_KEY_CHECKING=False)').check();
    await dialog(page).getByRole('button', { name: 'Add secret' }).click();
    // The secret's row: its fields side by side on one line, the longest type shown whole.
    await dialog(page).locator('[data-secret-row]').getByRole('combobox').click();
    await page.getByRole('option', { name: 'Environment variable', exact: true }).click();
    const layout = await dialog(page)
      .locator('[data-secret-row]')
      .evaluate((row) => {
        const fields = [...row.querySelectorAll('.MuiFormControl-root')].map(
          (f) => f.getBoundingClientRect().top,
        );
        const type = row.querySelector('[role=combobox]') as HTMLElement;
        return {
          tops: new Set(fields).size,
          text: type.textContent,
          cut: type.scrollWidth > type.clientWidth,
        };
      });
    expect(layout).toEqual({ tops: 1, text: 'Environment variable', cut: false });
    await dialog(page).locator('[data-secret-row]').getByRole('combobox').click();
    await page.getByRole('option', { name: 'Extra variable', exact: true }).click();
    await dialog(page).getByLabel('Secret name').fill('API_TOKEN');
    await dialog(page).getByLabel('Value').fill('tok-123');
    const extra = dialog(page).locator('[data-testid=extra-vars-editor] .cm-content');
    await extra.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('{"region": ');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Extra variables must be valid JSON');
    await extra.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('{"region": "eu"');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await page.getByText('Environment Production created').waitFor();
    const envs = await team.admin.get<
      { name: string; json: string; env: string; secrets: { name: string }[] }[]
    >(`/project/${team.projectId}/environment`);
    const prod = envs.find((e) => e.name === 'Production')!;
    expect(JSON.parse(prod.json)).toEqual({ region: 'eu' });
    expect(JSON.parse(prod.env)).toEqual({ ANSIBLE_HOST_KEY_CHECKING: 'False' });
    expect(prod.secrets.map((s) => s.name)).toEqual(['API_TOKEN']);

    await page.getByRole('button', { name: 'Edit Production' }).click();
    expect(
      await dialog(page)
        .getByLabel('Do not check SSH host keys (ANSIBLE_HOST_KEY_CHECKING=False)')
        .isChecked(),
    ).toBe(true);
    await dialog(page).getByLabel('Do not check SSH host keys (ANSIBLE_HOST_KEY_CHECKING=False)').uncheck();
    await dialog(page).getByRole('textbox', { name: 'Name', exact: true }).fill('Production EU');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await page.getByText('Environment Production EU saved').waitFor();
    const saved = (
      await team.admin.get<{ name: string; env: string; secrets: unknown[] }[]>(
        `/project/${team.projectId}/environment`,
      )
    ).find((e) => e.name === 'Production EU')!;
    expect(JSON.parse(saved.env)).toEqual({});
    expect(saved.secrets).toHaveLength(1);

    await page.getByRole('button', { name: 'Delete Production EU' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Environment Production EU deleted').waitFor();
    await context.close();
  });
});

describe('permission gating', () => {
  it('shows New buttons to managers only; task runners and guests get read-only dialogs', async () => {
    for (const [user, canManage] of [
      [team.manager, true],
      [team.runner, false],
      [team.guest, false],
    ] as const) {
      const { context, page } = await contextAs(browser, server.url, user);
      for (const [path, heading, button] of [
        ['keys', 'Key Store', 'New Key'],
        ['repositories', 'Repositories', 'New Repository'],
        ['inventory', 'Inventory', 'New Inventory'],
        ['environment', 'Environment', 'New Environment'],
        ['schedule', 'Schedule', 'New Schedule'],
        ['templates', 'Task Templates', 'New Template'],
      ] as const) {
        await navigate(page, `/project/${team.projectId}/${path}`);
        await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
        await settled(page);
        expect(await page.getByRole('button', { name: button }).count(), `${user.name} ${path}`).toBe(
          canManage ? 1 : 0,
        );
      }
      await navigate(page, `/project/${team.projectId}/integrations`);
      await page.getByRole('heading', { level: 1, name: 'Integrations', exact: true }).waitFor();
      await settled(page);
      expect(await page.getByRole('button', { name: 'New Integration' }).count()).toBe(0);
      await context.close();
    }
  });
});

describe('resource pages on a phone', () => {
  it('fit 390 px without overflow (and are saved light/dark at 1280 and 390 px under npm run screenshots)', async () => {
    const pages = ['keys', 'repositories', 'inventory', 'environment'];
    await shotEach(
      browser,
      server.url,
      admin,
      pages.map((page) => [`/project/${team.projectId}/${page}`, page] as const),
    );
  });
});
