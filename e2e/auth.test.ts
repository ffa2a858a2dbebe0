import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, login } from './support/api';
import { DESKTOP, launch, newContext, PHONE, shot, useSession } from './support/browser';
import { ADMIN, startServer, type TestServer } from './support/server';
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

describe('sign-in page', () => {
  it('signs in with Enter, sends a user with zero projects to /project/new', async () => {
    // Other files' projects live on the shared server: a new user is a member of none of them.
    const admin = await login(server.url, ADMIN.login, ADMIN.password);
    const fresh = await createUser(admin, { can_create_project: true });
    const context = await newContext(browser, server.url);
    const page = await context.newPage();
    await page.goto('/');
    await page.waitForURL('**/auth/login');
    await page.getByRole('heading', { name: 'Sign in to Signalbox' }).waitFor();
    await shot(page, 'login-light-1280');
    await page.getByLabel('Username').fill(fresh.username);
    await page.getByLabel('Password').fill(fresh.password);
    await page.getByLabel('Password').press('Enter');
    await page.waitForURL('**/project/new');
    await page.getByRole('heading', { name: 'New project' }).waitFor();
    await context.close();
  });

  it('signs in with the button and keeps the query string', async () => {
    const context = await newContext(browser, server.url);
    const page = await context.newPage();
    await page.goto('/auth/login?next=1');
    await page.getByLabel('Username').fill(ADMIN.login);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((u) => !u.pathname.startsWith('/auth/login'));
    expect(new URL(page.url()).search).toContain('next=1');
    // A present session on the sign-in page goes to the base address.
    await page.goto('/auth/login');
    await page.waitForURL((u) => !u.pathname.startsWith('/auth/login'));
    await context.close();
  });

  it('shows "Incorrect login or password" and required-field messages', async () => {
    const context = await newContext(browser, server.url);
    const page = await context.newPage();
    await page.goto('/auth/login');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('Username is required').waitFor();
    await page.getByText('Password is required').waitFor();
    await page.getByLabel('Username').fill(ADMIN.login);
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'Incorrect login or password' }).waitFor();
    expect(await page.getByText('Request failed with status code').count()).toBe(0);
    await shot(page, 'login-error-light-1280');
    await context.close();
  });

  it('opens the help dialog with real commands and a 10-character example password', async () => {
    for (const [scheme, viewport, size] of [
      ['light', DESKTOP, '1280'],
      ['dark', PHONE, '390'],
    ] as const) {
      const context = await newContext(browser, server.url, { colorScheme: scheme, viewport });
      const page = await context.newPage();
      await page.goto('/auth/login');
      await page.getByLabel('Username').waitFor();
      await shot(page, `login-${scheme}-${size}`);
      await page.getByRole('button', { name: "Can't sign in?" }).click();
      const dialog = page.getByRole('dialog', { name: "Can't sign in?" });
      await dialog.waitFor();
      const text = (await dialog.locator('code').allTextContents()).join('\n');
      expect(text).toContain('npx signalbox user list');
      expect(text).toMatch(/signalbox user change-by-login --login <login> --password [A-Za-z0-9]{10}\b/);
      expect(text).toMatch(/signalbox user add --admin/);
      // The example password is never broken across lines, however narrow the screen.
      const password = /--password ([A-Za-z0-9]{10})\b/.exec(text)![1]!;
      const lines = await dialog.locator('code').evaluateAll((codes, word) => {
        for (const code of codes) {
          const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const at = node.textContent!.indexOf(word);
            if (at < 0) continue;
            const range = document.createRange();
            range.setStart(node, at);
            range.setEnd(node, at + word.length);
            return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
          }
        }
        return 0;
      }, password);
      expect(lines).toBe(1);
      await shot(page, `login-help-${scheme}-${size}`);
      await context.close();
    }
  });

  it('a user without projects or rights sees the explanation on /project/new', async () => {
    const admin = await login(server.url, ADMIN.login, ADMIN.password);
    const user = await createUser(admin, { name: 'Nora Noproject' });
    const context = await newContext(browser, server.url);
    const page = await context.newPage();
    await page.goto('/auth/login');
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await page.getByLabel('Password').press('Enter');
    await page.waitForURL('**/project/new');
    await page.getByText('You are not a member of any project yet').waitFor();
    expect(await page.getByRole('button', { name: 'Create', exact: true }).count()).toBe(0);
    await context.close();
  });
});

describe('app states', () => {
  it('shows the error page with Refresh page and Re-login when the session cannot be loaded', async () => {
    const admin = await login(server.url, ADMIN.login, ADMIN.password);
    const context = await newContext(browser, server.url);
    await useSession(context, server.url, admin.cookie);
    const page = await context.newPage();
    await page.route('**/api/user', (route) =>
      route.fulfill({
        status: 500,
        contentType: 'application/json',
        body: '{"error":"Database is unavailable"}',
      }),
    );
    await page.goto('/');
    await page.getByRole('heading', { name: 'Something went wrong' }).waitFor();
    await page.getByText('Database is unavailable').waitFor();
    await page.getByRole('button', { name: 'Refresh page' }).waitFor();
    await shot(page, 'error-page-light-1280');
    await page.unroute('**/api/user');
    await page.getByRole('button', { name: 'Re-login' }).click();
    await page.waitForURL('**/auth/login');
    // Re-login signed the session out.
    expect(await admin.status('GET', '/user')).toBe(401);
    await context.close();
  });
});

describe('sign-in with external providers only', () => {
  let oidcServer: TestServer;
  beforeAll(async () => {
    oidcServer = await startServer({
      SIGNALBOX_PASSWORD_LOGIN_DISABLED: 'true',
      SIGNALBOX_OIDC_PROVIDERS: JSON.stringify({
        corp: {
          display_name: 'Corp SSO',
          provider_url: 'https://sso.example.com',
          client_id: 'signalbox',
          color: '#7b1fa2',
          icon: 'github',
        },
      }),
    });
  });
  afterAll(async () => oidcServer?.stop());

  it('shows one button per provider keeping the query string, and hides password sign-in', async () => {
    const context = await newContext(browser, oidcServer.url);
    const page = await context.newPage();
    await page.goto('/auth/login?from=mail');
    const button = page.getByRole('link', { name: 'Sign in with Corp SSO' });
    await button.waitFor();
    expect(await button.getAttribute('href')).toBe('/api/auth/oidc/corp/login?from=mail');
    expect(await button.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(123, 31, 162)');
    expect(await page.getByLabel('Password').count()).toBe(0);
    await shot(page, 'login-oidc-light-1280');
    await context.close();
  });
});
