#!/usr/bin/env node
// Benchmark: clients reading a 1,000,000-line task log through the API do not stall the server.
//
//   node bench/task-output-readers.mjs [--lines 1000000] [--readers 5] [--pings 2000] [--interval 5]
//                                      [--write] [--keep] [--profile DIR]
//
// Starts a real Signalbox server on SQLite (a child process, temp data dir) with bench/loop-delay.mjs preloaded,
// runs a bash task printing the lines, then sends --pings `GET /api/ping` requests, one every --interval ms, and
// measures their latency (from the scheduled send time to the end of the response) and the server's event-loop
// delay (perf_hooks.monitorEventLoopDelay) in three phases:
//   idle     no other client;
//   pages    --readers clients (one separate process, bench/task-output-readers-child.mjs) each read the whole
//            log in a loop, page by page through GET tasks/{id}/output and its `Link: rel="next"`, the first
//            time verifying every line (order, no gap, no repeat);
//   raw      --readers clients each download GET tasks/{id}/raw_output in a loop, counting lines.
// Readers sign in as a guest of the project. Also timed alone: the first page, the page 90 % into the log
// (900,000 lines deep) by the next-page cursor, and by ?offset=. --write adds a row to the readers table in bench/README.md; --keep
// leaves the temp data dir behind; --profile DIR writes a V8 CPU profile of the server into DIR.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
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
  signIn,
  signInWhenUp,
  sleep,
  stats,
} from './lib/bench.mjs';

const LINES = Number(opt('lines', '1000000'));
const READERS = Number(opt('readers', '5'));
const PINGS = Number(opt('pings', '2000'));
const INTERVAL_MS = Number(opt('interval', '5'));
const WRITE = args.includes('--write');
const KEEP = args.includes('--keep');
const PROFILE = opt('profile', '');

/** The text of line n as the task prints it (seq's format, n from 1). */
const LINE_FORMAT =
  'line %.0f: ok: [web-01.example.internal] => {"changed": false, "msg": "All assertions passed"}';

// ---------------------------------------------------------------------------------------------- main

async function main() {
  const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-'));
  const loopFile = join(work, 'loop.json');
  const loadAtStart = os.loadavg()[0];
  log(`work dir ${work}; ${LINES.toLocaleString('en')} lines, ${READERS} readers, ${PINGS} pings`);

  const repo = scriptRepo(work, 'print.sh', `#!/bin/bash\nseq -f '${LINE_FORMAT}' 1 ${LINES}\n`);

  const port = await freePort();
  const password = 'bench-password-1';
  const server = spawn(
    process.execPath,
    [
      ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : []),
      '--import',
      pathToFileURL(join(root, 'bench/loop-delay.mjs')).href,
      join(root, 'packages/server/bin/signalbox.mjs'),
      'server',
    ],
    {
      env: { ...serverEnv(work, port, password), SIGNALBOX_BENCH_LOOP_FILE: loopFile },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const children = [server];
  const cleanUp = () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    if (!KEEP) rmSync(work, { recursive: true, force: true });
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      cleanUp();
      process.exit(130);
    });
  }
  const base = `http://127.0.0.1:${port}`;
  const call = jsonClient(base);

  /** What the server's event loop saw since the previous call (bench/loop-delay.mjs). */
  let loopSequence = 0;
  const loopDelay = async () => {
    server.kill('SIGUSR2');
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (existsSync(loopFile)) {
        const snapshot = JSON.parse(readFileSync(loopFile, 'utf8'));
        if (snapshot.sequence > loopSequence) {
          loopSequence = snapshot.sequence;
          return snapshot;
        }
      }
      if (Date.now() > deadline) throw new Error('no event-loop report from the server');
      await sleep(10);
    }
  };

  /** PINGS pings, one every INTERVAL_MS; latency from the scheduled send time to the end of the response. */
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const ping = () =>
    new Promise((resolve, reject) => {
      const req = request(`${base}/api/ping`, { agent }, (res) => {
        res.resume();
        res.once('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`ping ${res.statusCode}`)),
        );
      });
      req.once('error', reject);
      req.end();
    });
  const pings = async () => {
    const latencies = [];
    const pending = [];
    const start = performance.now();
    for (let i = 0; i < PINGS; i++) {
      const due = start + i * INTERVAL_MS;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      pending.push(ping().then(() => latencies.push(performance.now() - due)));
    }
    await Promise.all(pending);
    return stats(latencies);
  };

  /** Runs the pings while `--readers` clients read the log in `mode` (or alone without a mode). */
  const phase = async (name, mode, readerCookie, taskPath, total) => {
    let child;
    let output = '';
    if (mode) {
      child = spawn(
        process.execPath,
        [
          join(root, 'bench/task-output-readers-child.mjs'),
          ...['--base', base, '--cookie', readerCookie, '--path', taskPath, '--mode', mode],
          ...['--readers', String(READERS), '--lines', String(LINES), '--total', String(total)],
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      children.push(child);
      child.stdout.on('data', (d) => {
        output += d;
      });
      const deadline = Date.now() + 300_000;
      while (!output.includes('"started"')) {
        if (child.exitCode !== null) throw new Error(`${name} readers exited: ${output}`);
        if (Date.now() > deadline) throw new Error(`${name} readers did not start`);
        await sleep(20);
      }
    }
    let peakRss = readProc(server.pid, 'VmRSS');
    const rssTimer = setInterval(() => {
      peakRss = Math.max(peakRss, readProc(server.pid, 'VmRSS'));
    }, 50);
    const cpuBefore = cpuSeconds(server.pid);
    const t0 = performance.now();
    await loopDelay();
    const ping = await pings();
    const loop = await loopDelay();
    const seconds = (performance.now() - t0) / 1000;
    const serverCpu = (cpuSeconds(server.pid) - cpuBefore) / seconds;
    clearInterval(rssTimer);
    let readers = null;
    if (child) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      readers = JSON.parse(output.trim().split('\n').at(-1));
      delete readers.event;
    }
    const result = {
      ping,
      loop,
      seconds,
      serverCpuShare: serverCpu,
      serverPeakRssMB: peakRss / 2 ** 20,
      readers,
    };
    log(
      `${name}: ping p50 ${ping.p50.toFixed(1)} p99 ${ping.p99.toFixed(1)} max ${ping.max.toFixed(1)} ms; ` +
        `loop max ${loop.maxMs.toFixed(1)} ms (busy ${loop.busyMaxMs.toFixed(1)}, gc max ${loop.gcMaxMs.toFixed(1)} ${loop.gcMaxKind} total ${loop.gcTotalMs.toFixed(0)}), server CPU ${serverCpu.toFixed(2)}` +
        (readers
          ? `; readers ${readers.pages} pages, ${readers.passes} passes, errors ${readers.errors.length}`
          : ''),
    );
    return result;
  };

  try {
    const cookie = await signInWhenUp(server, base, 'bench', password);
    const { path: p, template } = await seedScriptProject(call, cookie, {
      repo,
      playbook: 'print.sh',
      name: 'Print',
    });
    const guestPassword = 'guest-password-1';
    const guest = (
      await call(
        'POST',
        '/api/users',
        { name: 'Guest', username: 'guest', email: 'guest@localhost', password: guestPassword },
        cookie,
      )
    ).json.id;
    await call('POST', `${p}/users`, { user_id: guest, role: 'guest' }, cookie);
    const guestCookie = await signIn(base, 'guest', guestPassword);

    log('running the task that prints the lines…');
    const taskId = (await call('POST', `${p}/tasks`, { template_id: template }, cookie)).json.id;
    for (;;) {
      const task = (await call('GET', `${p}/tasks/${taskId}`, undefined, cookie)).json;
      if (task.status === 'success') break;
      if (['error', 'stopped'].includes(task.status)) throw new Error(`task ${task.status}`);
      await sleep(200);
    }
    const taskPath = `${p}/tasks/${taskId}`;
    const db = new Database(join(work, 'data', 'signalbox.db'), { readonly: true });
    const total = db.prepare('SELECT count(*) AS n FROM task_output WHERE task_id = ?').get(taskId).n;
    db.close();
    log(`${total.toLocaleString('en')} lines stored`);

    // Single requests, alone: the first page, a deep page by the next-page cursor, a deep page by offset.
    const deep = Math.max(1, Math.floor(LINES * 0.9));
    const cursor = (
      await call('GET', `${taskPath}/output?offset=${deep - 1}&limit=1`, undefined, guestCookie)
    ).json[0].id;
    const timeOf = async (path) => {
      const times = [];
      let bytes = 0;
      for (let i = 0; i < 7; i++) {
        const t0 = performance.now();
        bytes = (await call('GET', path, undefined, guestCookie)).text.length;
        times.push(performance.now() - t0);
      }
      return { ...stats(times), bytes };
    };
    const single = {
      firstPage: await timeOf(`${taskPath}/output`),
      deepPageByCursor: await timeOf(`${taskPath}/output?after=${cursor}`),
      deepPageByOffset: await timeOf(`${taskPath}/output?offset=${deep}`),
    };
    log(
      `single requests (median ms): first ${single.firstPage.p50.toFixed(1)}, deep by cursor ${single.deepPageByCursor.p50.toFixed(1)}, deep by offset ${single.deepPageByOffset.p50.toFixed(1)}`,
    );

    const idle = await phase('idle', null);
    const pages = await phase('pages', 'pages', guestCookie, taskPath, total);
    const raw = await phase('raw', 'raw', guestCookie, taskPath, total);

    const result = {
      date: new Date().toISOString(),
      machine: `${os.cpus()[0]?.model ?? 'cpu'} (${os.cpus().length} cores), ${Math.round(os.totalmem() / 2 ** 30)} GB RAM, ${os.platform()} ${os.release()}`,
      node: process.version,
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: os.loadavg()[0],
      lines: LINES,
      readers: READERS,
      pings: PINGS,
      pingIntervalMs: INTERVAL_MS,
      single,
      idle,
      pages,
      raw,
    };
    console.log(JSON.stringify(result, null, 2));
    if (WRITE) writeReadme(result);
    const failures = [...(pages.readers?.errors ?? []), ...(raw.readers?.errors ?? [])];
    if (failures.length) {
      log('reader errors:', failures);
      process.exitCode = 1;
    }
  } finally {
    agent.destroy();
    // A graceful stop first, so a CPU profile gets written.
    if (server.exitCode === null) {
      server.kill('SIGTERM');
      await Promise.race([new Promise((r) => server.once('exit', r)), sleep(15_000)]);
    }
    cleanUp();
  }
}

function writeReadme(r) {
  const ms = (n) => n.toFixed(1);
  const fmtMs = (n) => Math.round(n);
  const pass = (ok) => (ok ? 'yes' : '**no**');
  const phase = (x) => `${ms(x.ping.p50)} / ${ms(x.ping.p99)} / ${ms(x.ping.max)}`;
  const loop = (x) => `${ms(x.loop.maxMs)} (busy ${ms(x.loop.busyMaxMs)}, GC ${ms(x.loop.gcMaxMs)})`;
  const row = [
    `${r.date.slice(0, 16).replace('T', ' ')} UTC`,
    `${r.machine}, Node ${r.node}, load ${r.loadAverageAtStart.toFixed(1)} at start, ${r.loadAverageAtEnd.toFixed(1)} at end`,
    r.lines.toLocaleString('en'),
    phase(r.idle),
    loop(r.idle),
    `${phase(r.pages)} (${pass(r.pages.ping.p99 < 100)})`,
    loop(r.pages),
    `${r.pages.readers.pages} pages (${fmtMs(r.pages.readers.requestMs.p50)} ms each), ${r.pages.readers.errors.length} errors`,
    phase(r.raw),
    loop(r.raw),
    `${ms(r.single.firstPage.p50)} / ${ms(r.single.deepPageByCursor.p50)} / ${ms(r.single.deepPageByOffset.p50)}`,
    `${Math.round(r.idle.serverPeakRssMB)} / ${Math.round(r.pages.serverPeakRssMB)} / ${Math.round(r.raw.serverPeakRssMB)} MB`,
  ];
  addReadmeRows('<!-- readers results:end -->', [`| ${row.join(' | ')} |`]);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
