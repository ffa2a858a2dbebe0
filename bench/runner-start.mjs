#!/usr/bin/env node
// Benchmark: tasks through a remote runner — queued → running latency and throughput.
//
//   node bench/runner-start.mjs [--runs 30] [--tasks 100] [--parallel 4] [--src] [--write]
//
// Starts the built server (`npm run build -w @signalbox/server` first; --src runs the TypeScript sources through
// tsx instead) on a fresh SQLite data dir with SIGNALBOX_USE_REMOTE_RUNNER=true, so that every task goes to a
// runner, registers one `signalbox runner` on loopback with the CLI (max-parallel --parallel) and starts it. Then:
//   latency     --runs tasks one after the other, each timed from sending POST /tasks to its `running` update on
//               a live socket (/api/ws) opened before, and to its script's first line arriving there (stored);
//   throughput  --tasks tasks posted at once (the template allows parallel tasks): tasks/s from the first POST to
//               the last task's final status on the socket.
// --write adds a row to bench/README.md.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import {
  addReadmeRows,
  args,
  freePort,
  jsonClient,
  log,
  machineLabel,
  opt,
  projectDefaults,
  root,
  scriptRepo,
  serverEnv,
  signInWhenUp,
  stats,
} from './lib/bench.mjs';

const RUNS = Number(opt('runs', '30'));
const TASKS = Number(opt('tasks', '100'));
const PARALLEL = Number(opt('parallel', '4'));
const WRITE = args.includes('--write');
const SRC = args.includes('--src');
const MARK = 'bench remote task started';
const TOKEN = 'bench-runner-registration-token';
const ms = (v) => `${v.toFixed(1)} ms`;
const bin = join(root, 'packages/server/bin', SRC ? 'signalbox-src.mjs' : 'signalbox.mjs');

async function main() {
  const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-runner-'));
  const loadAtStart = os.loadavg()[0];
  const repo = scriptRepo(work, 'start.sh', `#!/bin/bash\necho '${MARK}'\n`);
  const port = await freePort();
  const password = 'bench-password-1';
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, [bin, 'server'], {
    env: {
      ...serverEnv(work, port, password),
      SIGNALBOX_RUNNER_REGISTRATION_TOKEN: TOKEN,
      SIGNALBOX_USE_REMOTE_RUNNER: 'true',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let runner;
  let socket;
  try {
    const cookie = await signInWhenUp(server, base, 'bench', password);
    const call = jsonClient(base);
    const project = (await call('POST', '/api/projects', { name: 'Bench' }, cookie)).json.id;
    const path = `/api/project/${project}`;
    const post = async (collection, body) =>
      (await call('POST', `${path}/${collection}`, body, cookie)).json.id;
    const { key, environment } = await projectDefaults(call, path, cookie);
    const repository = await post('repositories', {
      name: 'Local',
      git_url: repo,
      git_branch: 'main',
      ssh_key_id: key,
    });
    const template = await post('templates', {
      name: 'Remote',
      app: 'bash',
      playbook: 'start.sh',
      repository_id: repository,
      environment_id: environment,
      allow_parallel_tasks: true,
    });

    const dir = join(work, 'runner');
    execFileSync(
      process.execPath,
      [
        bin,
        'runner',
        'register',
        '--url',
        base,
        '--name',
        'bench',
        '--max-parallel',
        String(PARALLEL),
        '--dir',
        dir,
      ],
      {
        env: { ...process.env, SIGNALBOX_RUNNER_REGISTRATION_TOKEN: TOKEN },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    runner = spawn(process.execPath, [bin, 'runner', 'start', '--dir', dir], {
      env: { ...process.env, SIGNALBOX_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });

    socket = new WebSocket(`ws://127.0.0.1:${port}/api/ws`, { headers: { cookie, origin: base } });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    /** Per task: when it was seen running, its line arrived, it ended. */
    const seen = new Map();
    const waiters = [];
    const note = (taskId, what) => {
      const entry = seen.get(taskId) ?? {};
      entry[what] ??= performance.now();
      seen.set(taskId, entry);
      for (const w of [...waiters]) w();
    };
    socket.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.type === 'update' && m.status === 'running') note(m.task_id, 'running');
      if (m.type === 'update' && ['success', 'error', 'stopped'].includes(m.status))
        note(m.task_id, m.status);
      if (m.type === 'log' && m.output.includes(MARK)) note(m.task_id, 'line');
    });
    const until = (check) =>
      new Promise((resolve) => {
        const w = () => {
          if (!check()) return;
          waiters.splice(waiters.indexOf(w), 1);
          resolve();
        };
        waiters.push(w);
        w();
      });
    const ended = (id) => ['success', 'error', 'stopped'].some((s) => seen.get(id)?.[s] !== undefined);
    const postTask = async () => {
      const res = await fetch(`${base}${path}/tasks`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
        body: JSON.stringify({ template_id: template }),
      });
      return (await res.json()).id;
    };
    // The runner is online once a first task runs on it (it also warms the repository path up).
    await until(() => true);
    const first = await postTask();
    await until(() => ended(first));
    if (!seen.get(first).success)
      throw new Error(`the first remote task ended ${JSON.stringify(seen.get(first))}`);

    const toRunning = [];
    const toLine = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      const id = await postTask();
      await until(() => ended(id) && seen.get(id).line !== undefined);
      toRunning.push(seen.get(id).running - start);
      toLine.push(seen.get(id).line - start);
    }
    const running = stats(toRunning);
    const line = stats(toLine);
    log(
      `queued → running p50 ${ms(running.p50)} p95 ${ms(running.p95)}; → first line p50 ${ms(line.p50)} p95 ${ms(line.p95)}`,
    );

    const start = performance.now();
    const ids = await Promise.all(Array.from({ length: TASKS }, () => postTask()));
    await until(() => ids.every(ended));
    const seconds = (performance.now() - start) / 1000;
    const failed = ids.filter((id) => !seen.get(id).success).length;
    const perSecond = TASKS / seconds;
    log(
      `${TASKS} tasks at once: ${seconds.toFixed(2)} s, ${perSecond.toFixed(1)} tasks/s, ${failed} not successful`,
    );
    report({ running, line, seconds, perSecond, failed }, loadAtStart);
  } finally {
    socket?.close();
    if (runner && runner.exitCode === null) {
      runner.kill('SIGTERM');
      await new Promise((resolve) => runner.once('exit', resolve));
    }
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    rmSync(work, { recursive: true, force: true });
  }
}

function report(r, loadAtStart) {
  const date = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const pair = (s) => `${ms(s.p50)} / ${ms(s.p95)}`;
  const row = `| ${date} | ${machineLabel(loadAtStart)} | ${SRC ? 'sources (tsx)' : 'built'} | ${RUNS} | ${pair(r.running)} | ${pair(r.line)} | ${TASKS} × ${PARALLEL} slots | ${r.seconds.toFixed(2)} s | ${r.perSecond.toFixed(1)} | ${r.failed} |`;
  console.log(row);
  if (WRITE) addReadmeRows('<!-- runner start results:end -->', [row]);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
