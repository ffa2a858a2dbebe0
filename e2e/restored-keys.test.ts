import { beforeAll, describe, expect, it } from 'vitest';
import { createUser, login } from './support/api';
import { useSharedServerAsAdmin } from './support/shared';

const suite = useSharedServerAsAdmin();
let restoredId: number;
let originalId: number;

beforeAll(async () => {
  const admin = suite.admin;
  originalId = (await admin.post<{ id: number }>('/projects', { name: 'Keys to back up' })).id;
  await admin.post(`/project/${originalId}/keys`, {
    name: 'Deploy login',
    type: 'login_password',
    login_password: { login: 'deploy', password: 'deploy-pass-1' },
  });
  const backup = await admin.get<Record<string, unknown>>(`/project/${originalId}/backup`);
  restoredId = (await admin.post<{ id: number }>('/projects/restore', backup)).id;
});

describe('keys restored from a backup', () => {
  it('are marked as having no secret, and their dialog asks for one', async () => {
    const page = await suite.pageAs(suite.admin);
    await page.goto(`/project/${restoredId}/keys`);
    await page.locator('[data-keys-without-secret]').waitFor();
    const row = page.getByRole('row').filter({ hasText: 'Deploy login' });
    await row.getByText('No secret stored', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Edit Deploy login' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('No secret stored — enter one').waitFor();
    expect(await dialog.getByText('Stored — leave empty to keep').count()).toBe(0);
    // The secret's source reads "Stored in Signalbox", not a blank select.
    expect(await dialog.getByRole('combobox', { name: 'Secret' }).textContent()).toBe(
      'Stored in Signalbox (encrypted)',
    );
    await page.keyboard.press('Escape');

    // The original key has its secret: no mark, and its dialog keeps the stored one.
    await page.goto(`/project/${originalId}/keys`);
    const original = page.getByRole('row').filter({ hasText: 'Deploy login' });
    await original.waitFor();
    expect(await original.getByText('No secret stored', { exact: true }).count()).toBe(0);
    expect(await page.locator('[data-keys-without-secret]').count()).toBe(0);
    await original.getByRole('button', { name: 'Edit Deploy login' }).click();
    await page.getByRole('dialog').getByText('Stored — leave empty to keep').first().waitFor();
    await page.context().close();
  });

  it('open read-only for a guest under the title Key', async () => {
    const guest = await createUser(suite.admin, { name: 'Key Guest' });
    await suite.admin.post(`/project/${originalId}/users`, { user_id: guest.id, role: 'guest' });
    const page = await suite.pageAs(await login(suite.server.url, guest.username, guest.password));
    await page.goto(`/project/${originalId}/keys`);
    await page.getByRole('button', { name: 'View Deploy login' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('heading', { name: 'Key', exact: true }).waitFor();
    expect(await dialog.getByText('Edit Key').count()).toBe(0);
    await page.context().close();
  });
});
