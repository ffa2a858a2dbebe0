import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, PHONE, shot, takingScreenshots } from './support/browser';
import { useSharedServerAsAdmin } from './support/shared';

const suite = useSharedServerAsAdmin();
let projectId: number;
const dir = mkdtempSync(join(tmpdir(), 'sb-integration-secret-'));

beforeAll(async () => {
  projectId = (await suite.admin.post<{ id: number }>('/projects', { name: 'Hook secrets' })).id;
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'id')]);
  await suite.admin.post(`/project/${projectId}/keys`, {
    name: 'Deploy SSH',
    type: 'ssh',
    ssh: { login: 'git', private_key: readFileSync(join(dir, 'id'), 'utf8') },
  });
  await suite.admin.post(`/project/${projectId}/keys`, { name: 'Nothing', type: 'none' });
  await suite.admin.post(`/project/${projectId}/keys`, {
    name: 'Hook token',
    type: 'login_password',
    login_password: { login: '', password: 'hook-pass' },
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('integration auth secret', () => {
  it('offers only login/password keys, the kind the server checks a token or signature with', async () => {
    const schemes = takingScreenshots ? (['light', 'dark'] as const) : (['light'] as const);
    for (const colorScheme of schemes)
      for (const [viewport, size] of [
        [DESKTOP, '1280'],
        [PHONE, '390'],
      ] as const) {
        const page = await suite.pageAs(suite.admin, { colorScheme, viewport });
        await page.addInitScript(
          (dark) => localStorage.setItem('darkMode', dark),
          String(colorScheme === 'dark'),
        );
        await page.goto(`/project/${projectId}/integrations`);
        await page.getByRole('button', { name: 'New Integration' }).click();
        const dialog = page.getByRole('dialog');
        await dialog.getByRole('combobox', { name: 'Authentication' }).click();
        await page.getByRole('option', { name: 'Token', exact: true }).click();
        await dialog.getByRole('combobox', { name: 'Auth secret' }).click();
        await page.getByRole('option', { name: 'Hook token' }).waitFor();
        expect(await page.getByRole('option', { name: 'Deploy SSH' }).count()).toBe(0);
        expect(await page.getByRole('option', { name: 'Nothing' }).count()).toBe(0);
        await shot(page, `integration-secret-${colorScheme}-${size}`);
        await page.context().close();
      }
  });
});
