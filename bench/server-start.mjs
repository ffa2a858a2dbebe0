#!/usr/bin/env node
// Start time and idle memory of the server, run two ways: from the TypeScript sources through tsx
// (packages/server/bin/signalbox-src.mjs, how every start ran before the build) and from the esbuild bundle
// (packages/server/bin/signalbox.mjs with the node flags of `npm start`, how it runs it). On SQLite, for each way:
//
//   first start  spawn → first 200 from GET /api/ping on a fresh data dir (migrations, admin created: bcrypt cost 10)
//   restart      the same on the data dir the first start left (nothing to migrate or create)
//   idle RSS     VmRSS of the server process 3 s after a restart answered, no request in between
//   help         spawn → exit of `signalbox help`
//
// Runs alternate between the two ways; the median of --runs (5) of each is reported.
//
//   node bench/server-start.mjs             # builds the server if stale, prints JSON
//   node bench/server-start.mjs --write     # also adds a row to bench/README.md's table
import { execSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { serverBuildIsStale } from '../packages/server/scripts/build-state.mjs';
import { addReadmeRows, args, freePort, log, opt, readProc, root, serverEnv, sleep } from './lib/bench.mjs';

const RUNS = Number(opt('runs', '5'));
const IDLE_MS = 3000;
const TARGET_START_S = 1.5;
const TARGET_RSS_MB = 100;

const ways = {
  tsx: [join(root, 'packages/server/bin/signalbox-src.mjs')],
  bundle: ['--max-semi-space-size=2', join(root, 'packages/server/bin/signalbox.mjs')],
};

if (serverBuildIsStale()) execSync('npm run build -w @signalbox/server', { cwd: root, stdio: 'inherit' });

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const exited = (child) =>
  child.exitCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r));

/** Starts the server `way` on `dataDir`; seconds until it answers the ping, its pid, and a stop function. */
async function startServer(way, work) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...ways[way], 'server'], {
    env: serverEnv(work, port, 'bench-password-1'),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${way} server exited with ${child.exitCode}: ${stderr}`);
    const ok = await fetch(`http://127.0.0.1:${port}/api/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await sleep(10);
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    seconds,
    pid: child.pid,
    stop: async () => {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}

async function helpSeconds(way) {
  const started = performance.now();
  const child = spawn(process.execPath, [...ways[way], 'help'], { stdio: 'ignore' });
  await exited(child);
  if (child.exitCode !== 0) throw new Error(`${way} help exited with ${child.exitCode}`);
  return (performance.now() - started) / 1000;
}

const samples = Object.fromEntries(
  Object.keys(ways).map((way) => [way, { firstStart: [], restart: [], idleRss: [], help: [] }]),
);
const load = os.loadavg()[0];
for (let run = 1; run <= RUNS; run++) {
  for (const way of Object.keys(ways)) {
    const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-start-'));
    try {
      const first = await startServer(way, work);
      await first.stop();
      const again = await startServer(way, work);
      await sleep(IDLE_MS);
      const rss = readProc(again.pid, 'VmRSS');
      await again.stop();
      const help = await helpSeconds(way);
      const s = samples[way];
      s.firstStart.push(first.seconds);
      s.restart.push(again.seconds);
      s.idleRss.push(rss / 2 ** 20);
      s.help.push(help);
      log(
        `run ${run} ${way}: first start ${first.seconds.toFixed(2)} s, restart ${again.seconds.toFixed(2)} s,` +
          ` idle RSS ${(rss / 2 ** 20).toFixed(0)} MB, help ${help.toFixed(2)} s`,
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
}

const result = {
  date: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
  machine: `${os.cpus()[0]?.model.trim()} (${os.cpus().length} cores), Node ${process.version}, load ${load.toFixed(1)} at start`,
  runs: RUNS,
  ...Object.fromEntries(
    Object.entries(samples).map(([way, s]) => [
      way,
      {
        firstStartS: median(s.firstStart),
        restartS: median(s.restart),
        idleRssMB: median(s.idleRss),
        helpS: median(s.help),
      },
    ]),
  ),
};
console.log(JSON.stringify(result, null, 2));

if (args.includes('--write')) {
  const yes = (ok) => (ok ? 'yes' : '**no**');
  const cells = (w) => [
    `${w.firstStartS.toFixed(2)} s`,
    `${w.restartS.toFixed(2)} s (${yes(w.restartS < TARGET_START_S)})`,
    `${w.idleRssMB.toFixed(0)} MB (${yes(w.idleRssMB < TARGET_RSS_MB)})`,
    `${w.helpS.toFixed(2)} s`,
  ];
  const row = `| ${[result.date, result.machine, ...cells(result.tsx), ...cells(result.bundle)].join(' | ')} |`;
  addReadmeRows('<!-- server start results:end -->', [row]);
}
