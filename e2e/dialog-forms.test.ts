import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { shot } from './support/browser';
import { useSharedServerAsAdmin } from './support/shared';
import { expectSnackbar, seedBashResources } from './support/team';

const suite = useSharedServerAsAdmin();
let projectId: number;
let seeded: Awaited<ReturnType<typeof seedBashResources>>;

beforeAll(async () => {
  projectId = (await suite.admin.post<{ id: number }>('/projects', { name: 'Dialog forms' })).id;
  seeded = await seedBashResources(suite.admin, projectId);
});

const dialog = (page: Page) => page.getByRole('dialog');

async function choose(page: Page, label: string, option: string) {
  await dialog(page).getByRole('combobox', { name: label }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

describe('a select of objects in a dialog', () => {
  it('saves the picked key as its id, shows it again on edit, and saves None as no key', async () => {
    const sudo = await suite.admin.post<{ id: number }>(`/project/${projectId}/keys`, {
      name: 'Sudo password',
      type: 'login_password',
      login_password: { login: 'root', password: 'sudo-pass' },
    });
    const hosts = await suite.admin.post<{ id: number }>(`/project/${projectId}/inventory`, {
      name: 'Sudo hosts',
      type: 'static',
      inventory: '[web]\nweb1.example.com\n',
      ssh_key_id: seeded.keyId,
    });
    const becomeKey = async () =>
      (await suite.admin.get<{ become_key_id: number | null }>(`/project/${projectId}/inventory/${hosts.id}`))
        .become_key_id;
    const sudoField = 'Sudo credentials (optional)';
    const page = await suite.pageAs(suite.admin);
    await page.goto(`/project/${projectId}/inventory`);

    await page.getByRole('button', { name: 'Edit Sudo hosts' }).click();
    await choose(page, sudoField, 'Sudo password');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Inventory Sudo hosts saved');
    expect(await becomeKey()).toBe(sudo.id);

    await page.getByRole('button', { name: 'Edit Sudo hosts' }).click();
    await expect
      .poll(() => dialog(page).getByRole('combobox', { name: sudoField }).textContent())
      .toBe('Sudo password');
    await shot(page, 'inventory-dialog-sudo-key');
    // The none row, not the project's own key named None.
    await dialog(page).getByRole('combobox', { name: sudoField }).click();
    await page.locator('[role=option][data-value=""]').click();
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Inventory Sudo hosts saved');
    expect(await becomeKey()).toBeNull();
    await page.context().close();
  });
});

describe('integration rule dialogs', () => {
  it('say a key that is too long, clear it once fixed, and keep the hidden body format of a header matcher', async () => {
    const template = await suite.admin.post<{ id: number }>(`/project/${projectId}/templates`, {
      name: 'Hooked',
      app: 'bash',
      playbook: 'run.sh',
      repository_id: seeded.repoId,
      environment_id: seeded.envId,
    });
    const hook = await suite.admin.post<{ id: number }>(`/project/${projectId}/integrations`, {
      name: 'Rule hook',
      template_id: template.id,
    });
    const matchers = () =>
      suite.admin.get<{ name: string; match_type: string; body_data_type: string; key: string }[]>(
        `/project/${projectId}/integrations/${hook.id}/matchers`,
      );
    const page = await suite.pageAs(suite.admin);
    await page.goto(`/project/${projectId}/integration/${hook.id}`);
    await page.getByRole('button', { name: 'New Matcher' }).click();
    await dialog(page).getByRole('textbox', { name: 'Name', exact: true }).fill('Push event');
    await choose(page, 'Match source', 'Header');
    await dialog(page).getByRole('combobox', { name: 'Body data format' }).waitFor({ state: 'detached' });
    await dialog(page).getByRole('textbox', { name: 'Key', exact: true }).fill('X'.repeat(256));
    await dialog(page).getByRole('textbox', { name: 'Value', exact: true }).fill('push');
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    const tooLong = dialog(page).getByText('Key must be at most 255 characters', { exact: true });
    await tooLong.waitFor();
    await shot(page, 'matcher-dialog-too-long');
    expect(await matchers()).toEqual([]);

    await dialog(page).getByRole('textbox', { name: 'Key', exact: true }).fill('X-Event');
    await tooLong.waitFor({ state: 'detached' });
    await dialog(page).getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Matcher Push event saved');
    expect(await matchers()).toMatchObject([
      { name: 'Push event', match_type: 'header', body_data_type: 'json', key: 'X-Event' },
    ]);
    await page.context().close();
  });
});

describe('motion', () => {
  it('opens a dialog without animation for a reader whose system asks for reduced motion, animated otherwise', async () => {
    const fadeOf = async (reducedMotion: 'reduce' | 'no-preference') => {
      const page = await suite.pageAs(suite.admin, { reducedMotion });
      await page.goto(`/project/${projectId}/keys`);
      await page.getByRole('button', { name: 'New key' }).click();
      await dialog(page).waitFor();
      // The fade of the dialog and its backdrop: how long their opacity takes to change.
      const durations = await page
        .locator('.MuiDialog-container, .MuiBackdrop-root')
        .evaluateAll((els) => els.map((el) => getComputedStyle(el).transitionDuration));
      await page.context().close();
      return durations;
    };
    const reduced = await fadeOf('reduce');
    expect(reduced.length).toBeGreaterThan(0);
    expect(reduced.every((d) => d.split(',').every((part) => Number.parseFloat(part) === 0))).toBe(true);
    const animated = await fadeOf('no-preference');
    expect(animated.some((d) => d.split(',').some((part) => Number.parseFloat(part) > 0))).toBe(true);
  });
});
