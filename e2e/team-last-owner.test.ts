import { describe, expect, it } from 'vitest';
import { createUser } from './support/api';
import { useSharedServerAsAdmin } from './support/shared';

const suite = useSharedServerAsAdmin();

describe('team page', () => {
  it("disables the last owner's remove button and says why", async () => {
    const admin = suite.admin;
    const projectId = (await admin.post<{ id: number }>('/projects', { name: 'One owner' })).id;
    const member = await createUser(admin, { name: 'Mo Member' });
    await admin.post(`/project/${projectId}/users`, { user_id: member.id, role: 'manager' });
    const page = await suite.pageAs(admin);
    await page.goto(`/project/${projectId}/team`);
    const ownerRemove = page.getByRole('button', { name: /^Remove Ada Admin/ });
    await ownerRemove.waitFor();
    expect(await ownerRemove.isDisabled()).toBe(true);
    await ownerRemove.locator('xpath=..').hover();
    await page.getByRole('tooltip').getByText('The last owner cannot be removed').waitFor();
    expect(await page.getByRole('button', { name: 'Remove Mo Member' }).isDisabled()).toBe(false);
    await page.context().close();
  });
});
