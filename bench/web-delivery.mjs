#!/usr/bin/env node
// Bytes and time of loading the templates page (/project/<id>/templates) in Debian's Chromium, cold (a fresh
// browser profile: empty HTTP cache) and warm (the same profile opening the page again, as a user coming back),
// read from the browser's own network events (CDP Network.*):
//
//   bytes        encodedDataLength of every response: what crossed the wire, headers included
//   requests     responses the page needed from the server (those from the browser's cache are not counted)
//   time         the first request → the last response finished, in ms (the page waited for until it shows its
//                New Template button)
//
// The server is run from a checkout's sources (packages/server/bin/signalbox-src.mjs) with that checkout's web build,
// so the same bench measures another checkout too (e.g. main's, extracted with `git archive main`):
//
//   node bench/web-delivery.mjs                          # this checkout, prints JSON
//   node bench/web-delivery.mjs --checkout /tmp/main --label "main (before)" --write
//   node bench/web-delivery.mjs --write                  # also adds a row to bench/README.md's table
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import {
  addReadmeRows,
  args,
  freePort,
  jsonClient,
  log,
  opt,
  root,
  serverEnv,
  signIn,
  sleep,
} from './lib/bench.mjs';

const checkout = opt('checkout', root);
const label = opt('label', checkout === root ? 'this checkout' : checkout);
const RUNS = Number(opt('runs', '3'));
if (!existsSync(join(checkout, 'packages/web/dist/index.html')))
  throw new Error(`${checkout} has no web build: run npm run build -w @signalbox/web there`);

const work = mkdtempSync(join(os.tmpdir(), 'sb-bench-web-'));
const port = await freePort();
const password = 'bench-password-1';
const base = `http://127.0.0.1:${port}`;
const server = spawn(process.execPath, [join(checkout, 'packages/server/bin/signalbox-src.mjs'), 'server'], {
  env: serverEnv(work, port, password),
  stdio: ['ignore', 'ignore', 'inherit'],
});
const loadAtStart = os.loadavg()[0];
let browser;
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`${base}/api/ping`).catch(() => null))?.ok) break;
    if (i > 600) throw new Error('the server did not start');
    await sleep(100);
  }
  const cookie = await signIn(base, 'bench', password);
  const call = jsonClient(base);
  const project = (await call('POST', '/api/projects', { name: 'Bench' }, cookie)).json;
  const path = `/project/${project.id}/templates`;

  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });

  /** Opens `path` in `context`'s new page; what the network events say about that load. */
  async function load(context) {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    const responses = new Map();
    let bytes = 0;
    let first = null;
    let last = 0;
    cdp.on('Network.requestWillBeSent', (e) => {
      first ??= e.timestamp;
    });
    cdp.on('Network.responseReceived', (e) => {
      responses.set(e.requestId, {
        url: e.response.url,
        cached: e.response.fromDiskCache || e.response.fromPrefetchCache || e.response.fromServiceWorker,
        status: e.response.status,
        encoding: e.response.headers['content-encoding'] ?? e.response.headers['Content-Encoding'] ?? '',
      });
    });
    cdp.on('Network.requestServedFromCache', (e) => {
      responses.set(e.requestId, { cached: true });
    });
    cdp.on('Network.loadingFinished', (e) => {
      const r = responses.get(e.requestId);
      if (r && !r.cached) {
        bytes += e.encodedDataLength;
        r.bytes = e.encodedDataLength;
      }
      last = Math.max(last, e.timestamp);
    });
    await page.goto(base + path);
    // The page is there (its lazily loaded chunks ran), and nothing more is asked for.
    await page.getByRole('button', { name: 'New Template' }).waitFor({ timeout: 60_000 });
    await page.waitForLoadState('networkidle');
    await page.close();
    const fetched = [...responses.values()].filter((r) => !r.cached && r.url);
    return {
      bytes,
      requests: fetched.length,
      notModified: fetched.filter((r) => r.status === 304).length,
      compressed: fetched.filter((r) => r.encoding).length,
      ms: Math.round((last - first) * 1000),
    };
  }

  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addCookies([
      { name: cookie.split('=')[0], value: cookie.split('=').slice(1).join('='), url: base },
    ]);
    const cold = await load(context);
    const warm = await load(context);
    await context.close();
    runs.push({ cold, warm });
    log(`run ${i + 1}: cold ${JSON.stringify(cold)} warm ${JSON.stringify(warm)}`);
  }
  const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
  const pick = (which) => ({
    bytes: median(runs.map((r) => r[which].bytes)),
    requests: median(runs.map((r) => r[which].requests)),
    notModified: median(runs.map((r) => r[which].notModified)),
    compressed: median(runs.map((r) => r[which].compressed)),
    ms: median(runs.map((r) => r[which].ms)),
  });
  const result = { label, cold: pick('cold'), warm: pick('warm'), runs: RUNS, load: loadAtStart };
  console.log(JSON.stringify(result, null, 2));
  if (args.includes('--write')) {
    const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
    const cpu = os.cpus()[0]?.model.split(' ').slice(0, 2).join(' ') ?? 'unknown';
    const when = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    addReadmeRows('<!-- web-delivery:end -->', [
      `| ${when} | ${cpu} (${os.cpus().length} cores), Node ${process.version}, load ${loadAtStart.toFixed(1)} | ${label} | ${kb(result.cold.bytes)} | ${result.cold.requests} (${result.cold.compressed} compressed) | ${result.cold.ms} ms | ${kb(result.warm.bytes)} | ${result.warm.requests} | ${result.warm.ms} ms |`,
    ]);
  }
} finally {
  await browser?.close();
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(work, { recursive: true, force: true });
}
