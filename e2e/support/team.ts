import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type Api, createUser, login, type SeedUser } from './api';
import { DESKTOP, navigate, newContext, PHONE, settled, shot, takingScreenshots, WAIT_MS } from './browser';
import { ADMIN } from './server';

export type Team = {
  admin: Api;
  projectId: number;
  manager: SeedUser;
  runner: SeedUser;
  guest: SeedUser;
};

/** A project owned by the admin with a manager, a task runner and a guest. */
export async function seedTeam(baseUrl: string, name = 'Team project'): Promise<Team> {
  const admin = await login(baseUrl, ADMIN.login, ADMIN.password);
  const project = await admin.post<{ id: number }>('/projects', { name });
  const manager = await createUser(admin, { name: 'Mia Manager' });
  const runner = await createUser(admin, { name: 'Rui Runner' });
  const guest = await createUser(admin, { name: 'Gus Guest' });
  for (const [user, role] of [
    [manager, 'manager'],
    [runner, 'task_runner'],
    [guest, 'guest'],
  ] as const)
    await admin.post(`/project/${project.id}/users`, { user_id: user.id, role });
  return { admin, projectId: project.id, manager, runner, guest };
}

/** A browser context signed in as a user (session cookie from the API). */
export async function contextAs(
  browser: Browser,
  baseUrl: string,
  user: { username?: string; login?: string; password: string },
  options: Parameters<typeof newContext>[2] = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const api = await login(baseUrl, user.username ?? user.login!, user.password);
  const context = await newContext(browser, baseUrl, options);
  const [cookieName, ...value] = api.cookie.split('=');
  await context.addCookies([{ name: cookieName, value: value.join('='), url: baseUrl }]);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  const page = await context.newPage();
  return { context, page };
}

/** A local repository directory holding a Bash script. */
export function localBashRepo(script = 'echo "hello from signalbox"\necho "second line"\n'): string {
  const dir = mkdtempSync(join(tmpdir(), 'signalbox-e2e-repo-'));
  writeFileSync(join(dir, 'run.sh'), `#!/usr/bin/env bash\nset -e\n${script}`, { mode: 0o755 });
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', 'commit', '-q', '-m', 'scripts');
  return dir;
}

/** Seeds the resources a Bash template needs through the API; returns their ids. */
export async function seedBashResources(api: Api, projectId: number, repoPath = localBashRepo()) {
  const key = await api.post<{ id: number }>(`/project/${projectId}/keys`, {
    name: 'Seed none key',
    type: 'none',
  });
  const repo = await api.post<{ id: number }>(`/project/${projectId}/repositories`, {
    name: 'Local scripts',
    git_url: repoPath,
    git_branch: '',
    ssh_key_id: key.id,
  });
  const env = await api.post<{ id: number }>(`/project/${projectId}/environment`, {
    name: 'Seed env',
    json: '{}',
    env: '{}',
  });
  const inv = await api.post<{ id: number }>(`/project/${projectId}/inventory`, {
    name: 'Seed hosts',
    type: 'static',
    inventory: '[local]\nlocalhost ansible_connection=local\n',
    ssh_key_id: key.id,
  });
  return { keyId: key.id, repoId: repo.id, envId: env.id, inventoryId: inv.id, repoPath };
}

/**
 * Checks that a page does not overflow at 390 px; under `npm run screenshots` also saves it in light and dark, at
 * desktop and phone width.
 */
export async function shotAll(
  browser: Browser,
  baseUrl: string,
  user: Parameters<typeof contextAs>[2],
  path: string,
  name: string,
) {
  await shotEach(browser, baseUrl, user, [[path, name]]);
}

/**
 * `shotAll` for several pages seen by one user: each scheme and width opens one browser context and goes from page
 * to page inside the console, as its user would.
 */
export async function shotEach(
  browser: Browser,
  baseUrl: string,
  user: Parameters<typeof contextAs>[2],
  screens: ReadonlyArray<readonly [path: string, name: string]>,
) {
  const schemes = takingScreenshots ? (['light', 'dark'] as const) : (['light'] as const);
  const sizes = takingScreenshots ? (['1280', '390'] as const) : (['390'] as const);
  for (const scheme of schemes) {
    for (const size of sizes) {
      const viewport = size === '390' ? PHONE : DESKTOP;
      const { context, page } = await contextAs(browser, baseUrl, user, { viewport, colorScheme: scheme });
      await page.addInitScript(
        (dark) => localStorage.setItem('darkMode', dark),
        scheme === 'dark' ? 'true' : 'false',
      );
      for (const [path, name] of screens) {
        await navigate(page, path);
        await settled(page);
        await shot(page, `${name}-${scheme}-${size}`);
        if (size === '390') {
          const overflow = await page.evaluate(
            () => document.documentElement.scrollWidth - window.innerWidth,
          );
          if (overflow > 1) throw new Error(`${name} overflows by ${overflow}px at 390 px`);
        }
      }
      await context.close();
    }
  }
}

/**
 * Waits for a snackbar saying exactly `text`. Another one may still be showing (they last 3 s), so this looks
 * for the expected message among all of them rather than at whichever is newest in the DOM.
 */
export async function expectSnackbar(page: Page, text: string) {
  const bars = page.locator('#notistack-snackbar');
  const exact = new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  try {
    await bars.filter({ hasText: exact }).first().waitFor({ timeout: WAIT_MS });
  } catch {
    const alerts = await page.getByRole('alert').allTextContents();
    throw new Error(
      `No snackbar "${text}"; showing: ${JSON.stringify(await bars.allTextContents())}; alerts: ${JSON.stringify(alerts)}`,
    );
  }
}
