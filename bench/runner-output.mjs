#!/usr/bin/env node
// Benchmark: a big task log through a remote runner against the same log on the server itself, in one run.
//
//   node bench/runner-output.mjs [--lines 1000000] [--rounds 2] [--lost-timeout 10] [--src] [--write] [--profile DIR]
//
// Starts the built server (`npm run build -w @signalbox/server` first; --src runs the TypeScript sources through
// tsx) on a fresh SQLite data dir with SIGNALBOX_RUNNER_LOST_TIMEOUT=--lost-timeout, registers one
// `signalbox runner` on loopback with the CLI (tag `bench`) and starts it. Two bash templates run the same script
// (`seq -f 'line %.0f' 1 N`): one untagged (it runs on the server), one tagged `bench` (it runs on the runner).
// The rounds alternate server, runner, server, runner…; each task is timed from its POST to the finished status
// (GET tasks/{id} every 100 ms), and its stored lines are counted in the SQLite file (read-only), with its last
// line checked. While a runner task runs, GET /api/runners is read every 250 ms for the runner's heartbeat age
// (the server's clock minus `touched`). --write adds a row to bench/README.md; --profile DIR writes V8 CPU profiles
// of the server and the runner into DIR.
import { execFileSync, spawn } from 'node:child_process';
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
  root,
  scriptRepo,
  serverEnv,
  signInWhenUp,
  sleep,
} from './lib/bench.mjs';

const LINES = Number(opt('lines', '1000000'));
const ROUNDS = Number(opt('rounds', '2'));
const LOST_TIMEOUT = Number(opt('lost-timeout', '10'));
const TIMEOUT_MS = Number(opt('timeout', '900')) * 1000;
const WRITE = args.includes('--write');
const SRC = args.includes('--src');
const PROFILE = opt('profile', '');
const TOKEN = 'bench-runner-registration-token';
const bin = join(root, 'packages/server/bin', SRC ? 'signalbox-src.mjs' : 'signalbox.mjs');
const fmt = (n) => Math.round(n).toLocaleString('en-US');

async function main() {
  const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-runner-output-'));
  const loadAtStart = os.loadavg()[0];
  const repo = scriptRepo(work, 'print.sh', `#!/bin/bash\nseq -f 'line %.0f' 1 ${LINES}\n`);
  const port = await freePort();
  const password = 'bench-password-1';
  const base = `http://127.0.0.1:${port}`;
  const nodeArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : [];
  const server = spawn(process.execPath, [...nodeArgs, bin, 'server'], {
    env: {
      ...serverEnv(work, port, password),
      SIGNALBOX_RUNNER_REGISTRATION_TOKEN: TOKEN,
      SIGNALBOX_RUNNER_LOST_TIMEOUT: String(LOST_TIMEOUT),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let runner;
  try {
    const cookie = await signInWhenUp(server, base, 'bench', password);
    const call = jsonClient(base);
    const project = (await call('POST', '/api/projects', { name: 'Bench' }, cookie)).json.id;
    const path = `/api/project/${project}`;
    const post = async (collection, body) =>
      (await call('POST', `${path}/${collection}`, body, cookie)).json.id;
    // A new project comes with a None key.
    const keys = (await call('GET', `${path}/keys`, null, cookie)).json;
    const key =
      keys.find((k) => k.type === 'none')?.id ?? (await post('keys', { name: 'No key', type: 'none' }));
    const environment = await post('environment', { name: 'Bench', json: '{}', env: '{}' });
    const repository = await post('repositories', {
      name: 'Local',
      git_url: repo,
      git_branch: 'main',
      ssh_key_id: key,
    });
    const template = (name, runnerTag) =>
      post('templates', {
        name,
        app: 'bash',
        playbook: 'print.sh',
        repository_id: repository,
        environment_id: environment,
        ...(runnerTag ? { runner_tag: runnerTag } : {}),
      });
    const templates = {
      server: await template('On the server'),
      runner: await template('On a runner', 'bench'),
    };

    const dir = join(work, 'runner');
    execFileSync(
      process.execPath,
      [bin, 'runner', 'register', '--url', base, '--name', 'bench', '--tag', 'bench', '--dir', dir],
      {
        env: { ...process.env, SIGNALBOX_RUNNER_REGISTRATION_TOKEN: TOKEN },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    runner = spawn(process.execPath, [...nodeArgs, bin, 'runner', 'start', '--dir', dir], {
      env: { ...process.env, SIGNALBOX_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const deadline = Date.now() + 60_000;
    while (!(await call('GET', '/api/runners', null, cookie)).json.some((r) => r.online)) {
      if (Date.now() > deadline) throw new Error('the runner did not come online');
      await sleep(200);
    }

    const db = new Database(join(work, 'data', 'signalbox.db'), { readonly: true });
    const stored = (taskId) =>
      db
        .prepare('SELECT count(*) AS n FROM task_output WHERE task_id = ? AND output LIKE ?')
        .get(taskId, 'line %').n;
    const lastLine = (taskId) =>
      db
        .prepare(
          "SELECT output FROM task_output WHERE task_id = ? AND output LIKE 'line %' ORDER BY id DESC LIMIT 1",
        )
        .get(taskId)?.output;

    /** Runs one task of `where` to its end: seconds, lines stored, status, and for a runner its heartbeat ages. */
    async function runOne(where) {
      const started = performance.now();
      const taskId = (await call('POST', `${path}/tasks`, { template_id: templates[where] }, cookie)).json.id;
      let task;
      let maxAge = 0;
      let nextAge = 0;
      for (;;) {
        task = (await call('GET', `${path}/tasks/${taskId}`, null, cookie)).json;
        if (['success', 'error', 'stopped'].includes(task.status)) break;
        if (performance.now() - started > TIMEOUT_MS) throw new Error(`task ${taskId} did not end in time`);
        if (where === 'runner' && performance.now() >= nextAge) {
          nextAge = performance.now() + 250;
          const res = await call('GET', '/api/runners', null, cookie);
          const serverNow = Date.parse(res.headers.get('date') ?? '') || Date.now();
          const touched = Date.parse(res.json.find((r) => r.name === 'bench')?.touched ?? '');
          // The Date header has whole seconds: the age is known to ±1 s.
          if (Number.isFinite(touched)) maxAge = Math.max(maxAge, (serverNow - touched) / 1000);
        }
        await sleep(100);
      }
      const seconds = (performance.now() - started) / 1000;
      const lines = stored(taskId);
      const r = {
        where,
        taskId,
        status: task.status,
        message: task.message ?? '',
        seconds,
        lines,
        complete: lines === LINES && lastLine(taskId) === `line ${LINES}`,
        linesPerSecond: lines / seconds,
        ...(where === 'runner' ? { maxHeartbeatAge: maxAge } : {}),
      };
      log(
        `${where}: task ${taskId} ${r.status}${r.message ? ` (${r.message})` : ''}, ${fmt(lines)} lines in ${seconds.toFixed(2)} s = ${fmt(r.linesPerSecond)} lines/s${where === 'runner' ? `, heartbeat age ≤ ${maxAge.toFixed(0)} s` : ''}`,
      );
      return r;
    }

    const results = [];
    for (let i = 0; i < ROUNDS; i++) {
      results.push(await runOne('server'));
      results.push(await runOne('runner'));
    }
    db.close();
    report(results, loadAtStart);
  } finally {
    if (runner && runner.exitCode === null) {
      runner.kill('SIGTERM');
      await new Promise((resolve) => runner.once('exit', resolve));
    }
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    rmSync(work, { recursive: true, force: true });
  }
}

function report(results, loadAtStart) {
  const of = (where) => results.filter((r) => r.where === where);
  const server = of('server');
  const runner = of('runner');
  const ratios = runner.map((r, i) => r.linesPerSecond / (server[i]?.linesPerSecond ?? Number.NaN));
  const median = (list) => {
    const sorted = [...list].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  };
  const allGood = results.every((r) => r.status === 'success' && r.complete);
  const neverLost = runner.every((r) => !r.message.startsWith('Runner lost'));
  const maxAge = Math.max(...runner.map((r) => r.maxHeartbeatAge));
  const summary = {
    lines: LINES,
    lostTimeout: LOST_TIMEOUT,
    serverLinesPerSecond: server.map((r) => Math.round(r.linesPerSecond)),
    runnerLinesPerSecond: runner.map((r) => Math.round(r.linesPerSecond)),
    ratios: ratios.map((x) => Number(x.toFixed(2))),
    maxHeartbeatAge: maxAge,
    allStoredAndSuccessful: allGood,
    neverLost,
    results,
  };
  console.log(JSON.stringify(summary, null, 2));
  const date = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const list = (rs) => rs.map((r) => fmt(r.linesPerSecond)).join(' / ');
  const ratio = median(ratios);
  const row = `| ${date} | ${machineLabel(loadAtStart)} at start, ${os.loadavg()[0].toFixed(1)} at end | ${SRC ? 'sources (tsx)' : 'built'} | ${fmt(LINES)} | ${list(server)} | ${list(runner)} | ${ratios.map((x) => x.toFixed(2)).join(' / ')} (median ${ratio.toFixed(2)}, ${ratio >= 0.5 ? 'yes' : '**no**'}) | ${LOST_TIMEOUT} s | ${maxAge.toFixed(0)} s | ${neverLost ? 'never' : '**yes**'} | ${allGood ? 'yes' : '**no**'} |`;
  console.log(row);
  if (WRITE) addReadmeRows('<!-- runner output results:end -->', [row]);
  if (!allGood || !neverLost) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
