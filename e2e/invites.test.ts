import { describe, expect, it } from 'vitest';
import { login } from './support/api';
import { PHONE, shot } from './support/browser';
import { useSharedServerAsAdmin } from './support/shared';
import { expectSnackbar } from './support/team';

const suite = useSharedServerAsAdmin();

describe('invites by e-mail', () => {
  it('invites an address without an account, says no e-mail went out, and the new account accepts it', async () => {
    const project = await suite.admin.post<{ id: number }>('/projects', { name: 'Invited project' });
    const page = await suite.pageAs(suite.admin);
    await page.goto(`/project/${project.id}/team`);
    await page.getByRole('button', { name: 'Invite by e-mail' }).click();
    const dialog = page.getByRole('dialog', { name: 'Invite by e-mail' });
    await dialog.getByText(/an address without one is sent the invite by e-mail/).waitFor();
    await dialog.getByRole('button', { name: 'Invite', exact: true }).click();
    await dialog.getByText('Email is required').waitFor();
    await dialog.getByRole('textbox', { name: 'Email' }).fill('newcomer@example.org');
    await dialog.getByRole('combobox', { name: 'Role' }).click();
    await page.getByRole('option', { name: 'Manager' }).click();
    await dialog.getByRole('button', { name: 'Invite', exact: true }).click();
    // The shared server sends no e-mail: the dialog says so, and that the invite waits for the address.
    const result = dialog.getByRole('status');
    await result.getByText(/^No e-mail was sent: this server has no e-mail set up/).waitFor();
    expect(await result.textContent()).toContain('The invite waits for newcomer@example.org');
    await shot(page, 'invite-not-mailed-light-1280');
    await dialog.getByRole('button', { name: 'Close' }).click();

    const invites = page.getByRole('table', { name: 'Invites' });
    const row = invites.getByRole('row').filter({ hasText: 'newcomer@example.org' });
    await row.getByText('(no account yet)').waitFor();
    expect(await row.textContent()).toContain('Manager');
    expect(await row.textContent()).toContain('Pending');
    await shot(page, 'team-invites-light-1280');
    await page.context().close();
    // On a phone the team page with its invites fits the width.
    const phone = await suite.pageAs(suite.admin, { viewport: PHONE });
    await phone.goto(`/project/${project.id}/team`);
    await phone.getByRole('table', { name: 'Invites' }).getByText('newcomer@example.org').waitFor();
    expect(
      await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(1);
    await shot(phone, 'team-invites-light-390');
    await phone.context().close();

    // An administrator creates the account with that address; at its first sign-in the invite is offered.
    await suite.admin.post('/users', {
      name: 'New Comer',
      username: 'newcomer',
      email: 'NewComer@example.org',
      password: 'Newcomer-pass-1',
    });
    const newcomer = await suite.pageAs(await login(suite.server.url, 'newcomer', 'Newcomer-pass-1'));
    await newcomer.goto('/');
    const offer = newcomer.getByRole('dialog', { name: 'Invitations' });
    await offer.getByText(/invited you to the project Invited project as Manager/).waitFor();
    await shot(newcomer, 'my-invites-light-1280');
    await offer.getByRole('button', { name: 'Accept' }).click();
    await expectSnackbar(newcomer, 'You joined Invited project');
    await newcomer.waitForURL(new RegExp(`/project/${project.id}/`));
    const team = await suite.admin.get<{ username: string; role: string }[]>(`/project/${project.id}/users`);
    expect(team).toContainEqual(expect.objectContaining({ username: 'newcomer', role: 'manager' }));
    // The offer closes once accepted (after its closing transition).
    await offer.waitFor({ state: 'detached' });
    await newcomer.context().close();
  });
});
