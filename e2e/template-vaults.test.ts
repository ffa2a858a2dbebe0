import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { login } from './support/api';
import { shot } from './support/browser';
import { useSharedServerAsAdmin } from './support/shared';
import { expectSnackbar, seedBashResources, seedTeam } from './support/team';

const suite = useSharedServerAsAdmin();

type Template = { id: number; vault_key_id: number | null; vaults: unknown[]; description: string };

const pick = async (page: Page, label: string, option: string) => {
  await page.getByRole('combobox', { name: label, exact: true }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
};

describe('template vaults', () => {
  it('keeps the vault name and script; only an administrator may set a script', async () => {
    const team = await seedTeam(suite.server.url, 'Vaulted project');
    const ids = await seedBashResources(team.admin, team.projectId);
    const base = `/project/${team.projectId}`;
    const vaultKey = await team.admin.post<{ id: number }>(`${base}/keys`, {
      name: 'Vault pass',
      type: 'login_password',
      login_password: { login: '', password: 'vault-s3cret' },
    });
    const scriptVault = {
      name: 'prod',
      type: 'script',
      vault_key_id: null,
      script: 'scripts/vault-client.py',
    };
    const scripted = await team.admin.post<Template>(`${base}/templates`, {
      name: 'Vaulted',
      app: 'ansible',
      playbook: 'site.yml',
      repository_id: ids.repoId,
      inventory_id: ids.inventoryId,
      environment_id: ids.envId,
      vaults: [scriptVault],
    });
    const read = (id: number) => team.admin.get<Template>(`${base}/templates/${id}`);

    // The administrator sees the script vault and renames it; the script stays.
    const page = await suite.pageAs(suite.admin);
    await page.goto(`${base}/templates/${scripted.id}/edit`);
    await page.getByRole('textbox', { name: 'Script', exact: true }).waitFor();
    expect(await page.getByRole('textbox', { name: 'Script', exact: true }).inputValue()).toBe(
      'scripts/vault-client.py',
    );
    expect(await page.getByRole('textbox', { name: 'Vault name' }).inputValue()).toBe('prod');
    await page.getByRole('textbox', { name: 'Vault name' }).fill('staging');
    await shot(page, 'template-vault-script-light-1280');
    await page.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Template "Vaulted" saved');
    expect((await read(scripted.id)).vaults).toEqual([{ ...scriptVault, name: 'staging' }]);
    await page.context().close();

    // A manager may keep it (the field is locked, and says why) while changing the rest, or switch to a key.
    const manager = await suite.pageAs(
      await login(suite.server.url, team.manager.username, team.manager.password),
    );
    await manager.goto(`${base}/templates/${scripted.id}/edit`);
    const script = manager.getByRole('textbox', { name: 'Script', exact: true });
    await script.waitFor();
    expect(await script.isDisabled()).toBe(true);
    await manager.getByText(/^Only administrators can set or change a vault password script/).waitFor();
    await manager.getByRole('textbox', { name: 'Description' }).fill('Kept by the manager');
    await manager.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(manager, 'Template "Vaulted" saved');
    expect(await read(scripted.id)).toMatchObject({
      description: 'Kept by the manager',
      vaults: [{ ...scriptVault, name: 'staging' }],
    });
    await manager.goto(`${base}/templates/${scripted.id}/edit`);
    await pick(manager, 'Vault', 'Password from a key');
    await pick(manager, 'Vault password', 'Vault pass');
    await manager.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(manager, 'Template "Vaulted" saved');
    expect(await read(scripted.id)).toMatchObject({
      vault_key_id: vaultKey.id,
      vaults: [{ name: 'staging', type: 'password', vault_key_id: vaultKey.id, script: '' }],
    });
    // Now without a script, the manager cannot choose one.
    await manager.goto(`${base}/templates/${scripted.id}/edit`);
    await manager.getByRole('combobox', { name: 'Vault', exact: true }).click();
    const scriptOption = manager.getByRole('option', { name: 'Password script (administrators only)' });
    expect(await scriptOption.getAttribute('aria-disabled')).toBe('true');
    await manager.context().close();
  });
});
