#!/usr/bin/env node
// Benchmark: how long a task takes to start — from POST /tasks to its first output line reaching a live socket —
// with every task command in the bubblewrap sandbox (SIGNALBOX_TASK_SANDBOX=auto) and without it (off).
//
//   node bench/task-start.mjs [--runs 50] [--write] [--profile DIR]
//
// Starts two built servers (`npm run build` first; run as `npm start` runs it), one sandboxed and one not, each on
// its own fresh SQLite data dir, and runs a bash template whose script prints one line, --runs times each, the two
// servers taking turns run by run so that both meet the same load:
//   local   the repository is a local path (used in place);
//   file    the same repository as a file:// URL (fetched into the server's bare cache, cloned per task); the first
//           run of the template is reported apart (it creates the cache), the rest are the sample.
// Each run is timed from sending the POST to the moment the script's line arrives on a WebSocket (/api/ws) opened
// before: the line has been stored (the server publishes a batch after storing it). Beside them, in the bench's
// own process and taking turns with the servers' runs: `bare spawn` (spawning bash on the script until its first
// line) and `bare clone + spawn` (`git clone --shared --template=` from a bare copy of the repository into a new
// directory, as the server clones its cache, then the spawn). --write adds a row to bench/README.md; --profile DIR
// writes a V8 CPU profile of each server (DIR/auto, DIR/off) when it stops.
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

const RUNS = Number(opt('runs', '50'));
const WRITE = args.includes('--write');
const MARK = 'bench task started';
const PROFILE = opt('profile', '');

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

/**
 * The bare baselines, one run at a time (taken in turn with the servers' runs): `spawn` runs bash on the script
 * until its first line; `clone` clones the bare copy as the server clones its cache (--shared, no template) and
 * then spawns.
 */
function bareRunner(work, repo) {
  const bare = join(work, 'bare.git');
  execFileSync('git', ['clone', '-q', '--bare', '--', repo, bare]);
  let n = 0;
  return {
    spawn: () => timeSpawn(repo),
    async clone() {
      const start = performance.now();
      const target = join(work, `clone-${++n}`);
      await new Promise((resolve, reject) => {
        const git = spawn('git', ['clone', '-q', '--shared', '--template=', '--', bare, target], {
          stdio: 'ignore',
        });
        git.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`git clone: ${code}`))));
      });
      const time = await timeSpawn(target, start);
      rmSync(target, { recursive: true, force: true });
      return time;
    },
  };
}

/** A built server on its own data dir under `work`, with `sandbox`, and a bash template of each kind of repository. */
const password = 'bench-password-1';

async function startServer(work, repo, sandbox) {
  const port = await freePort();
  const dir = mkdtempSync(join(work, `server-${sandbox}-`));
  const server = spawn(
    process.execPath,
    [
      '--max-semi-space-size=2',
      ...(PROFILE
        ? ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE, sandbox)}`, '--cpu-prof-interval=100']
        : []),
      join(root, 'packages/server/bin/signalbox.mjs'),
      'server',
    ],
    {
      env: { ...serverEnv(dir, port, password), SIGNALBOX_TASK_SANDBOX: sandbox },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  try {
    return await setUp(server, port, repo, sandbox);
  } catch (err) {
    server.kill('SIGTERM'); // not left running behind a failed set-up
    throw err;
  }
}

async function setUp(server, port, repo, sandbox) {
  const base = `http://127.0.0.1:${port}`;
  const cookie = await signInWhenUp(server, base, 'bench', password);
  const call = jsonClient(base);
  const info = (await call('GET', '/api/info', undefined, cookie)).json;
  if (sandbox !== 'off' && info.task_sandbox?.mode !== 'bwrap')
    throw new Error(
      `the sandboxed server runs tasks ${info.task_sandbox?.mode}: ${info.task_sandbox?.reason}`,
    );
  const project = (await call('POST', '/api/projects', { name: 'Bench' }, cookie)).json.id;
  const path = `/api/project/${project}`;
  const post = async (collection, body) =>
    (await call('POST', `${path}/${collection}`, body, cookie)).json.id;
  const { key, environment } = await projectDefaults(call, path, cookie);
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
  const templates = { local: await template('Local', repo), file: await template('File', `file://${repo}`) };

  // Lines reach the socket as they are stored; each run waits for its task's line.
  const socket = new WebSocket(`ws://127.0.0.1:${port}/api/ws`, { headers: { cookie, origin: base } });
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
  const runOnce = async (kind) => {
    const start = performance.now();
    const res = await fetch(`${base}${path}/tasks`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({ template_id: templates[kind] }),
    });
    const taskId = (await res.json()).id;
    await lineOf(taskId);
    waiting.delete(taskId);
    return arrived.get(taskId) - start;
  };
  const stop = async () => {
    socket.close();
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  };
  return { runOnce, stop };
}

async function main() {
  const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-start-'));
  const loadAtStart = os.loadavg()[0];
  const repo = scriptRepo(work, 'start.sh', `#!/bin/bash\necho '${MARK}'\n`);
  const servers = {};
  try {
    for (const sandbox of ['auto', 'off']) servers[sandbox] = await startServer(work, repo, sandbox);
    const results = { auto: {}, off: {} };
    const baseline = bareRunner(work, repo);
    const bareTimes = { spawn: [], clone: [] };
    for (const kind of ['local', 'file']) {
      const times = { auto: [], off: [] };
      const first = {};
      for (const sandbox of ['auto', 'off']) first[sandbox] = await servers[sandbox].runOnce(kind);
      // The two servers and the bare baseline of the kind take turns, so that all meet the same load.
      const bareKind = kind === 'local' ? 'spawn' : 'clone';
      for (let i = 0; i < RUNS; i++) {
        for (const sandbox of i % 2 ? ['off', 'auto'] : ['auto', 'off'])
          times[sandbox].push(await servers[sandbox].runOnce(kind));
        bareTimes[bareKind].push(await baseline[bareKind]());
      }
      for (const sandbox of ['auto', 'off']) {
        results[sandbox][kind] = { first: first[sandbox], ...summary(times[sandbox]) };
        const r = results[sandbox][kind];
        log(`${kind}, sandbox ${sandbox}: first ${ms(r.first)}, then p50 ${ms(r.p50)} p95 ${ms(r.p95)}`);
      }
    }
    const bare = { spawn: summary(bareTimes.spawn), clone: summary(bareTimes.clone) };
    log(
      `bare spawn p50 ${ms(bare.spawn.p50)} p95 ${ms(bare.spawn.p95)}; bare clone + spawn p50 ${ms(bare.clone.p50)} p95 ${ms(bare.clone.p95)}`,
    );
    report(results, bare, loadAtStart);
  } finally {
    for (const server of Object.values(servers)) await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

function report(results, bare, loadAtStart) {
  const date = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const pair = (s) => `${ms(s.p50)} / ${ms(s.p95)}`;
  const { auto, off } = results;
  const row = `| ${date} | ${machineLabel(loadAtStart)} | ${RUNS} | ${pair(auto.local)} | ${pair(off.local)} | ${pair(bare.spawn)} | ${ms(auto.file.first)} | ${pair(auto.file)} | ${pair(off.file)} | ${pair(bare.clone)} |`;
  console.log(row);
  if (WRITE) addReadmeRows('<!-- task start sandbox results:end -->', [row]);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
