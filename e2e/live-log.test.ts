import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, login } from './support/api';
import { DESKTOP, launch, newContext, useSession } from './support/browser';
import { seedBashProject, waitForStatus as waitForTaskStatus } from './support/seed';
import { ADMIN, startServer, type TestServer } from './support/server';

// Its own server: a task printing 100,000 lines as fast as it can would slow every other file on a shared one.
let server: TestServer;
let browser: Browser;
let admin: Api;
let projectId: number;
const templates: Record<string, number> = {};

const FAST_LINES = 100_000;
const CHUNK = 2_500;

beforeAll(async () => {
  server = await startServer();
  browser = await launch();
  admin = await login(server.url, ADMIN.login, ADMIN.password);
  const seeded = await seedBashProject(admin, 'Live Log', {
    // Numbered lines in bursts of 2,500 as fast as bash prints them, with a short pause between bursts, so the
    // dialog is open (and the socket dropped) while most of them are still to come.
    Flood: [
      'flood.sh',
      `for c in $(seq 0 ${FAST_LINES / CHUNK - 1}); do seq -f "line %06g" $((c*${CHUNK}+1)) $((c*${CHUNK}+${CHUNK})); sleep 0.4; done\n`,
    ],
  });
  projectId = seeded.projectId;
  Object.assign(templates, seeded.templates);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/**
 * A page signed in as the admin whose WebSockets the test can reach (`window.liveSockets`, to close them) and whose
 * socket messages reach the console `latency` ms late, in order: a slow link or a proxy that buffers, where pages of
 * stored lines read over HTTP overtake the live lines on the socket.
 */
async function pageWithSockets(latency: number): Promise<Page> {
  const context = await newContext(browser, server.url, { viewport: DESKTOP });
  await useSession(context, server.url, admin.cookie);
  await context.addInitScript((delay: number) => {
    const Native = window.WebSocket;
    const sockets: WebSocket[] = [];
    (window as unknown as { liveSockets: WebSocket[] }).liveSockets = sockets;
    class SlowLinkSocket extends Native {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols);
        sockets.push(this);
      }
      override set onmessage(handler: ((event: MessageEvent) => void) | null) {
        super.onmessage = handler ? (event) => setTimeout(() => handler.call(this, event), delay) : null;
      }
      override get onmessage() {
        return super.onmessage;
      }
    }
    window.WebSocket = SlowLinkSocket;
  }, latency);
  return context.newPage();
}

/** The line count the dialog's toolbar shows. */
async function shownCount(dialog: Locator): Promise<number> {
  const text = (await dialog.getByText(/^Lines: /).textContent()) ?? '';
  return Number(text.replace(/\D/g, ''));
}

/** The stored log of a task as plain lines. */
async function storedLines(taskId: number): Promise<string[]> {
  const r = await fetch(`${server.url}/api/project/${projectId}/tasks/${taskId}/raw_output`, {
    headers: { cookie: admin.cookie },
  });
  const text = await r.text();
  return text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
}

/** Whether the stored log holds at least `count` lines (one indexed read, not the whole log). */
async function storedAtLeast(taskId: number, count: number): Promise<boolean> {
  if (count === 0) return true;
  const rows = await admin.get<unknown[]>(
    `/project/${projectId}/tasks/${taskId}/output?offset=${count - 1}&limit=1`,
  );
  return rows.length === 1;
}

/** Searches the log and returns the match count the toolbar reports. */
async function searchCount(dialog: Locator, query: string): Promise<number> {
  const box = dialog.getByRole('textbox', { name: 'Search in log' });
  await box.fill('');
  await box.fill(query);
  const status = dialog.getByText(/^(\d+ of \d+|No matches)$/);
  // The query applies after a pause: once the log marks the new query, the count beside it (drawn in the same
  // render) is the new query's too.
  const mark = dialog.getByRole('log').locator('mark').first();
  for (;;) {
    await status.waitFor();
    const marked = (await mark.count()) ? await mark.textContent() : null;
    const text = (await status.textContent()) ?? '';
    if (marked?.toLowerCase() === query.toLowerCase()) return Number(/of (\d+)/.exec(text)?.[1]);
    if (text === 'No matches' && !marked) return 0;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('live task log', () => {
  it('shows exactly the stored lines of a fast task, across a socket reconnect while it runs', async () => {
    const task = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, {
      template_id: templates.Flood,
    });
    await waitForTaskStatus(admin, projectId, task.id, ['running'], 60_000);
    const page = await pageWithSockets(400);
    await page.goto(`/project/${projectId}/history?t=${task.id}`);
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('log').locator('[data-log-line]').first().waitFor();

    // While lines pour in, the dialog never shows more lines than are stored (each live line is stored before it
    // is sent), and halfway through the socket drops and comes back.
    let dropped = false;
    for (;;) {
      const shown = await shownCount(dialog);
      expect(await storedAtLeast(task.id, shown), `${shown} lines shown`).toBe(true);
      const { status } = await admin.get<{ status: string }>(`/project/${projectId}/tasks/${task.id}`);
      if (status === 'success' || status === 'error') break;
      if (!dropped && (await storedAtLeast(task.id, FAST_LINES / 4))) {
        dropped = true;
        await page.evaluate(() => {
          for (const s of (window as unknown as { liveSockets: WebSocket[] }).liveSockets) s.close();
        });
      }
      await new Promise((r) => setTimeout(r, 150));
    }
    expect(dropped).toBe(true);

    const stored = await storedLines(task.id);
    expect(stored.filter((l) => l.startsWith('line ')).length).toBe(FAST_LINES);
    // Once the task has ended, the dialog settles on the stored count (and stays there).
    const deadline = Date.now() + 30_000;
    while ((await shownCount(dialog)) !== stored.length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(await shownCount(dialog)).toBe(stored.length);

    // Every line once: the search counts equal those of the stored log.
    for (const query of ['2500', 'line 0999', '77', `line ${String(FAST_LINES).padStart(6, '0')}`]) {
      const expected = stored.filter((l) => l.toLowerCase().includes(query.toLowerCase())).length;
      expect(await searchCount(dialog, query), query).toBe(expected);
    }
    await dialog.getByRole('textbox', { name: 'Search in log' }).fill('');
    const log = dialog.getByRole('log');
    await log.locator('[data-virtuoso-scroller]').evaluate((el) => el.scrollTo(0, 0));
    await log.getByText(stored[0] as string, { exact: true }).waitFor();
    await page.context().close();
  }, 180_000);
});
