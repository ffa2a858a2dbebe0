import { describe, it } from 'vitest';
import { useSharedServerAsAdmin } from './support/shared';

const suite = useSharedServerAsAdmin();

describe('pages with nothing to show yet', () => {
  it('lists the projects in the drawer of the new-project page rather than leaving it empty', async () => {
    const admin = suite.admin;
    await admin.post('/projects', { name: 'Drawer listed project' });
    const page = await suite.pageAs(admin);
    await page.goto('/project/new');
    const nav = page.getByRole('navigation', { name: 'Select project' });
    await nav.getByRole('link', { name: 'Drawer listed project' }).first().waitFor();
    await page.context().close();
  });
});
