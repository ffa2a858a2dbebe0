#!/usr/bin/env node
// Benchmark: how long a task takes to start — from POST /tasks to its first output line reaching a live socket.
//
//   node bench/task-start.mjs [--runs 50] [--write]
//
// Starts the built server (`npm run build` first; run as `npm start` runs it) on a fresh SQLite data dir and runs
// a bash template whose script prints one line, --runs times each, one after the other:
//   local   the repository is a local path (used in place);
//   file    the same repository as a file:// URL (fetched into the server's bare cache, cloned per task); the first
//           run of the template is reported apart (it creates the cache), the rest are the sample.
// Each run is timed from sending the POST to the moment the script's line arrives on a WebSocket (/api/ws) opened
// before: the line has been stored (the server publishes a batch after storing it). Beside them, in the bench's
// own process: `bare spawn` (spawning bash on the script until its first line) and `bare clone + spawn` (`git
// clone --shared` from a bare copy of the repository into a new directory, then the spawn). --write adds a row
// to bench/README.md.
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
  root,
  scriptRepo,
  serverEnv,
  signInWhenUp,
  stats,
} from './lib/bench.mjs';

const RUNS = Number(opt('runs', '50'));
const WRITE = args.includes('--write');
const MARK = 'bench task started';

/** Median and 95th percentile of the run times. */
const summary = (values) => {
  const { p50, p95 } = stats(values);
  return { p50, p95 };
};
const ms = (v) => `${v.toFixed(1)} ms`;

/** Spawns bash on the script in `dir` and resolves with the ms until its first stdout line. */
function timeSpawn(dir, start = performance.now()) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['start.sh'], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.once('data', () => resolve(performance.now() - start));
    child.once('error', reject);
  });
}

async function bareRuns(work, repo) {
  const spawnTimes = [];
  for (let i = 0; i < RUNS; i++) spawnTimes.push(await timeSpawn(repo));
  const bare = join(work, 'bare.git');
  execFileSync('git', ['clone', '-q', '--bare', '--', repo, bare]);
  const cloneTimes = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    const target = join(work, `clone-${i}`);
    await new Promise((resolve, reject) => {
      const git = spawn('git', ['clone', '-q', '--shared', '--', bare, target], { stdio: 'ignore' });
      git.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`git clone: ${code}`))));
    });
    cloneTimes.push(await timeSpawn(target, start));
    rmSync(target, { recursive: true, force: true });
  }
  return { spawn: summary(spawnTimes), clone: summary(cloneTimes) };
}

async function main() {
  const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-start-'));
  const loadAtStart = os.loadavg()[0];
  const repo = scriptRepo(work, 'start.sh', `#!/bin/bash\necho '${MARK}'\n`);
  const port = await freePort();
  const password = 'bench-password-1';
  const server = spawn(
    process.execPath,
    [
      '--max-semi-space-size=2',
      '--enable-source-maps',
      join(root, 'packages/server/bin/signalbox.mjs'),
      'server',
    ],
    { env: serverEnv(work, port, password), stdio: ['ignore', 'ignore', 'inherit'] },
  );
  let socket;
  try {
    const base = `http://127.0.0.1:${port}`;
    const cookie = await signInWhenUp(server, base, 'bench', password);
    const call = jsonClient(base);
    const project = (await call('POST', '/api/projects', { name: 'Bench' }, cookie)).json.id;
    const path = `/api/project/${project}`;
    const post = async (collection, body) =>
      (await call('POST', `${path}/${collection}`, body, cookie)).json.id;
    const key = await post('keys', { name: 'None', type: 'none' });
    const environment = await post('environment', { name: 'Empty', json: '{}', env: '{}' });
    const template = async (name, gitUrl) => {
      const repository = await post('repositories', {
        name,
        git_url: gitUrl,
        git_branch: 'main',
        ssh_key_id: key,
      });
      return post('templates', {
        name,
        app: 'bash',
        playbook: 'start.sh',
        repository_id: repository,
        environment_id: environment,
      });
    };
    const templates = {
      local: await template('Local', repo),
      file: await template('File', `file://${repo}`),
    };

    // Lines reach the socket as they are stored; each run waits for its task's line.
    socket = new WebSocket(`ws://127.0.0.1:${port}/api/ws`, { headers: { cookie, origin: base } });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    // When each task's line arrived, and who waits for a line still to come.
    const arrived = new Map();
    const waiting = new Map();
    socket.on('message', (data) => {
      const message = JSON.parse(String(data));
      if (message.type !== 'log' || !message.output.includes(MARK)) return;
      arrived.set(message.task_id, performance.now());
      waiting.get(message.task_id)?.();
    });
    const lineOf = (taskId) =>
      arrived.has(taskId) ? Promise.resolve() : new Promise((resolve) => waiting.set(taskId, resolve));
    const runOnce = async (templateId) => {
      const start = performance.now();
      const res = await fetch(`${base}${path}/tasks`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
        body: JSON.stringify({ template_id: templateId }),
      });
      const taskId = (await res.json()).id;
      await lineOf(taskId);
      waiting.delete(taskId);
      return arrived.get(taskId) - start;
    };

    const results = {};
    for (const [name, id] of Object.entries(templates)) {
      const first = await runOnce(id);
      const times = [];
      for (let i = 0; i < RUNS; i++) times.push(await runOnce(id));
      results[name] = { first, ...summary(times) };
      log(`${name}: first ${ms(first)}, then p50 ${ms(results[name].p50)} p95 ${ms(results[name].p95)}`);
    }
    const bare = await bareRuns(work, repo);
    log(
      `bare spawn p50 ${ms(bare.spawn.p50)} p95 ${ms(bare.spawn.p95)}; bare clone + spawn p50 ${ms(bare.clone.p50)} p95 ${ms(bare.clone.p95)}`,
    );
    report(results, bare, loadAtStart);
  } finally {
    socket?.close();
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    rmSync(work, { recursive: true, force: true });
  }
}

function report(results, bare, loadAtStart) {
  const date = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const pair = (s) => `${ms(s.p50)} / ${ms(s.p95)}`;
  const row = `| ${date} | ${machineLabel(loadAtStart)} | ${RUNS} | ${pair(results.local)} | ${pair(bare.spawn)} | ${ms(results.file.first)} | ${pair(results.file)} | ${pair(bare.clone)} |`;
  console.log(row);
  if (WRITE) addReadmeRows('<!-- task start results:end -->', [row]);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
