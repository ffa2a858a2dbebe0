import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, PHONE, shot, takingScreenshots } from './support/browser';
import { waitForStatus } from './support/seed';
import { useSharedServerAsAdmin } from './support/shared';
import { expectSnackbar, localBashRepo, seedBashResources } from './support/team';

const suite = useSharedServerAsAdmin();
const STORED = 'Stored — leave empty to keep';
let projectId: number;
let templateId: number;
let alias: string;
let repoPath: string;

/** The script prints a digest of the secret, never the secret: the test compares digests. */
const digest = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 16);

beforeAll(async () => {
  const admin = suite.admin;
  projectId = (await admin.post<{ id: number }>('/projects', { name: 'Stored secrets' })).id;
  repoPath = localBashRepo(
    'printf "token-digest:%s\\n" "$(printf %s "$STORED_TOKEN" | sha256sum | cut -c1-16)"\n',
  );
  const seeded = await seedBashResources(admin, projectId, repoPath);
  await admin.put(`/project/${projectId}/environment/${seeded.envId}`, {
    id: seeded.envId,
    name: 'Seed env',
    json: '{}',
    env: '{}',
    secrets: [{ type: 'env', name: 'STORED_TOKEN', secret: 'first-value', operation: 'create' }],
  });
  templateId = (
    await admin.post<{ id: number }>(`/project/${projectId}/templates`, {
      name: 'Print digest',
      app: 'bash',
      playbook: 'run.sh',
      repository_id: seeded.repoId,
      environment_id: seeded.envId,
    })
  ).id;
  const key = await admin.post<{ id: number }>(`/project/${projectId}/keys`, {
    name: 'Hook token',
    type: 'login_password',
    login_password: { login: 'hook', password: 'first-pass' },
  });
  // The server checks a webhook's token against this key's password: the key's secret, used without reading it.
  const integration = await admin.post<{ id: number }>(`/project/${projectId}/integrations`, {
    name: 'Token hook',
    template_id: templateId,
    auth_method: 'token',
    auth_secret_id: key.id,
    auth_header: 'X-Deploy-Token',
  });
  alias = (
    await admin.post<{ alias: string }>(`/project/${projectId}/integrations/${integration.id}/aliases`)
  ).alias;
});
afterAll(() => {
  if (repoPath) rmSync(repoPath, { recursive: true, force: true });
});

/** The status the webhook answers a request carrying `token`: 204 when it matches the key's password. */
async function hookStatus(token: string): Promise<number> {
  const r = await fetch(`${suite.server.url}/api/integrations/${alias}`, {
    method: 'POST',
    headers: { 'X-Deploy-Token': token, 'content-type': 'application/json' },
    body: JSON.stringify({ ref: 'refs/heads/none' }),
  });
  await r.arrayBuffer();
  return r.status;
}

/** Runs the template and returns the digest of STORED_TOKEN the task saw. */
async function tokenDigestSeenByTask(): Promise<string> {
  const task = await suite.admin.post<{ id: number }>(`/project/${projectId}/tasks`, {
    template_id: templateId,
  });
  const done = await waitForStatus(suite.admin, projectId, task.id, ['success', 'error']);
  const output = await suite.admin.get<{ output: string }[]>(`/project/${projectId}/tasks/${task.id}/output`);
  expect(done.status, output.map((o) => o.output).join('\n')).toBe('success');
  const line = output.map((o) => o.output).find((o) => o.startsWith('token-digest:'));
  return line?.slice('token-digest:'.length) ?? '';
}

const focusedName = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute('name'));

describe('stored secrets on edit', () => {
  it('a key’s password says it is stored, is kept when left empty and replaced on Replace', async () => {
    const page = await suite.pageAs(suite.admin);
    await page.goto(`/project/${projectId}/keys`);
    await page.getByRole('button', { name: 'Edit Hook token' }).click();
    const dialog = page.getByRole('dialog');
    const password = dialog.locator('input[name="login_password.password"]');
    await dialog.getByText(STORED).waitFor();
    expect(await password.getAttribute('aria-describedby')).toBeTruthy();
    expect(await password.inputValue()).toBe('');
    // The login is part of the stored secret: it changes only with it.
    expect(await dialog.getByLabel('Login (optional)').isDisabled()).toBe(true);
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Key Hook token saved');
    await dialog.waitFor({ state: 'detached' });
    expect(await hookStatus('first-pass')).toBe(204);

    await page.getByRole('button', { name: 'Edit Hook token' }).click();
    await dialog.getByRole('button', { name: 'Replace Password' }).click();
    await page.waitForFunction(
      () => document.activeElement?.getAttribute('name') === 'login_password.password',
    );
    expect(await focusedName(page)).toBe('login_password.password');
    expect(await dialog.getByText(STORED).count()).toBe(0);
    expect(await dialog.getByRole('button', { name: 'Replace Password' }).count()).toBe(0);
    await password.fill('second-pass');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Key Hook token saved');
    await dialog.waitFor({ state: 'detached' });
    expect(await hookStatus('first-pass')).toBe(401);
    expect(await hookStatus('second-pass')).toBe(204);
    await page.context().close();
  });

  it('an environment secret says it is stored, is kept when left empty and replaced on Replace', async () => {
    expect(await tokenDigestSeenByTask()).toBe(digest('first-value'));
    const page = await suite.pageAs(suite.admin);
    await page.goto(`/project/${projectId}/environment`);
    await page.getByRole('button', { name: 'Edit Seed env' }).click();
    const dialog = page.getByRole('dialog');
    const value = dialog.getByLabel('Value', { exact: true });
    await dialog.getByText(STORED).waitFor();
    expect(await value.inputValue()).toBe('');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Environment Seed env saved');
    await dialog.waitFor({ state: 'detached' });
    expect(await tokenDigestSeenByTask()).toBe(digest('first-value'));

    await page.getByRole('button', { name: 'Edit Seed env' }).click();
    await dialog.getByRole('button', { name: 'Replace Value' }).click();
    await page.waitForFunction(() => document.activeElement?.getAttribute('type') === 'password');
    await value.fill('second-value');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Environment Seed env saved');
    await dialog.waitFor({ state: 'detached' });
    expect(await tokenDigestSeenByTask()).toBe(digest('second-value'));
    await page.context().close();
  });

  it('shows the stored hint in the key dialog in light and dark, at desktop and phone width', async () => {
    const schemes = takingScreenshots ? (['light', 'dark'] as const) : (['light'] as const);
    const sizes = takingScreenshots
      ? ([
          [DESKTOP, '1280'],
          [PHONE, '390'],
        ] as const)
      : ([[PHONE, '390']] as const);
    for (const colorScheme of schemes)
      for (const [viewport, size] of sizes) {
        const page = await suite.pageAs(suite.admin, { colorScheme, viewport });
        await page.addInitScript(
          (dark) => localStorage.setItem('darkMode', dark),
          String(colorScheme === 'dark'),
        );
        await page.goto(`/project/${projectId}/keys`);
        await page.getByRole('button', { name: 'Edit Hook token' }).click();
        const dialog = page.getByRole('dialog');
        await dialog.getByRole('button', { name: 'Replace Password' }).waitFor();
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(1);
        await shot(page, `key-stored-secret-${colorScheme}-${size}`);
        await page.context().close();
      }
  });
});
