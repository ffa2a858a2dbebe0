#!/usr/bin/env node
// Benchmark: how fast the console shows the first lines of a finished 1,000,000-line task log.
//
//   node bench/log-dialog.mjs [--lines 1000000] [--runs 3]
//
// Starts a real Signalbox server on a temporary SQLite data directory, runs one quick bash task, stores N
// coloured lines as its output straight into the database, then opens the history page in Debian's Chromium and
// measures, inside the page, the time from the click on the task link to the first log line in the DOM; then the
// time until the whole log is loaded (its line count shown) and how many rows the DOM holds scrolled to its end.
// Target on the 2-core CI machine, nothing else running: under 1 s. Needs the web build (npm start builds it).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import {
  freePort,
  jsonClient,
  log,
  opt,
  root,
  scriptRepo,
  seedScriptProject,
  serverEnv,
  signInWhenUp,
} from './lib/bench.mjs';

const LINES = Number(opt('lines', '1000000'));
const RUNS = Number(opt('runs', '3'));
const TARGET_MS = 1000;
const PASSWORD = 'bench-Passw0rd';

/** A Signalbox server on a free port over `work/data`, and the admin's session cookie once it answers. */
async function startServer(work) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, 'packages/server/bin/signalbox.mjs'), 'server'], {
    cwd: root,
    env: serverEnv(work, port, PASSWORD),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const cookie = await signInWhenUp(child, url, 'bench', PASSWORD);
  return { url, child, cookie };
}

async function main() {
  const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-'));
  const repo = scriptRepo(work, 'quick.sh', 'echo "quick run"\n');

  const server = await startServer(work);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  try {
    const { cookie } = server;
    const call = jsonClient(server.url);
    const api = async (method, path, body) => (await call(method, path, body, cookie)).json;
    const { path: apiPath, template } = await seedScriptProject(call, cookie, {
      repo,
      playbook: 'quick.sh',
      name: 'Quick',
    });
    const task = await api('POST', `${apiPath}/tasks`, { template_id: template });
    for (;;) {
      const { status } = await api('GET', `${apiPath}/tasks/${task.id}`);
      if (status === 'success' || status === 'error') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const base = apiPath.replace(/^\/api/, ''); // the project's page path
    log(`storing ${LINES.toLocaleString('en')} lines…`);
    const db = new Database(join(work, 'data', 'signalbox.db'));
    db.pragma('busy_timeout = 10000');
    const insert = db.prepare('INSERT INTO task_output (task_id, time, output) VALUES (?, ?, ?)');
    const time = new Date().toISOString();
    db.transaction(() => {
      for (let i = 1; i <= LINES; i++) insert.run(task.id, time, `line ${i} \u001b[36mcyan ${i}\u001b[0m`);
    })();
    db.close();

    const timings = [];
    const wholeLog = [];
    const rowsAtEnd = [];
    for (let run = 0; run < RUNS; run++) {
      const context = await browser.newContext({
        baseURL: server.url,
        viewport: { width: 1280, height: 800 },
      });
      const [name, ...value] = cookie.split('=');
      await context.addCookies([{ name, value: value.join('='), url: server.url }]);
      const page = await context.newPage();
      await page.goto(`${base}/history`);
      const link = page.getByRole('link', { name: `#${task.id}` });
      await link.waitFor();
      // Measured in the page: from the click to the first log line in the DOM.
      await page.evaluate(() => {
        document.addEventListener('click', () => (window.clickAt = performance.now()), {
          capture: true,
          once: true,
        });
        new MutationObserver((_m, observer) => {
          for (const el of document.querySelectorAll('[data-log-line]'))
            if (el.textContent === 'line 1 cyan 1') {
              window.firstLineAt = performance.now();
              observer.disconnect();
            }
        }).observe(document.body, { childList: true, subtree: true });
      });
      await link.click();
      const dialog = page.getByRole('dialog');
      const logView = dialog.getByRole('log');
      await logView.getByText('line 1 cyan 1', { exact: true }).waitFor();
      timings.push(await page.evaluate(() => window.firstLineAt - window.clickAt));
      // Then the whole log: every page loaded (the line count shown), scrolled to its last line, and how many rows
      // the DOM holds there (the view draws only what is on screen).
      // (The task's own output comes before the stored lines, so the count is a little over LINES.)
      await page.waitForFunction(
        (lines) =>
          [...document.querySelectorAll('[role="dialog"] *')].some(
            (el) =>
              el.children.length === 0 && Number(/^Lines: (\d+)$/.exec(el.textContent ?? '')?.[1]) >= lines,
          ),
        LINES,
        { timeout: 600_000, polling: 250 },
      );
      wholeLog.push(await page.evaluate(() => performance.now() - window.clickAt));
      await logView.locator('[data-virtuoso-scroller]').evaluate((el) => el.scrollTo(0, el.scrollHeight));
      await logView.getByText(`line ${LINES} cyan ${LINES}`, { exact: true }).waitFor();
      rowsAtEnd.push(await logView.locator('[data-log-line]').count());
      await context.close();
    }
    const result = {
      lines: LINES,
      firstLinesMs: timings.map(Math.round),
      bestMs: Math.round(Math.min(...timings)),
      wholeLogMs: wholeLog.map(Math.round),
      domRowsAtEnd: rowsAtEnd,
      targetMs: TARGET_MS,
      met: Math.min(...timings) < TARGET_MS,
      load: os.loadavg()[0],
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await browser.close();
    server.child.kill('SIGTERM');
    await new Promise((r) => server.child.once('exit', r));
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
