import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, login } from './support/api';
import { DESKTOP, launch, newContext, PHONE, shot, takingScreenshots } from './support/browser';
import { ADMIN } from './support/server';
import { sharedServer } from './support/shared';
import type { SharedServer } from './support/shared-server';

let server: SharedServer;
let browser: Browser;

beforeAll(async () => {
  server = sharedServer();
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describe('first sign-in', () => {
  it('gets the console compressed, its hashed assets cached for good and the page revalidated', async () => {
    const context = await newContext(browser, server.url);
    const page = await context.newPage();
    const assets: { url: string; encoding?: string; cache?: string }[] = [];
    let document: Record<string, string> = {};
    page.on('response', (res) => {
      const url = new URL(res.url());
      if (url.pathname.startsWith('/assets/') && url.pathname.endsWith('.js'))
        assets.push({
          url: url.pathname,
          encoding: res.headers()['content-encoding'],
          cache: res.headers()['cache-control'],
        });
      if (url.pathname === '/auth/login') document = res.headers();
    });
    await page.goto('/auth/login');
    await page.getByLabel('Username').waitFor();
    expect(document['cache-control']).toBe('no-cache');
    const entry = assets.find((a) => /^\/assets\/index-[\w-]+\.js$/.test(a.url));
    // Chromium accepts brotli: the entry script comes as the build's .br copy, kept for a year.
    expect(entry).toMatchObject({ encoding: 'br', cache: 'public, max-age=31536000, immutable' });
    await context.close();
  });

  it('asks the API nothing it answers with an error (no project 0) on the first screen', async () => {
    const admin = await login(server.url, ADMIN.login, ADMIN.password);
    const fresh = await createUser(admin, { can_create_project: true });
    const context = await newContext(browser, server.url);
    const page = await context.newPage();
    await page.goto('/auth/login');
    await page.getByLabel('Username').fill(fresh.username);
    await page.getByLabel('Password').fill(fresh.password);
    // Every API answer from the moment the user signs in.
    const answers: string[] = [];
    page.on('response', (res) => {
      const url = new URL(res.url());
      if (url.pathname.startsWith('/api/'))
        answers.push(`${res.status()} ${res.request().method()} ${url.pathname}`);
    });
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL('**/project/new');
    await page.getByRole('heading', { name: 'New project' }).waitFor();
    await page.waitForLoadState('networkidle');
    expect(answers.some((a) => a.endsWith('/api/auth/login'))).toBe(true);
    expect(answers.filter((a) => a.includes('/api/project/0'))).toEqual([]);
    expect(answers.filter((a) => /^[45]\d\d /.test(a))).toEqual([]);
    await context.close();
  });

  it('shows commands that run in a clone (npx signalbox) in the sign-in help', async () => {
    const schemes = takingScreenshots ? (['light', 'dark'] as const) : (['light'] as const);
    for (const colorScheme of schemes)
      for (const [viewport, size] of [
        [DESKTOP, '1280'],
        [PHONE, '390'],
      ] as const) {
        const context = await newContext(browser, server.url, { colorScheme, viewport });
        const page = await context.newPage();
        await page.goto('/auth/login');
        await page.getByRole('button', { name: "Can't sign in?" }).click();
        const dialog = page.getByRole('dialog', { name: "Can't sign in?" });
        const commands = await dialog.locator('code').allTextContents();
        expect(commands.length).toBeGreaterThanOrEqual(3);
        for (const command of commands) expect(command).toMatch(/^npx signalbox user /);
        await shot(page, `login-help-npx-${colorScheme}-${size}`);
        await context.close();
      }
  });
});
