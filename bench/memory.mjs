#!/usr/bin/env node
// Benchmark: the server's memory at rest, and whether it gives memory back after big tasks.
//
//   node bench/memory.mjs [--tasks 9] [--lines 1000000] [--settle 60] [--write]
//
// Starts the built server as `npm start` runs it (`npm run build` first) on a fresh SQLite data dir and reads its
// resident memory (VmRSS of /proc/<pid>/status): 3 s after it first answered, with no request in between (idle),
// then while --tasks bash tasks of a local repository print --lines lines each, one after the other (peak: VmHWM),
// then every second for --settle seconds after the last one ended, with no request in between. Each task must end
// in success with every line stored (counted in the database file, read-only: no request), or the bench fails. --write adds a row to bench/README.md.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  addReadmeRows,
  args,
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
} from './lib/bench.mjs';

const TASKS = Number(opt('tasks', '9'));
const LINES = Number(opt('lines', '1000000'));
const SETTLE_S = Number(opt('settle', '60'));
const WRITE = args.includes('--write');
const MB = 2 ** 20;
const mb = (bytes) => `${(bytes / MB).toFixed(0)} MB`;

async function main() {
  const loadAtStart = os.loadavg()[0];
  const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-memory-'));
  const repo = scriptRepo(work, 'print.sh', `#!/bin/bash\nseq -f 'line %.0f' 1 ${LINES}\n`);
  const port = await freePort();
  const password = 'bench-password-1';
  // As `npm start` runs it (package.json).
  const server = spawn(
    process.execPath,
    ['--max-semi-space-size=2', join(root, 'packages/server/bin/signalbox.mjs'), 'server'],
    { env: serverEnv(work, port, password), stdio: ['ignore', 'ignore', 'inherit'] },
  );
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      if (server.exitCode === null) server.kill('SIGKILL');
      rmSync(work, { recursive: true, force: true });
      process.exit(130);
    });
  }
  try {
    const base = `http://127.0.0.1:${port}`;
    const cookie = await signInWhenUp(server, base, 'bench', password);
    await sleep(3000);
    const idle = readProc(server.pid, 'VmRSS');
    log(`idle ${mb(idle)}`);

    const call = jsonClient(base);
    const { path, template } = await seedScriptProject(call, cookie, {
      repo,
      playbook: 'print.sh',
      name: 'Print lines',
    });
    const db = new Database(join(work, 'data', 'signalbox.db'), { readonly: true });
    const stored = db.prepare(
      "SELECT count(*) AS n FROM task_output WHERE task_id = ? AND output LIKE 'line %'",
    );
    const started = performance.now();
    for (let i = 1; i <= TASKS; i++) {
      const id = (await call('POST', `${path}/tasks`, { template_id: template }, cookie)).json.id;
      let task;
      for (;;) {
        task = (await call('GET', `${path}/tasks/${id}`, undefined, cookie)).json;
        if (['success', 'error', 'stopped'].includes(task.status)) break;
        await sleep(200);
      }
      if (task.status !== 'success') throw new Error(`task ${id} ended ${task.status}`);
      // Counted in the database itself (read-only beside the server): a download of the log would be a request.
      const lines = stored.get(id).n;
      if (lines !== LINES) throw new Error(`task ${id} stored ${lines} of ${LINES} lines`);
      log(`task ${i}/${TASKS} done; RSS ${mb(readProc(server.pid, 'VmRSS'))}`);
    }
    db.close();
    const tasksSeconds = (performance.now() - started) / 1000;
    const peak = readProc(server.pid, 'VmHWM');
    // Nothing is asked of the server from here on: what it holds is what it keeps.
    const after = [];
    for (let s = 0; s <= SETTLE_S; s++) {
      after.push(readProc(server.pid, 'VmRSS'));
      if (s < SETTLE_S) await sleep(1000);
    }
    const at = (s) => after[Math.min(s, after.length - 1)];
    log(
      `peak ${mb(peak)}; after the last task: ${mb(at(0))} at once, ${mb(at(10))} after 10 s, ${mb(at(30))} after 30 s, ${mb(at(SETTLE_S))} after ${SETTLE_S} s`,
    );
    const date = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    const pass = (ok) => (ok ? 'yes' : '**no**');
    const row = `| ${date} | ${machineLabel(loadAtStart)} | ${TASKS} × ${LINES.toLocaleString('en')} lines in ${tasksSeconds.toFixed(0)} s | ${mb(idle)} (${pass(idle < 100 * MB)}) | ${mb(peak)} | ${mb(at(0))} | ${mb(at(10))} | ${mb(at(30))} | ${mb(at(SETTLE_S))} after ${SETTLE_S} s (${pass(at(SETTLE_S) < 150 * MB)}) |`;
    console.log(row);
    if (WRITE) addReadmeRows('<!-- memory results:end -->', [row]);
  } finally {
    // A server already ended (by an exit code or a signal) emits no other 'exit': waiting for one would hang.
    const running = server.exitCode === null && server.signalCode === null;
    if (running) server.kill('SIGTERM');
    await new Promise((resolve) => (running ? server.once('exit', resolve) : resolve()));
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
