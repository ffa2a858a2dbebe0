import { describe, expect, it } from 'vitest';
import { useSharedServerAsAdmin } from './support/shared';

const suite = useSharedServerAsAdmin();
const { pageAs } = suite;

type Project = { id: number; name: string; task_retention_days: number; max_parallel_tasks: number };

describe('task retention on the project settings page', () => {
  it('edits "Keep tasks for (days)" with the contract\'s validation; the new-project form has no such field', async () => {
    const project = await suite.admin.post<Project>('/projects', {
      name: 'Retention Demo',
      max_parallel_tasks: 2,
    });
    const page = await pageAs(suite.admin);
    await page.goto(`/project/${project.id}/settings`);
    const days = page.getByLabel('Keep tasks for (days)');
    await days.waitFor();
    expect(await days.inputValue()).toBe('0');
    // The help names what 0 means on this server (SIGNALBOX_TASK_RETENTION_DAYS=90).
    await page.getByText('0 uses the server default. Server default: 90 days.').waitFor();

    for (const [value, message] of [
      ['-1', 'Task retention days must be 0 or greater'],
      ['1.5', 'Task retention days must be an integer'],
      ['36501', 'Task retention days must be at most 36500'],
    ] as const) {
      await days.fill(value);
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText(message).waitFor();
      expect((await suite.admin.get<Project>(`/project/${project.id}`)).task_retention_days).toBe(0);
    }

    await days.fill('14');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#notistack-snackbar').filter({ hasText: 'Project Retention Demo saved' }).waitFor();
    expect(await suite.admin.get<Project>(`/project/${project.id}`)).toMatchObject({
      name: 'Retention Demo',
      task_retention_days: 14,
      max_parallel_tasks: 2,
    });
    await page.reload();
    await days.waitFor();
    expect(await days.inputValue()).toBe('14');

    await page.goto('/project/new');
    await page.getByLabel('Max parallel tasks').waitFor();
    expect(await page.getByLabel('Keep tasks for (days)').count()).toBe(0);
    await page.context().close();
  });

  it('shows the field in the browser language', async () => {
    const project = await suite.admin.post<Project>('/projects', { name: 'Aufbewahrung' });
    const page = await pageAs(suite.admin, { locale: 'de-DE' });
    await page.goto(`/project/${project.id}/settings`);
    await page.getByLabel('Aufgaben aufbewahren (Tage)').waitFor();
    await page.getByText('0 verwendet die Server-Voreinstellung').waitFor();
    await page.context().close();
  });
});
