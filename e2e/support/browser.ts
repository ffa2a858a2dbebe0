import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Locator,
  type Page,
  type Request,
} from 'playwright-core';
import { root } from './server';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  // Debian's Chromium draws its address bar's suggestion popups as web pages of their own: every new context
  // started two more renderer processes for them, which used more CPU than the console's own page (a headless
  // browser never shows an address bar). Chromium merges this list with Playwright's own disabled features.
  '--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup',
];

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS, headless: true });
}

/**
 * How long one wait of a browser test may take (an element to show, a page to load, a condition to hold). CI runs
 * the browser beside the process tiers on two cores; there a page's first drawing took past 30 s twice in five
 * runs (9.7 s in the run before). A test's own bound (vitest's testTimeout) still limits the whole of it.
 */
export const WAIT_MS = 60_000;

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** The requests of a context still in flight, and when one last started or ended (see `settled`). */
const traffic = new WeakMap<BrowserContext, { open: Set<Request>; last: number }>();

function trackTraffic(context: BrowserContext) {
  const net = { open: new Set<Request>(), last: Date.now() };
  const done = (request: Request) => {
    net.open.delete(request);
    net.last = Date.now();
  };
  context.on('request', (request) => {
    net.open.add(request);
    net.last = Date.now();
  });
  context.on('requestfinished', done);
  context.on('requestfailed', done);
  traffic.set(context, net);
  return context;
}

/**
 * Waits until the page's context has had no request in flight for `quietMs` (its code, the API's answers) and the
 * page has drawn a frame since without starting another: what the page shows then is what its data says, so an
 * action it does not offer will not appear a moment later. Unlike Playwright's `networkidle` (500 ms of quiet, and
 * only once per document load) it also covers a navigation inside the app (see `navigate`), and a page busy running
 * its code (no request meanwhile, the next one to come) answers the frame only when that code has run.
 */
export async function settled(page: Page, quietMs = 150, timeout = WAIT_MS) {
  const net = traffic.get(page.context());
  if (!net) throw new Error('settled() needs a context made by newContext()');
  const deadline = Date.now() + timeout;
  for (;;) {
    const quietFor = Date.now() - net.last;
    if (net.open.size === 0 && quietFor >= quietMs) {
      const mark = net.last;
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve(null))));
      if (net.open.size === 0 && net.last === mark) return;
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(`the page still had ${net.open.size} requests in flight after ${timeout} ms`);
    await new Promise((resolve) => setTimeout(resolve, net.open.size > 0 ? 20 : quietMs - quietFor));
  }
}

/**
 * The item `name` of the user menu, once the menu shows it: the menu is opened by a click on its button, clicked
 * again when a click went unanswered (a page that re-rendered the bar under the pointer, as on a busy machine),
 * never while the item shows.
 */
export async function userMenuItem(page: Page, name: string) {
  const item = page.getByRole('menuitem', { name });
  const button = page.getByRole('button', { name: 'User menu' });
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    if (!(await item.isVisible())) await button.click();
    try {
      await item.waitFor({ timeout: 5000 });
      return item;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
  }
}

/**
 * Picks `option` in the select named `name`: its list is opened by a click on the select once an earlier list has
 * finished closing, clicked again when a click went unanswered (one that landed while a list closed, as on a busy
 * machine), then the option is clicked.
 */
export async function chooseOption(page: Page, name: string, option: string) {
  const select = page.getByRole('combobox', { name });
  const list = page.getByRole('listbox');
  const deadline = Date.now() + WAIT_MS;
  await list.waitFor({ state: 'detached' });
  for (;;) {
    if (!(await list.isVisible())) await select.click();
    try {
      await list.waitFor({ timeout: 5000 });
      break;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
  }
  await list.getByRole('option', { name: option, exact: true }).click();
  await list.waitFor({ state: 'detached' });
}

/**
 * Goes to `path` inside the loaded console, as a click on one of its links does (the router follows the history
 * entry), instead of loading the whole page again; the first visit of a page loads it.
 */
export async function navigate(page: Page, path: string) {
  if (!page.url().startsWith('http')) {
    await page.goto(path);
    return;
  }
  await page.evaluate((to) => {
    window.history.pushState(null, '', to);
    window.dispatchEvent(new PopStateEvent('popstate'));
  }, path);
  const net = traffic.get(page.context());
  if (net) net.last = Date.now();
  await page.waitForURL((url) => `${url.pathname}${url.search}` === path);
}

/**
 * A fresh browser context (own cookies and local storage) with English as the browser language. It asks for reduced
 * motion, as a reader may: the console then opens dialogs and menus without animating them, so a test waits for no
 * transition and the browser draws no frames of one.
 */
export async function newContext(
  browser: Browser,
  baseURL: string,
  options: {
    viewport?: { width: number; height: number };
    colorScheme?: 'light' | 'dark';
    locale?: string;
    /** What the reader's system says of motion; reduced unless a test looks at the animations themselves. */
    reducedMotion?: 'reduce' | 'no-preference';
  } = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({
    baseURL,
    viewport: options.viewport ?? DESKTOP,
    colorScheme: options.colorScheme ?? 'light',
    locale: options.locale ?? 'en-US',
    acceptDownloads: true,
    reducedMotion: options.reducedMotion ?? 'reduce',
  });
  context.setDefaultTimeout(WAIT_MS);
  return trackTraffic(context);
}

/** Signs in through the sign-in page. */
export async function signIn(page: Page, login: string, password: string) {
  await page.goto('/auth/login');
  await page.getByLabel('Username').fill(login);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/auth/login'));
}

/** Reuses a session cookie from the API client in a browser context. */
export async function useSession(context: BrowserContext, baseURL: string, cookie: string) {
  const [name, ...value] = cookie.split('=');
  await context.addCookies([{ name, value: value.join('='), url: baseURL }]);
}

export const screenshotDir = join(root, '.e2e-artifacts', 'screenshots');

/** Screenshots are taken only by `npm run screenshots`; other runs assert the same screens without saving them. */
export const takingScreenshots = process.env.SIGNALBOX_SCREENSHOTS === '1';

/**
 * The schemes and widths a screen is checked at: under `npm run screenshots` light and dark at 1280 and 390 px,
 * otherwise light at 390 px (where a screen overflows first).
 */
export function screenVariants() {
  const all = [
    { scheme: 'light', viewport: DESKTOP, size: '1280' },
    { scheme: 'dark', viewport: DESKTOP, size: '1280' },
    { scheme: 'light', viewport: PHONE, size: '390' },
    { scheme: 'dark', viewport: PHONE, size: '390' },
  ] as const;
  return takingScreenshots ? all : all.filter((v) => v.scheme === 'light' && v.size === '390');
}

/**
 * The text of what describes a field (its `aria-describedby` elements, a helper text), or null while it has none.
 * Read at once: a locator built from a missing id would wait its whole timeout for an element that never comes.
 */
export const fieldDescription = (field: Locator) =>
  field.evaluate((el) => {
    const ids = el.getAttribute('aria-describedby')?.split(/\s+/).filter(Boolean) ?? [];
    const texts = ids.map((id) => document.getElementById(id)?.textContent ?? '').filter(Boolean);
    return texts.length ? texts.join(' ') : null;
  });

/** How far the page is wider than the window, in px (more than 1 is a sideways scroll). */
export const pageOverflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

/** Saves a screenshot as .e2e-artifacts/screenshots/<name>.png once transitions have finished. */
export async function shot(page: Page, name: string) {
  if (!takingScreenshots) return;
  mkdirSync(screenshotDir, { recursive: true });
  await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running'));
  await page.screenshot({ path: join(screenshotDir, `${name}.png`) });
}
