#!/usr/bin/env node
// Benchmark: does the live log of a fast task show exactly the stored lines?
//
//   node bench/live-log.mjs [--lines 200000] [--chunk 5000] [--latency 0]
//
// Starts a real Signalbox server on a temporary SQLite data directory, runs a Bash task printing N numbered lines
// as fast as `seq` writes them (in bursts of --chunk lines, 0.2 s apart), opens the task log dialog in Debian's
// Chromium while the task runs, and once the task has ended records the line count the dialog shows against the
// stored count, the largest surplus of shown over stored lines seen while it ran, and the match counts of a few
// searches against those of the stored log. --latency delays every socket message in the page by that many ms
// (a slow link or a buffering proxy). Runs the server from its sources; needs the web build.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import {
  freePort,
  jsonClient,
  opt,
  root,
  scriptRepo,
  seedScriptProject,
  serverEnv,
  signInWhenUp,
} from './lib/bench.mjs';

const LINES = Number(opt('lines', '200000'));
const CHUNK = Number(opt('chunk', '5000'));
const LATENCY = Number(opt('latency', '0'));
const PASSWORD = 'bench-Passw0rd';
const QUERIES = ['2500', '77', 'line 0999', `line ${String(LINES).padStart(6, '0')}`];

async function main() {
  const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-'));
  const bursts = Math.ceil(LINES / CHUNK);
  const script = `for c in $(seq 0 ${bursts - 1}); do s=$((c*${CHUNK}+1)); e=$((c*${CHUNK}+${CHUNK})); [ $e -gt ${LINES} ] && e=${LINES}; seq -f "line %06g" $s $e; sleep 0.2; done\n`;
  const repo = scriptRepo(work, 'flood.sh', script);
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, 'packages/server/bin/signalbox-src.mjs'), 'server'], {
    cwd: root,
    env: serverEnv(work, port, PASSWORD),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const cookie = await signInWhenUp(child, url, 'bench', PASSWORD);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  try {
    const call = jsonClient(url);
    const api = async (method, path, body) => (await call(method, path, body, cookie)).json;
    const { path: apiPath, template } = await seedScriptProject(call, cookie, {
      repo,
      playbook: 'flood.sh',
      name: 'Flood',
    });
    const context = await browser.newContext({ baseURL: url, viewport: { width: 1280, height: 800 } });
    const [name, ...value] = cookie.split('=');
    await context.addCookies([{ name, value: value.join('='), url }]);
    if (LATENCY > 0)
      await context.addInitScript((delay) => {
        const Native = window.WebSocket;
        window.WebSocket = class extends Native {
          set onmessage(handler) {
            super.onmessage = handler ? (event) => setTimeout(() => handler.call(this, event), delay) : null;
          }
          get onmessage() {
            return super.onmessage;
          }
        };
      }, LATENCY);
    const page = await context.newPage();
    const task = await api('POST', `${apiPath}/tasks`, { template_id: template });
    const started = Date.now();
    for (;;) {
      const { status } = await api('GET', `${apiPath}/tasks/${task.id}`);
      if (status === 'running') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const base = apiPath.replace(/^\/api/, '');
    await page.goto(`${base}/history?t=${task.id}`);
    const dialog = page.getByRole('dialog');
    const chip = dialog.getByText(/^Lines: /);
    await chip.waitFor();
    const shown = async () => Number(((await chip.textContent()) ?? '').replace(/\D/g, ''));
    const storedAtLeast = async (n) =>
      n === 0 ||
      (await api('GET', `${apiPath}/tasks/${task.id}/output?offset=${n - 1}&limit=1`)).length === 1;
    // While it runs: how far the shown count ran ahead of the stored log (it must never).
    let samples = 0;
    let ahead = 0;
    let status = 'running';
    while (status !== 'success' && status !== 'error') {
      const n = await shown();
      samples++;
      if (!(await storedAtLeast(n))) {
        let stored = n - 1;
        while (stored > 0 && !(await storedAtLeast(stored))) stored -= Math.max(1, Math.ceil(stored / 100));
        ahead = Math.max(ahead, n - stored);
      }
      ({ status } = await api('GET', `${apiPath}/tasks/${task.id}`));
      await new Promise((r) => setTimeout(r, 250));
    }
    const taskSeconds = (Date.now() - started) / 1000;
    const raw = await (
      await fetch(`${url}${apiPath}/tasks/${task.id}/raw_output`, { headers: { cookie } })
    ).text();
    const stored = raw.slice(0, -1).split('\n');
    // The dialog's count once it has settled (or 30 s after the end).
    const deadline = Date.now() + 30_000;
    let finalShown = await shown();
    while (finalShown !== stored.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      finalShown = await shown();
    }
    const settleMs = Date.now() - (deadline - 30_000);
    const searches = {};
    const box = dialog.getByRole('textbox', { name: 'Search in log' });
    const status2 = dialog.getByText(/^(\d+ of \d+|No matches)$/);
    const mark = dialog.getByRole('log').locator('mark').first();
    for (const query of QUERIES) {
      await box.fill(query);
      let found;
      for (;;) {
        await status2.waitFor();
        const marked = (await mark.count()) ? await mark.textContent() : null;
        const text = (await status2.textContent()) ?? '';
        if (marked?.toLowerCase() === query.toLowerCase()) {
          found = Number(/of (\d+)/.exec(text)?.[1]);
          break;
        }
        if (text === 'No matches' && !marked) {
          found = 0;
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      searches[query] = {
        shown: found,
        stored: stored.filter((l) => l.toLowerCase().includes(query)).length,
      };
    }
    const result = {
      lines: LINES,
      latencyMs: LATENCY,
      taskSeconds: Math.round(taskSeconds * 10) / 10,
      storedLines: stored.length,
      shownLines: finalShown,
      settleMs,
      samplesWhileRunning: samples,
      mostShownAheadOfStored: ahead,
      searches,
      equal:
        finalShown === stored.length &&
        ahead === 0 &&
        Object.values(searches).every((s) => s.shown === s.stored),
      load: os.loadavg()[0],
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await browser.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
