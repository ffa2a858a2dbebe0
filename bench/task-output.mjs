#!/usr/bin/env node
// Benchmark: one bash task printing N lines (default 1,000,000) through a real Signalbox server, against the bare
// pipeline that does the same work without the server.
//
//   node bench/task-output.mjs [--lines 1000000] [--rounds 3] [--write] [--keep] [--profile DIR]
//
// Each round runs, one after the other so that both meet the same load: the bare pipeline (bash on the same script,
// its stdout split into lines and inserted by a better-sqlite3 loop in the engine's statement shape, 500 rows per
// transaction, WAL, synchronous=NORMAL, in this process), then the same task through the server (one server for all
// rounds). Per round: lines/s stored (POST -> task finished with every line in task_output), lines/s delivered to a
// WebSocket client on /api/ws taking `logs` batches as the console does (lines the server skipped while the client
// was behind are read as pages, like the console, and counted apart), time to the last line, and the ratio of the
// server's stored lines/s to the bare pipeline's. The report gives each round and the medians; the server's peak RSS is VmHWM over all rounds.
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
  machineLabel,
  opt,
  readProc,
  root,
  scriptRepo,
  seedScriptProject,
  serverEnv,
  signInWhenUp,
  sleep,
  stats,
} from './lib/bench.mjs';

const LINES = Number(opt('lines', '1000000'));
const WRITE = args.includes('--write');
const KEEP = args.includes('--keep');
const TIMEOUT_MS = Number(opt('timeout', '600')) * 1000;
const PROFILE = opt('profile', '');
const ROUNDS = Number(opt('rounds', '3'));

const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-'));

/**
 * The bare pipeline: bash on `script`, its stdout split into lines, the same rows as the engine writes inserted by a
 * bare loop — 500 rows per transaction in prepared 50-row statements (the engine's own SQLite statement shape), WAL,
 * synchronous=NORMAL — into a fresh table. Timed from the spawn to the last commit.
 */
async function barePipeline(script, lines, round) {
  const db = new Database(join(work, `bare-${round}.db`));
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
  const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'ignore'] });
  child.stdout.setEncoding('utf8');
  let rest = '';
  let rows = [];
  for await (const chunk of child.stdout) {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    const time = new Date().toISOString();
    for (const line of parts) {
      rows.push([time, line]);
      if (rows.length === 500) {
        batch(rows);
        rows = [];
      }
    }
  }
  if (rest) rows.push([new Date().toISOString(), rest]);
  if (rows.length) batch(rows);
  const seconds = (performance.now() - started) / 1000;
  const count = db.prepare('SELECT count(*) AS n FROM task_output').get().n;
  db.close();
  rmSync(join(work, `bare-${round}.db`), { force: true });
  if (count !== lines) throw new Error(`the bare pipeline stored ${count} of ${lines} lines`);
  return { seconds, linesPerSecond: lines / seconds };
}

async function main() {
  const loadAtStart = os.loadavg()[0];
  log(`work dir ${work}; ${LINES.toLocaleString('en')} lines, ${ROUNDS} rounds`);

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

    // The socket client, as the console is: it takes output as `logs` batches and counts each task's lines by
    // position, noting when the first and the last arrived. A gap (lines the server did not send while the client
    // was behind) is read through the output API as the console reads it, page by page, and counted apart.
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/ws?logs=batches`, { headers: { cookie } });
    let socketClosed = null;
    await new Promise((resolve) => {
      ws.once('open', resolve);
      ws.once('error', (err) => {
        socketClosed = `connect failed: ${err.message}`;
        log(socketClosed);
        resolve();
      });
    });
    /**
     * Per task id: the next position expected, lines taken from the socket and read as pages, when the first and the
     * last line arrived, and the gaps still to read ([from, to] positions).
     */
    const received = new Map();
    const pageSize = 5000;
    const readGaps = async (taskId, seen) => {
      if (seen.reading) return;
      seen.reading = true;
      try {
        while (seen.gaps.length) {
          const [from, to] = seen.gaps[0];
          const limit = Math.min(pageSize, to - from + 1);
          const rows = (await api('GET', `${p}/tasks/${taskId}/output?offset=${from - 1}&limit=${limit}`))
            .json;
          if (!rows.length) throw new Error(`task ${taskId}: no stored lines at ${from}`);
          seen.paged += rows.filter((r) => r.output.startsWith('line ')).length;
          seen.last = performance.now();
          if (from + rows.length > to) seen.gaps.shift();
          else seen.gaps[0] = [from + rows.length, to];
        }
      } finally {
        seen.reading = false;
      }
    };
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      if (msg.type !== 'logs' || !Array.isArray(msg.outputs)) return;
      const now = performance.now();
      const seen = received.get(msg.task_id) ?? {
        next: 1,
        lines: 0,
        paged: 0,
        first: now,
        last: now,
        gaps: [],
        reading: false,
      };
      received.set(msg.task_id, seen);
      if (!Number.isInteger(msg.line)) throw new Error('a batch of lines without a position');
      msg.outputs.forEach((output, i) => {
        const line = msg.line + i;
        if (line < seen.next) return;
        if (line > seen.next) seen.gaps.push([seen.next, line - 1]);
        seen.next = line + 1;
        if (output.startsWith('line ')) seen.lines += 1;
      });
      seen.last = now;
      if (seen.gaps.length) void readGaps(msg.task_id, seen).catch((e) => log('reading a gap', e.message));
    });
    ws.on('close', (code, reason) => {
      socketClosed ??= `${code} ${reason}`;
    });
    ws.on('error', (e) => log('socket error', e.message));

    let peakRssPolled = 0;
    const rssTimer = setInterval(() => {
      peakRssPolled = Math.max(peakRssPolled, readProc(server.pid, 'VmRSS'));
    }, 50);
    const db = new Database(join(work, 'data', 'signalbox.db'), { readonly: true });
    const storedOf = db.prepare(
      "SELECT count(*) AS n FROM task_output WHERE task_id = ? AND output LIKE 'line %'",
    );
    const lastOf = db.prepare(
      "SELECT output FROM task_output WHERE task_id = ? AND output LIKE 'line %' ORDER BY id DESC LIMIT 1",
    );

    const rounds = [];
    const cpuBefore = cpuSeconds(server.pid);
    for (let r = 1; r <= ROUNDS; r++) {
      const bare = await barePipeline(join(repo, 'print.sh'), LINES, r);
      const posted = performance.now();
      const taskId = (await api('POST', `${p}/tasks`, { template_id: template })).json.id;
      let task;
      let finishedAt = 0;
      for (;;) {
        task = (await api('GET', `${p}/tasks/${taskId}`)).json;
        if (['success', 'error', 'stopped'].includes(task.status)) {
          finishedAt = performance.now();
          break;
        }
        if (performance.now() - posted > TIMEOUT_MS)
          throw new Error(`task still ${task.status} after timeout`);
        await sleep(20);
      }
      // What was published before the final status may still be on its way to the socket.
      const drainDeadline = performance.now() + 30_000;
      const delivered = () => (received.get(taskId)?.lines ?? 0) + (received.get(taskId)?.paged ?? 0);
      while (delivered() < LINES && performance.now() < drainDeadline && !socketClosed) await sleep(20);
      const stored = storedOf.get(taskId).n;
      const lastStored = lastOf.get(taskId)?.output;
      if (task.status !== 'success' || stored !== LINES || lastStored !== `line ${LINES}`)
        throw new Error(
          `task ${taskId} ended ${task.status} with ${stored} lines stored, the last ${lastStored}`,
        );
      const seen = received.get(taskId) ?? { lines: 0, paged: 0, first: 0, last: 0 };
      const storeSeconds = (finishedAt - posted) / 1000;
      const lastLineSeconds = seen.last ? (seen.last - posted) / 1000 : null;
      const measured = {
        taskId,
        storeSeconds,
        storedLinesPerSecond: stored / storeSeconds,
        deliveredLines: seen.lines + seen.paged,
        /** Of those, lines read as pages over gaps (not sent while the client was behind). */
        pagedLines: seen.paged,
        deliveredLinesPerSecond: lastLineSeconds ? (seen.lines + seen.paged) / lastLineSeconds : 0,
        timeToLastLineSeconds: lastLineSeconds,
        bareSeconds: bare.seconds,
        bareLinesPerSecond: bare.linesPerSecond,
        ratio: stored / storeSeconds / bare.linesPerSecond,
      };
      rounds.push(measured);
      log(
        `round ${r}: server ${Math.round(measured.storedLinesPerSecond).toLocaleString('en')} lines/s stored, ` +
          `${Math.round(measured.deliveredLinesPerSecond).toLocaleString('en')} delivered ` +
          `(${measured.pagedLines.toLocaleString('en')} of them read as pages); bare pipeline ` +
          `${Math.round(bare.linesPerSecond).toLocaleString('en')} lines/s: ${measured.ratio.toFixed(2)} ×`,
      );
    }
    clearInterval(rssTimer);
    db.close();
    const peakRss = Math.max(readProc(server.pid, 'VmHWM'), peakRssPolled);
    const serverCpu = cpuSeconds(server.pid) - cpuBefore;
    const socket = socketClosed ?? 'open until the end';
    ws.close();
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));

    const median = (key) => stats(rounds.map((r) => r[key])).p50;
    const result = {
      date: new Date().toISOString(),
      machine: machineLabel(loadAtStart),
      lines: LINES,
      rounds,
      socket,
      storedLinesPerSecond: median('storedLinesPerSecond'),
      deliveredLinesPerSecond: median('deliveredLinesPerSecond'),
      bareLinesPerSecond: median('bareLinesPerSecond'),
      ratio: median('ratio'),
      serverCpuSecondsPerTask: serverCpu / ROUNDS,
      serverIdleRssMB: idleRss / 2 ** 20,
      serverPeakRssMB: peakRss / 2 ** 20,
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
  const fmt = (n) => Math.round(n).toLocaleString('en');
  const pass = (ok) => (ok ? 'yes' : '**no**');
  const ratios = r.rounds.map((x) => x.ratio.toFixed(2)).join(' / ');
  const row = `| ${r.date.slice(0, 16).replace('T', ' ')} UTC | ${r.machine} | ${fmt(r.lines)} | ${r.rounds.length} | ${fmt(r.storedLinesPerSecond)} (${pass(r.storedLinesPerSecond >= 200_000)}) | ${fmt(r.deliveredLinesPerSecond)} | ${fmt(r.bareLinesPerSecond)} | ${ratios}: ${r.ratio.toFixed(2)} × (${pass(r.ratio >= 0.8)}) | ${r.serverPeakRssMB.toFixed(0)} MB (${pass(r.serverPeakRssMB < 300)}) |`;
  addReadmeRows('<!-- output against the bare pipeline:end -->', [row]);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
