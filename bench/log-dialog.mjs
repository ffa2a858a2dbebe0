#!/usr/bin/env node
// Benchmark: how fast the console shows the first lines of a finished 1,000,000-line task log.
//
//   node bench/log-dialog.mjs [--lines 1000000] [--runs 3]
//
// Starts a real Signalbox server on a temporary SQLite data directory, runs one quick bash task, stores N
// coloured lines as its output straight into the database, then opens the history page in Debian's Chromium and
// measures, inside the page, the time from the click on the task link to the first log line in the DOM.
// Target on the 2-core CI machine, nothing else running: under 1 s. Needs the web build (npm start builds it).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import { freePort, log, opt, root, scriptRepo } from './lib/bench.mjs';

const LINES = Number(opt('lines', '1000000'));
const RUNS = Number(opt('runs', '3'));
const TARGET_MS = 1000;
const ADMIN = { login: 'bench', password: 'bench-Passw0rd' };

async function startServer(dataDir) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, 'packages/server/bin/signalbox.mjs'), 'server'], {
    cwd: root,
    env: {
      ...process.env,
      SIGNALBOX_DATA_DIR: dataDir,
      SIGNALBOX_PORT: String(port),
      SIGNALBOX_HOST: '127.0.0.1',
      SIGNALBOX_ADMIN_LOGIN: ADMIN.login,
      SIGNALBOX_ADMIN_PASSWORD: ADMIN.password,
      SIGNALBOX_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; ; ) {
    if (child.exitCode !== null) throw new Error('server exited');
    const up = await fetch(`${url}/api/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { url, child };
    if (Date.now() > deadline) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function signIn(url) {
  const r = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth: ADMIN.login, password: ADMIN.password }),
  });
  if (!r.ok) throw new Error(`sign-in: ${r.status}`);
  const cookie = r.headers.getSetCookie()[0].split(';')[0];
  const api = async (method, path, body) => {
    const res = await fetch(`${url}/api${path}`, {
      method,
      headers: { cookie, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  return { cookie, api };
}

async function main() {
  const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-'));
  const repo = scriptRepo(work, 'quick.sh', 'echo "quick run"\n');

  const dataDir = join(work, 'data');
  const server = await startServer(dataDir);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  try {
    const { cookie, api } = await signIn(server.url);
    const project = await api('POST', '/projects', { name: 'Bench' });
    const base = `/project/${project.id}`;
    const key = await api('POST', `${base}/keys`, { name: 'None', type: 'none' });
    const repository = await api('POST', `${base}/repositories`, {
      name: 'quick',
      git_url: repo,
      git_branch: '',
      ssh_key_id: key.id,
    });
    const environment = await api('POST', `${base}/environment`, { name: 'Empty', json: '{}', env: '{}' });
    const template = await api('POST', `${base}/templates`, {
      name: 'Quick',
      app: 'bash',
      playbook: 'quick.sh',
      repository_id: repository.id,
      environment_id: environment.id,
    });
    const task = await api('POST', `${base}/tasks`, { template_id: template.id });
    for (;;) {
      const { status } = await api('GET', `${base}/tasks/${task.id}`);
      if (status === 'success' || status === 'error') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    log(`storing ${LINES.toLocaleString('en')} lines…`);
    const db = new Database(join(dataDir, 'signalbox.db'));
    db.pragma('busy_timeout = 10000');
    const insert = db.prepare('INSERT INTO task_output (task_id, time, output) VALUES (?, ?, ?)');
    const time = new Date().toISOString();
    db.transaction(() => {
      for (let i = 1; i <= LINES; i++) insert.run(task.id, time, `line ${i} \u001b[36mcyan ${i}\u001b[0m`);
    })();
    db.close();

    const timings = [];
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
      await page.getByRole('dialog').getByRole('log').getByText('line 1 cyan 1', { exact: true }).waitFor();
      timings.push(await page.evaluate(() => window.firstLineAt - window.clickAt));
      await context.close();
    }
    const result = {
      lines: LINES,
      firstLinesMs: timings.map(Math.round),
      bestMs: Math.round(Math.min(...timings)),
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
