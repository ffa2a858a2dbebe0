import { describe, expect, it } from 'vitest';
import { createUser, login } from './support/api';
import { pageOverflow, screenVariants, shot, userMenuItem } from './support/browser';
import { useSharedServerAsAdmin } from './support/shared';

const suite = useSharedServerAsAdmin();

describe('API token scopes', () => {
  it('makes a token limited to chosen scopes and projects, and lists what each token reaches', async () => {
    const me = await createUser(suite.admin, { name: 'Scope Chooser' });
    const ids: Record<string, number> = {};
    for (const name of ['Scoped Alpha', 'Scoped Beta']) {
      ids[name] = (await suite.admin.post<{ id: number }>('/projects', { name })).id;
      await suite.admin.post(`/project/${ids[name]}/users`, { user_id: me.id, role: 'owner' });
    }
    const api = await login(suite.server.url, me.username, me.password);
    const page = await suite.pageAs(api);
    await page.goto(`/project/${ids['Scoped Alpha']}/history`);
    const asToken = (token: string, method: string, path: string) =>
      fetch(`${suite.server.url}/api${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(method === 'GET' ? {} : { body: JSON.stringify({ title: 'From a token' }) }),
      }).then((r) => r.status);

    await (await userMenuItem(page, 'API tokens')).click();
    const dialog = page.getByRole('dialog', { name: 'API tokens' });
    await dialog.getByText('You have no API tokens.').waitFor();
    // Every scope and every project by default; the admin scope is for administrators only.
    for (const scope of ['Read', 'Run', 'Write'])
      expect(await dialog.getByRole('checkbox', { name: scope, exact: true }).isChecked()).toBe(true);
    expect(await dialog.getByRole('checkbox', { name: 'Admin', exact: true }).count()).toBe(0);
    expect(await dialog.getByRole('checkbox', { name: 'All my projects' }).isChecked()).toBe(true);

    await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill('reader');
    for (const scope of ['Read', 'Run', 'Write'])
      await dialog.getByRole('checkbox', { name: scope, exact: true }).uncheck();
    await dialog.getByRole('checkbox', { name: 'All my projects' }).uncheck();
    await dialog.getByRole('button', { name: 'Create token' }).click();
    await dialog.getByText('Choose at least one thing the token may do').waitFor();
    await dialog.getByRole('checkbox', { name: 'Read', exact: true }).check();
    await dialog.getByRole('button', { name: 'Create token' }).click();
    await dialog.getByText('Choose at least one project').waitFor();
    await dialog.getByRole('combobox', { name: 'Only these projects' }).click();
    await page.getByRole('option', { name: 'Scoped Alpha' }).click();
    await dialog.getByRole('button', { name: 'Create token' }).click();

    const shown = dialog.getByRole('textbox', { name: 'New token' });
    await shown.waitFor();
    const token = await shown.inputValue();
    const row = dialog.getByRole('row').filter({ hasText: 'reader' });
    await row.getByText('Read', { exact: true }).waitFor();
    await row.getByText('Scoped Alpha').waitFor();
    expect(await row.getByText('Run', { exact: true }).count()).toBe(0);
    const listed =
      await api.get<{ name: string; scopes: string[]; project_ids: number[] | null }[]>('/user/tokens');
    expect(listed).toEqual([
      expect.objectContaining({ name: 'reader', scopes: ['read'], project_ids: [ids['Scoped Alpha']] }),
    ]);
    // The token reads its project, writes nothing and does not see the other project.
    expect(await asToken(token, 'GET', `/project/${ids['Scoped Alpha']}/templates`)).toBe(200);
    expect(await asToken(token, 'POST', `/project/${ids['Scoped Alpha']}/views`)).toBe(403);
    expect(await asToken(token, 'GET', `/project/${ids['Scoped Beta']}`)).toBe(404);

    // A token made with the defaults has the owner's full rights.
    await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill('everything');
    await dialog.getByRole('button', { name: 'Create token' }).click();
    await dialog.getByRole('row').filter({ hasText: 'everything' }).getByText('Full rights').waitFor();
    const full = await shown.inputValue();
    expect(full).not.toBe(token);
    expect(await asToken(full, 'POST', `/project/${ids['Scoped Beta']}/views`)).toBe(201);
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => dialog.count()).toBe(0);
    await page.context().close();
  });

  it('shows the scopes and projects of the token dialog, light and dark, at desktop and phone width', async () => {
    const me = await createUser(suite.admin, { name: 'Deploy Bot Owner' });
    for (const name of ['Web fleet', 'Data fleet']) {
      const { id } = await suite.admin.post<{ id: number }>('/projects', { name });
      await suite.admin.post(`/project/${id}/users`, { user_id: me.id, role: 'owner' });
    }
    const api = await login(suite.server.url, me.username, me.password);
    for (const { scheme, viewport, size } of screenVariants()) {
      const page = await suite.pageAs(api, { colorScheme: scheme, viewport });
      await page.addInitScript((dark) => localStorage.setItem('darkMode', dark), String(scheme === 'dark'));
      await page.goto('/');
      if (size === '390') await page.getByRole('button', { name: 'Open menu' }).click();
      await (await userMenuItem(page, 'API tokens')).click();
      const dialog = page.getByRole('dialog', { name: 'API tokens' });
      await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill(`deploy bot ${scheme} ${size}`);
      await dialog.getByRole('checkbox', { name: 'Write', exact: true }).uncheck();
      await dialog.getByRole('checkbox', { name: 'All my projects' }).uncheck();
      await dialog.getByRole('combobox', { name: 'Only these projects' }).click();
      await page.getByRole('option', { name: 'Web fleet' }).click();
      // Closes the project list by clicking beside it, so the form shows what was chosen.
      await dialog.getByText('What the token may do').click();
      await page.getByRole('listbox').waitFor({ state: 'detached' });
      await page.mouse.move(0, 0);
      await shot(page, `api-token-form-${scheme}-${size}`);
      await dialog.getByRole('button', { name: 'Create token' }).click();
      await dialog.getByRole('textbox', { name: 'New token' }).waitFor();
      const row = dialog.getByRole('row').filter({ hasText: `deploy bot ${scheme} ${size}` });
      await row.getByText('Web fleet').waitFor();
      await row.getByText('Run', { exact: true }).waitFor();
      expect(await row.getByText('Write', { exact: true }).count()).toBe(0);
      // On a phone the list is below the form: the new token's row is shown.
      await row.scrollIntoViewIfNeeded();
      await page.mouse.move(0, 0);
      expect(await pageOverflow(page)).toBeLessThanOrEqual(1);
      await shot(page, `api-token-scopes-${scheme}-${size}`);
      await page.context().close();
    }
  });
});
