import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackGate } from '../packages/server/test/support/gate';
import { type Api, login } from './support/api';
import { DESKTOP, launch, newContext, PHONE, shot, useSession, WAIT_MS } from './support/browser';
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
/** The burst after which the flood waits for the gate: past a quarter of the lines, where the test drops the socket. */
const GATE_AFTER = 10;

/**
 * A loopback gate the flood task waits at once a quarter of its lines are out: the socket drop happens while the
 * task runs, however slow the machine.
 */
let gate: Awaited<ReturnType<typeof loopbackGate>> | undefined;

beforeAll(async () => {
  gate = await loopbackGate();
  const waitAtGate = gate.waitLine;
  server = await startServer();
  browser = await launch();
  admin = await login(server.url, ADMIN.login, ADMIN.password);
  const seeded = await seedBashProject(admin, 'Live Log', {
    // Numbered lines in bursts of 2,500 as fast as bash prints them, with a short pause between bursts, so the
    // dialog is open while most of them are still to come; past a quarter it waits at the gate (bash's /dev/tcp)
    // until the test has dropped the socket.
    Flood: [
      'flood.sh',
      `for c in $(seq 0 ${FAST_LINES / CHUNK - 1}); do seq -f "line %06g" $((c*${CHUNK}+1)) $((c*${CHUNK}+${CHUNK}))\n` +
        `  if [ "$c" -eq ${GATE_AFTER} ]; then ${waitAtGate}; fi\n` +
        '  sleep 0.4\ndone\n',
    ],
    // A long log whose failure is far from both ends, as Ansible reports one.
    Failing: [
      'failing.sh',
      'seq -f "ok: step %g" 1 3000\necho "fatal: [web1]: FAILED! => {\\"msg\\": \\"disk full\\"}"\nseq -f "skipping: step %g" 1 2000\necho "web1 : ok=3000 changed=0 unreachable=0 failed=1"\nexit 2\n',
    ],
    Quick: ['quick.sh', 'echo "quick run"\necho "second line"\n'],
  });
  projectId = seeded.projectId;
  Object.assign(templates, seeded.templates);
  const base = `/project/${projectId}`;
  const shared = {
    app: 'bash',
    playbook: 'quick.sh',
    repository_id: seeded.repositoryId,
    environment_id: seeded.environmentId,
    project_id: projectId,
  };
  templates.Builder = (
    await admin.post<{ id: number }>(`${base}/templates`, {
      ...shared,
      name: 'Builder',
      type: 'build',
      start_version: '1.0.0',
    })
  ).id;
  templates.Deployer = (
    await admin.post<{ id: number }>(`${base}/templates`, {
      ...shared,
      name: 'Deployer',
      type: 'deploy',
      build_template_id: templates.Builder,
    })
  ).id;
});
afterAll(async () => {
  gate?.open();
  await browser?.close();
  await server?.stop();
  await gate?.close();
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
    // is sent), and past a quarter (where the task waits at the gate) the socket drops and comes back.
    let dropped = false;
    for (;;) {
      const shown = await shownCount(dialog);
      expect(await storedAtLeast(task.id, shown), `${shown} lines shown`).toBe(true);
      if (!dropped && (await storedAtLeast(task.id, FAST_LINES / 4))) {
        dropped = true;
        await page.evaluate(() => {
          for (const s of (window as unknown as { liveSockets: WebSocket[] }).liveSockets) s.close();
        });
        gate?.open();
      }
      const { status } = await admin.get<{ status: string }>(`/project/${projectId}/tasks/${task.id}`);
      if (status === 'success' || status === 'error') break;
      await new Promise((r) => setTimeout(r, 150));
    }
    expect(dropped).toBe(true);

    const stored = await storedLines(task.id);
    expect(stored.filter((l) => l.startsWith('line ')).length).toBe(FAST_LINES);
    // Once the task has ended, the dialog settles on the stored count (and stays there).
    const deadline = Date.now() + WAIT_MS;
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

/** A signed-in page (the admin) at `viewport` in `colorScheme`. */
async function pageAs(viewport = DESKTOP, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const context = await newContext(browser, server.url, { viewport, colorScheme });
  await useSession(context, server.url, admin.cookie);
  return context.newPage();
}

/** Runs a template to its end; returns the task id. */
async function finishedTask(templateId: number, body: Record<string, unknown> = {}) {
  const task = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, {
    template_id: templateId,
    ...body,
  });
  await waitForTaskStatus(admin, projectId, task.id, ['success', 'error'], 60_000);
  return task.id;
}

describe('task log dialog', () => {
  it("shows each line's time in a column when asked, and remembers the choice", async () => {
    const taskId = await finishedTask(templates.Quick as number);
    const stored = await admin.get<{ time: string; output: string }[]>(
      `/project/${projectId}/tasks/${taskId}/output`,
    );
    const page = await pageAs();
    await page.goto(`/project/${projectId}/history?t=${taskId}`);
    const dialog = page.getByRole('dialog');
    const log = dialog.getByRole('log');
    await log.getByText('quick run', { exact: true }).waitFor();
    expect(await log.locator('[data-log-time]').count()).toBe(0);
    const toggle = dialog.getByRole('button', { name: 'Show times' });
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await toggle.click();
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    const line = log.locator('[data-log-line]', { hasText: 'quick run' });
    const at = stored.find((l) => l.output === 'quick run')?.time as string;
    // The local time of day of the stored line, in 24-hour form, before the text.
    const expected = await page.evaluate(
      (iso) => new Date(iso).toLocaleTimeString('en-GB', { hourCycle: 'h23' }),
      at,
    );
    expect(await line.locator('[data-log-time]').textContent()).toBe(expected);
    expect(expected).toMatch(/^\d\d:\d\d:\d\d$/);
    expect(await line.locator('[data-log-text]').textContent()).toBe('quick run');
    // Kept for the next dialog.
    await page.reload();
    await log.getByText('quick run', { exact: true }).waitFor();
    await log.locator('[data-log-time]').first().waitFor();
    await dialog.getByRole('button', { name: 'Show times' }).click();
    await log.locator('[data-log-time]').first().waitFor({ state: 'detached' });
    await page.context().close();
  });

  it('highlights the failing lines, summarises the failure and jumps to the first error', async () => {
    const taskId = await finishedTask(templates.Failing as number);
    const page = await pageAs();
    await page.goto(`/project/${projectId}/history?t=${taskId}`);
    const dialog = page.getByRole('dialog');
    const log = dialog.getByRole('log');
    await log.getByText('ok: step 1', { exact: true }).waitFor();
    // The summary names the first failing line and its text.
    const summary = dialog.locator('[data-failure-summary]');
    await summary.getByText('The task failed. First error, line', { exact: false }).waitFor();
    const lines = (
      await admin.get<{ output: string; line: number }[]>(`/project/${projectId}/tasks/${taskId}/output`)
    ).filter((l) => l.output.startsWith('fatal:'));
    expect(lines).toHaveLength(1);
    expect(await summary.textContent()).toContain(`line ${lines[0]?.line}:`);
    expect(await summary.textContent()).toContain('fatal: [web1]: FAILED! => {"msg": "disk full"}');
    // The failing line is far below the first screen until First error brings it into view, highlighted.
    const fatal = log.locator('[data-log-line][data-error]', { hasText: 'disk full' });
    expect(await fatal.count()).toBe(0);
    await dialog.getByRole('button', { name: 'First error' }).click();
    await fatal.waitFor();
    const box = await fatal.boundingBox();
    const view = await log.boundingBox();
    expect(box && view && box.y >= view.y && box.y + box.height <= view.y + view.height).toBe(true);
    const style = await fatal.evaluate((el) => {
      const s = getComputedStyle(el);
      return { bg: s.backgroundColor, edge: s.borderLeftColor };
    });
    expect(style.edge).toBe('rgb(248, 81, 73)');
    expect(style.bg).not.toBe('rgba(0, 0, 0, 0)');
    // An ordinary line is not highlighted.
    const plain = log.locator('[data-log-line]', { hasText: 'skipping: step 1' }).first();
    expect(await plain.getAttribute('data-error')).toBeNull();
    await page.context().close();

    // A task that succeeded has no summary and nothing to jump to.
    const ok = await finishedTask(templates.Quick as number);
    const okPage = await pageAs();
    await okPage.goto(`/project/${projectId}/history?t=${ok}`);
    const okDialog = okPage.getByRole('dialog');
    await okDialog.getByRole('log').getByText('quick run', { exact: true }).waitFor();
    expect(await okDialog.getByRole('button', { name: 'First error' }).isDisabled()).toBe(true);
    expect(await okDialog.locator('[data-failure-summary]').count()).toBe(0);
    await okPage.context().close();
  });

  it('re-runs a finished task from the dialog, named Re-Build and Re-Deploy for those templates', async () => {
    const quick = await finishedTask(templates.Quick as number);
    const page = await pageAs();
    await page.goto(`/project/${projectId}/history?t=${quick}`);
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('log').getByText('quick run', { exact: true }).waitFor();
    await dialog.getByRole('button', { name: 'Re-Run' }).click();
    // The run dialog opens filled in from the task; its Re-Run starts the new one.
    const runDialog = page.getByRole('dialog').filter({ has: page.locator('#run-task-form') });
    await runDialog.getByRole('button', { name: 'Re-Run' }).click();
    await page.waitForURL((u) => Number(u.searchParams.get('t')) > quick);
    const rerun = Number(new URL(page.url()).searchParams.get('t'));
    const task = await admin.get<{ template_id: number }>(`/project/${projectId}/tasks/${rerun}`);
    expect(task.template_id).toBe(templates.Quick);
    await dialog.getByText(`Task #${rerun}`).waitFor();
    await dialog.getByRole('log').getByText('quick run', { exact: true }).waitFor();
    await waitForTaskStatus(admin, projectId, rerun, ['success', 'error'], 60_000);

    const build = await finishedTask(templates.Builder as number);
    await page.goto(`/project/${projectId}/history?t=${build}`);
    await dialog.getByRole('button', { name: 'Re-Build' }).waitFor();
    expect(await dialog.getByRole('button', { name: 'Re-Run' }).count()).toBe(0);
    const deploy = await finishedTask(templates.Deployer as number, { build_task_id: build });
    await page.goto(`/project/${projectId}/history?t=${deploy}`);
    await dialog.getByRole('button', { name: 'Re-Deploy' }).click();
    await runDialog.getByRole('button', { name: 'Re-Deploy' }).click();
    await page.waitForURL((u) => Number(u.searchParams.get('t')) > deploy);
    const again = Number(new URL(page.url()).searchParams.get('t'));
    expect(
      (await admin.get<{ template_id: number }>(`/project/${projectId}/tasks/${again}`)).template_id,
    ).toBe(templates.Deployer);
    await waitForTaskStatus(admin, projectId, again, ['success', 'error'], 60_000);
    await page.context().close();
  });

  it('shows a failed task with times, its summary and the first error, light and dark, desktop and phone', async () => {
    const taskId = await finishedTask(templates.Failing as number);
    for (const [viewport, scheme, size] of [
      [DESKTOP, 'light', '1280'],
      [DESKTOP, 'dark', '1280'],
      [PHONE, 'light', '390'],
      [PHONE, 'dark', '390'],
    ] as const) {
      const page = await pageAs(viewport, scheme);
      await page.addInitScript(
        (dark) => {
          localStorage.setItem('darkMode', dark);
          localStorage.setItem('logTimes', '1');
        },
        scheme === 'dark' ? 'true' : 'false',
      );
      await page.goto(`/project/${projectId}/history?t=${taskId}`);
      const dialog = page.getByRole('dialog');
      await dialog.locator('[data-failure-summary]').waitFor();
      await dialog.getByRole('button', { name: 'First error' }).click();
      await dialog.getByRole('log').locator('[data-log-line][data-error] [data-log-time]').first().waitFor();
      await dialog.getByRole('button', { name: 'Re-Run' }).waitFor();
      const overflow = await dialog.evaluate((el) => {
        const paper = el.querySelector('.MuiDialog-paper') ?? el;
        return paper.scrollWidth - paper.clientWidth;
      });
      expect(overflow, `${scheme} ${size}`).toBeLessThanOrEqual(1);
      await page.mouse.move(0, 0);
      await shot(page, `task-log-failed-${scheme}-${size}`);
      await page.context().close();
    }
  });
});
