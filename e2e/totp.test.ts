import { readFileSync } from 'node:fs';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, createUser, login, type SeedUser } from './support/api';
import { DESKTOP, launch, newContext, PHONE, shot, takingScreenshots, useSession } from './support/browser';
import { ADMIN, startServer, type TestServer } from './support/server';

// Two-factor sign-in through the console: set-up from the user menu (QR code, key as text, first code, recovery
// codes), the code step of signing in with codes made here from the key the dialog showed, a recovery code used
// once, and an administrator's reset. Screens light and dark, 1280×800 and 390×844.
let server: TestServer;
let browser: Browser;
let admin: Api;
let projectId: number;

beforeAll(async () => {
  server = await startServer({ SIGNALBOX_TOTP_ENABLED: 'true', SIGNALBOX_TOTP_ALLOW_RECOVERY: 'true' });
  browser = await launch();
  admin = await login(server.url, ADMIN.login, ADMIN.password);
  projectId = (await admin.post<{ id: number }>('/projects', { name: 'Platform Operations' })).id;
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** The code the authenticator app shows for `secret`, `steps` 30-second steps from now. */
const codeFor = (secret: string, steps = 0) =>
  generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

/**
 * Desktop and phone; the dark scheme only when screenshots are taken (`npm run screenshots`): its flow is the
 * light one's, and only a picture shows what differs.
 */
const configs = [
  { scheme: 'light', viewport: DESKTOP, size: '1280', person: 'Lina Park' },
  { scheme: 'light', viewport: PHONE, size: '390', person: 'Aiko Tanaka' },
  ...(takingScreenshots
    ? ([
        { scheme: 'dark', viewport: DESKTOP, size: '1280', person: 'Sofia Rossi' },
        { scheme: 'dark', viewport: PHONE, size: '390', person: 'Marco Bianchi' },
      ] as const)
    : []),
] as const;

/** Opens the user menu; on a phone, from the drawer (opened first unless it is open still). */
async function openUserMenu(page: Page) {
  const userMenu = page.getByRole('button', { name: 'User menu' });
  const phone = (page.viewportSize()?.width ?? DESKTOP.width) < 600;
  if (phone && !(await userMenu.isVisible())) await page.getByRole('button', { name: 'Open menu' }).click();
  await userMenu.click();
}

async function signInWithPassword(page: Page, user: SeedUser) {
  await page.goto('/auth/login');
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

async function signOut(page: Page) {
  await openUserMenu(page);
  await page.getByRole('menuitem', { name: 'Sign out' }).click();
  await page.waitForURL('**/auth/login');
}

/** What the page's own session may do: the status of GET /api/user from inside the browser. */
const meStatus = (page: Page) => page.evaluate(async () => (await fetch('/api/user')).status);

describe.each(configs)('two-factor sign-in ($scheme, $size px)', ({ scheme, viewport, size, person }) => {
  const name = (screen: string) => `${screen}-${scheme}-${size}`;
  const full = scheme === 'light' && viewport === DESKTOP;
  let page: Page;
  let user: SeedUser;
  let secret = '';
  let recoveryCodes: string[] = [];

  beforeAll(async () => {
    const username = `${person.split(' ')[0]!.toLowerCase()}-${scheme}-${size}`;
    user = await createUser(admin, { name: person, username });
    await admin.post(`/project/${projectId}/users`, { user_id: user.id, role: 'task_runner' });
    const context = await newContext(browser, server.url, { viewport, colorScheme: scheme });
    page = await context.newPage();
  });
  afterAll(async () => page?.context().close());

  it('sets it up from the user menu: QR code, key as text, first code, recovery codes shown once', async () => {
    await signInWithPassword(page, user);
    await page.waitForURL((url) => !url.pathname.startsWith('/auth/login'));
    await openUserMenu(page);
    await page.getByRole('menuitem', { name: 'Two-factor authentication' }).click();
    const dialog = page.getByRole('dialog', { name: 'Two-factor authentication' });
    await dialog.getByText('You will also get recovery codes').waitFor();
    await shot(page, name('totp-setup-intro'));

    await dialog.getByRole('button', { name: 'Set up' }).click();
    const qr = dialog.getByRole('img', { name: 'QR code to scan with an authenticator app' });
    await qr.waitFor();
    await expect
      .poll(() => qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
      .toBe(256);
    secret = (await dialog.getByRole('textbox', { name: 'Setup key' }).inputValue()).replaceAll(' ', '');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await page.mouse.move(0, 0);
    await shot(page, name('totp-setup-scan'));

    const code = dialog.getByRole('textbox', { name: '6-digit code' });
    if (full) {
      await code.fill('12345');
      await dialog.getByRole('button', { name: 'Turn on' }).click();
      await dialog.getByText('Enter the 6 digits the app shows').waitFor();
      await code.fill('000000');
      await dialog.getByRole('button', { name: 'Turn on' }).click();
      await dialog.getByText('Incorrect code').waitFor();
    }
    await code.fill(await codeFor(secret));
    await dialog.getByRole('button', { name: 'Turn on' }).click();
    const list = dialog.getByRole('list', { name: 'Recovery codes' });
    await list.waitFor();
    recoveryCodes = await list.getByRole('listitem').allTextContents();
    expect(recoveryCodes).toHaveLength(10);
    for (const c of recoveryCodes) expect(c).toMatch(/^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/);
    await page.mouse.move(0, 0);
    await shot(page, name('totp-setup-codes'));

    if (full) {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        dialog.getByRole('button', { name: 'Download' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('signalbox-recovery-codes.txt');
      expect(readFileSync((await download.path())!, 'utf8')).toBe(`${recoveryCodes.join('\n')}\n`);
    }
    await dialog.getByRole('button', { name: 'I have saved them' }).click();
    await dialog.getByText('Two-factor authentication is on').waitFor();
    await dialog.getByText('Recovery codes left: 10').waitFor();
    await shot(page, name('totp-on'));
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });
  });

  it('asks for a code after the password and signs in with one made from the key', async () => {
    await signOut(page);
    await signInWithPassword(page, user);
    const step = page.getByRole('form', { name: 'Two-factor authentication' });
    await step.getByRole('textbox', { name: '6-digit code' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/auth/login');
    // Half signed in: the session reaches nothing yet.
    expect(await meStatus(page)).toBe(401);
    await page.mouse.move(0, 0);
    await shot(page, name('totp-signin-code'));
    if (full) {
      // Lost phone: the help dialog names the command an administrator runs.
      await page.getByRole('button', { name: "Can't sign in?" }).click();
      const help = page.getByRole('dialog', { name: "Can't sign in?" });
      await help.getByText('npx signalbox user totp disable --login <login>').waitFor();
      await help.getByRole('button', { name: 'Close' }).click();
      await help.waitFor({ state: 'hidden' });
      await step.getByRole('textbox', { name: '6-digit code' }).fill('000000');
      await step.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('alert').filter({ hasText: 'Incorrect code' }).waitFor();
      await shot(page, name('totp-signin-wrong'));
    }
    // The next step's code: this step's was taken by the set-up, and a code is never accepted twice.
    await step.getByRole('textbox', { name: '6-digit code' }).fill(await codeFor(secret, 1));
    await step.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/auth/login'));
    await page.getByRole('button', { name: viewport === PHONE ? 'Open menu' : 'User menu' }).waitFor();
    expect(await meStatus(page)).toBe(200);
  });

  it('signs in with a recovery code once', async () => {
    if (!full && viewport !== PHONE) return;
    await signOut(page);
    await signInWithPassword(page, user);
    const step = page.getByRole('form', { name: 'Two-factor authentication' });
    await step.getByRole('button', { name: 'Use a recovery code' }).click();
    const field = step.getByRole('textbox', { name: 'Recovery code' });
    await field.waitFor();
    await page.mouse.move(0, 0);
    await shot(page, name('totp-signin-recovery'));
    await field.fill(recoveryCodes[0]!);
    await step.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/auth/login'));
    expect(await meStatus(page)).toBe(200);

    // Used once, it is refused the next time; the way back signs the half-done session out.
    await signOut(page);
    await signInWithPassword(page, user);
    await step.getByRole('button', { name: 'Use a recovery code' }).click();
    await field.fill(recoveryCodes[0]!);
    await step.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: 'Incorrect recovery code' }).waitFor();
    await step.getByRole('button', { name: 'Back to sign-in' }).click();
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    expect(await meStatus(page)).toBe(401);
    const left = await admin.get<{ recovery_codes_left: number }>(`/users/${user.id}/2fas/totp`);
    expect(left.recovery_codes_left).toBe(9);
  });
});

describe('administrators', () => {
  it('reset a user’s two-factor sign-in from the Users page, after a confirmation', async () => {
    const user = await createUser(admin, { name: 'Omar Haddad', username: 'omar' });
    const own = await login(server.url, user.username, user.password);
    const started = await own.post<{ id: number; secret: string }>(`/users/${user.id}/2fas/totp`);
    await own.post(`/users/${user.id}/2fas/totp/${started.id}/confirm`, {
      passcode: await codeFor(started.secret),
    });
    // Light on a desktop, and the last variant on a phone (dark when screenshots are taken).
    for (const { scheme, viewport, size } of [configs[0], configs[configs.length - 1]!]) {
      const context = await newContext(browser, server.url, { viewport, colorScheme: scheme });
      await useSession(context, server.url, admin.cookie);
      const page = await context.newPage();
      await page.goto('/users');
      const reset = page.getByRole('button', { name: 'Reset two-factor authentication of Omar Haddad' });
      await reset.click();
      const confirm = page.getByRole('dialog', { name: 'Reset two-factor authentication' });
      await confirm.getByText('They sign in with their password only').waitFor();
      await shot(page, `totp-admin-reset-${scheme}-${size}`);
      if (viewport === PHONE) {
        await confirm.getByRole('button', { name: 'Reset' }).click();
        await page.getByText('Two-factor authentication of Omar Haddad reset').waitFor();
        await expect.poll(() => reset.isDisabled()).toBe(true);
      } else {
        await confirm.getByRole('button', { name: 'Cancel' }).click();
      }
      await context.close();
    }
    // The next password sign-in is a whole one.
    const again = await login(server.url, user.username, user.password);
    expect(await again.status('GET', '/user')).toBe(200);
    // An administrator's own row has no reset: they turn theirs off from the user menu.
    const context = await newContext(browser, server.url);
    await useSession(context, server.url, admin.cookie);
    const page = await context.newPage();
    await page.goto('/users');
    expect(
      await page
        .getByRole('button', { name: `Reset two-factor authentication of ${ADMIN.name}` })
        .isDisabled(),
    ).toBe(true);
    await context.close();
  });
});
