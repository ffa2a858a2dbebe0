#!/usr/bin/env node
// Benchmark: one bash task printing N lines (default 1,000,000) through a real Signalbox server.
//
//   node bench/task-output.mjs [--lines 1000000] [--write] [--keep] [--profile DIR]
//
// Measures lines/s stored (POST -> task finished with every line in task_output), lines/s delivered to a
// WebSocket client on /api/ws, time to the last line on the socket, and the server's peak RSS (VmHWM of the
// server process). A baseline in the same run inserts the same lines with a bare batched better-sqlite3 loop.
// --write adds a row to the results table in bench/README.md; --keep leaves the temp data dir behind;
// --profile DIR writes a V8 CPU profile of the server (open it in Chrome DevTools) into DIR.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import WebSocket from 'ws';
import {
  addReadmeRows,
  args,
  cpuSeconds,
  freePort,
  jsonClient,
  log,
  opt,
  readProc,
  root,
  scriptRepo,
  seedScriptProject,
  serverEnv,
  signInWhenUp,
  sleep,
} from './lib/bench.mjs';

const LINES = Number(opt('lines', '1000000'));
const WRITE = args.includes('--write');
const KEEP = args.includes('--keep');
const TIMEOUT_MS = Number(opt('timeout', '600')) * 1000;
const PROFILE = opt('profile', '');

const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-'));
const round = (n) => Math.round(n);

/**
 * The same rows as the engine writes, inserted by a bare loop: 500 rows per transaction in prepared 50-row
 * statements (the engine's own SQLite statement shape), WAL, synchronous=NORMAL. The ceiling for storing.
 */
function baseline(lines) {
  const db = new Database(join(work, 'baseline.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE task_output (id integer PRIMARY KEY AUTOINCREMENT, task_id integer NOT NULL,
    time varchar(40) NOT NULL, output text NOT NULL);
    CREATE INDEX task_output_task_idx ON task_output (task_id, id);`);
  const sql = 'INSERT INTO task_output (task_id, time, output) VALUES ';
  const one = db.prepare(`${sql}(?, ?, ?)`);
  const many = db.prepare(sql + Array(50).fill('(?, ?, ?)').join(', '));
  const batch = db.transaction((rows) => {
    let i = 0;
    for (; i + 50 <= rows.length; i += 50) {
      const params = [];
      for (let j = i; j < i + 50; j++) params.push(1, rows[j][0], rows[j][1]);
      many.run(params);
    }
    for (; i < rows.length; i++) one.run(1, rows[i][0], rows[i][1]);
  });
  const started = performance.now();
  let rows = [];
  for (let i = 1; i <= lines; i++) {
    rows.push([new Date().toISOString(), `line ${i}`]);
    if (rows.length === 500) {
      batch(rows);
      rows = [];
    }
  }
  if (rows.length) batch(rows);
  const seconds = (performance.now() - started) / 1000;
  const count = db.prepare('SELECT count(*) AS n FROM task_output').get().n;
  db.close();
  if (count !== lines) throw new Error(`baseline stored ${count} of ${lines} lines`);
  return { seconds, linesPerSecond: lines / seconds };
}

async function main() {
  const loadAtStart = os.loadavg()[0];
  log(`work dir ${work}; ${LINES.toLocaleString('en')} lines`);
  log('baseline: bare batched better-sqlite3 loop…');
  const base = baseline(LINES);
  log(`baseline ${round(base.linesPerSecond).toLocaleString('en')} lines/s`);

  // The repository: a local directory (used in place) holding the script that prints the lines.
  const repo = scriptRepo(work, 'print.sh', `#!/bin/bash\nseq -f 'line %.0f' 1 ${LINES}\n`);

  const port = await freePort();
  const password = 'bench-password-1';
  const nodeArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : [];
  const server = spawn(
    process.execPath,
    [...nodeArgs, join(root, 'packages/server/bin/signalbox.mjs'), 'server'],
    {
      env: serverEnv(work, port, password),
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  // Never leave the server behind, even when this script is interrupted.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      if (server.exitCode === null) server.kill('SIGKILL');
      if (!KEEP) rmSync(work, { recursive: true, force: true });
      process.exit(130);
    });
  }
  const base_url = `http://127.0.0.1:${port}`;
  let cookie = '';
  const call = jsonClient(base_url);
  const api = (method, path, body) => call(method, path, body, cookie);

  try {
    cookie = await signInWhenUp(server, base_url, 'bench', password);
    const idleRss = readProc(server.pid, 'VmRSS');

    const { path: p, template } = await seedScriptProject(call, cookie, {
      repo,
      playbook: 'print.sh',
      name: 'Print lines',
    });

    // The socket client: counts this task's lines and notes when the last one arrives.
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/ws`, { headers: { cookie } });
    let socketClosed = null;
    await new Promise((resolve) => {
      ws.once('open', resolve);
      ws.once('error', (err) => {
        socketClosed = `connect failed: ${err.message}`;
        log(socketClosed);
        resolve();
      });
    });
    let taskId = 0;
    let delivered = 0;
    let firstLineAt = 0;
    let lastLineAt = 0;
    const early = [];
    const countLog = (msg) => {
      const n =
        typeof msg.output === 'string'
          ? msg.output.split('\n').filter((l) => l.startsWith('line ')).length
          : 0;
      if (!n) return;
      delivered += n;
      if (!firstLineAt) firstLineAt = performance.now();
      lastLineAt = performance.now();
    };
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      if (msg.type !== 'log') return;
      if (!taskId) early.push(msg);
      else if (msg.task_id === taskId) countLog(msg);
    });
    ws.on('close', (code, reason) => {
      socketClosed ??= `${code} ${reason}`;
    });
    ws.on('error', (e) => log('socket error', e.message));

    let peakRssPolled = 0;
    const rssTimer = setInterval(() => {
      peakRssPolled = Math.max(peakRssPolled, readProc(server.pid, 'VmRSS'));
    }, 50);

    const cpuBefore = cpuSeconds(server.pid);
    const clientCpuBefore = process.cpuUsage();
    const posted = performance.now();
    taskId = (await api('POST', `${p}/tasks`, { template_id: template })).json.id;
    for (const msg of early.splice(0)) if (msg.task_id === taskId) countLog(msg);
    log(`task ${taskId} posted`);

    let task;
    let finishedAt = 0;
    for (;;) {
      task = (await api('GET', `${p}/tasks/${taskId}`)).json;
      if (['success', 'error', 'stopped'].includes(task.status)) {
        finishedAt = performance.now();
        break;
      }
      if (performance.now() - posted > TIMEOUT_MS) throw new Error(`task still ${task.status} after timeout`);
      await sleep(50);
    }
    log(
      `task ${task.status} after ${((finishedAt - posted) / 1000).toFixed(2)} s; socket has ${delivered} lines`,
    );
    // Give the socket a moment to drain what was published before the final status.
    const drainDeadline = performance.now() + 30_000;
    while (delivered < LINES && performance.now() < drainDeadline && !socketClosed) await sleep(20);
    clearInterval(rssTimer);
    const peakRss = Math.max(readProc(server.pid, 'VmHWM'), peakRssPolled);
    const socketState = socketClosed ?? 'open until the end';
    const serverCpu = cpuSeconds(server.pid) - cpuBefore;
    const clientCpu = process.cpuUsage(clientCpuBefore);

    // Verify storage through the API: the last lines are there, in order.
    const tail = (await api('GET', `${p}/tasks/${taskId}/output?offset=0&limit=5`)).json;
    ws.close();
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    const db = new Database(join(work, 'data', 'signalbox.db'), { readonly: true });
    const stored = db
      .prepare("SELECT count(*) AS n FROM task_output WHERE task_id = ? AND output LIKE 'line %'")
      .get(taskId).n;
    const ordered = db
      .prepare(
        "SELECT output FROM task_output WHERE task_id = ? AND output LIKE 'line %' ORDER BY id DESC LIMIT 1",
      )
      .get(taskId)?.output;
    db.close();

    const storeSeconds = (finishedAt - posted) / 1000;
    const lastLineSeconds = lastLineAt ? (lastLineAt - posted) / 1000 : null;
    const result = {
      date: new Date().toISOString(),
      machine: `${os.cpus()[0]?.model ?? 'cpu'} (${os.cpus().length} cores), ${round(os.totalmem() / 2 ** 30)} GB RAM, ${os.platform()} ${os.release()}`,
      node: process.version,
      loadAverageAtStart: loadAtStart,
      lines: LINES,
      taskStatus: task.status,
      storedLines: stored,
      lastStoredLine: ordered,
      firstApiLines: Array.isArray(tail) ? tail.map((l) => l.output) : tail,
      storeSeconds,
      storedLinesPerSecond: stored / storeSeconds,
      deliveredLines: delivered,
      socket: socketState,
      timeToFirstLineSeconds: firstLineAt ? (firstLineAt - posted) / 1000 : null,
      timeToLastLineSeconds: lastLineSeconds,
      deliveredLinesPerSecond: lastLineSeconds ? delivered / lastLineSeconds : 0,
      serverCpuSeconds: serverCpu,
      clientCpuSeconds: (clientCpu.user + clientCpu.system) / 1e6,
      serverIdleRssMB: idleRss / 2 ** 20,
      serverPeakRssMB: peakRss / 2 ** 20,
      baselineSeconds: base.seconds,
      baselineLinesPerSecond: base.linesPerSecond,
    };
    console.log(JSON.stringify(result, null, 2));
    if (WRITE) writeReadme(result);
    return result;
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL');
    if (!KEEP) rmSync(work, { recursive: true, force: true });
  }
}

function writeReadme(r) {
  const fmt = (n) => round(n).toLocaleString('en');
  const pass = (ok) => (ok ? 'yes' : '**no**');
  const row = `| ${r.date.slice(0, 16).replace('T', ' ')} UTC | ${r.machine}, Node ${r.node}, load ${r.loadAverageAtStart.toFixed(1)} at start | ${fmt(r.lines)} | ${r.taskStatus} | ${fmt(r.storedLines)} | ${fmt(r.storedLinesPerSecond)} (${pass(r.storedLinesPerSecond >= 200_000)}) | ${fmt(r.deliveredLines)} | ${fmt(r.deliveredLinesPerSecond)} (${pass(r.deliveredLinesPerSecond >= 200_000 && r.deliveredLines === r.lines)}) | ${r.timeToLastLineSeconds?.toFixed(2) ?? '-'} s | ${r.serverPeakRssMB.toFixed(0)} MB (${pass(r.serverPeakRssMB < 300)}) | ${fmt(r.baselineLinesPerSecond)} |`;
  addReadmeRows('<!-- results:end -->', [row]);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
