import { describe, expect, it } from 'vitest';
import { useSharedServerAsAdmin } from './support/shared';
import { expectSnackbar } from './support/team';

const suite = useSharedServerAsAdmin();

describe('alert settings of a project', () => {
  it('say that no channel is configured, and send a test alert once alerts are on', async () => {
    const admin = suite.admin;
    const project = await admin.post<{ id: number }>('/projects', { name: 'Alerting project' });
    // The shared server configures no alert channel.
    expect((await admin.get<{ alert_channels: string[] }>('/info')).alert_channels).toEqual([]);
    const page = await suite.pageAs(admin);
    await page.goto(`/project/${project.id}/settings`);
    await page
      .locator('[data-alert-channels]')
      .getByText(/^No alert channel is configured on this server/)
      .waitFor();
    const test = page.getByRole('button', { name: 'Send test alert' });
    expect(await test.isDisabled()).toBe(true);
    await page.getByLabel('Send alerts about failed tasks').check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => test.isDisabled()).toBe(false);
    await test.click();
    await expectSnackbar(page, 'Test alert sent through the configured channels');
    // At once again: the server holds it back, and the console says why.
    await test.click();
    await page.getByText(/^A test alert was sent less than 30 seconds ago; try again in \d+ s$/).waitFor();
    await page.context().close();
  });
});
