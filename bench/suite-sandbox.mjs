#!/usr/bin/env node
// Benchmark: what the task sandbox costs the test suites that run tasks — the executor tier, the engine and
// remote-runner files and the browser files that run tasks — timed with every task command in bubblewrap
// (SIGNALBOX_TASK_SANDBOX=auto, the default) and without it (off).
//
//   node bench/suite-sandbox.mjs [--rounds 2] [--write]
//
// Each round runs the same vitest selection once in each mode, the order swapped from round to round so that
// both modes meet the same load; a run that fails stops the bench (a time of a red run means nothing). The
// database servers are not used (SQLite only: SIGNALBOX_TEST_PG_URL and SIGNALBOX_TEST_MYSQL_URL are cleared),
// so the selection is the same on every machine. Run `node scripts/bootstrap.mjs --web` first (the browser
// files need the built console). --write adds a row to bench/README.md.
import { spawn } from 'node:child_process';
import os from 'node:os';
import { addReadmeRows, args, log, machineLabel, opt, root } from './lib/bench.mjs';

const ROUNDS = Number(opt('rounds', '2'));
const WRITE = args.includes('--write');

/** The vitest projects and files timed: every executor file, and the other files whose subject is a task run. */
const SELECTION = [
  '--project',
  'executors',
  '--project',
  'system',
  '--project',
  'e2e',
  'packages/server/src/tasks/ansible',
  'packages/server/src/tasks/executor-paths',
  'packages/server/src/tasks/run/git-',
  'packages/server/src/tasks/playbook-override',
  'packages/server/src/tasks/terraform',
  'packages/server/src/tasks/terragrunt',
  'packages/server/src/tasks/python',
  'packages/server/src/tasks/powershell',
  'packages/server/src/tasks/engine-bash',
  'packages/server/src/runners/server/remote-runners',
  'packages/server/src/tasks/output/output-integrity',
  'packages/server/src/runners/client/runner-client',
  'e2e/first-day',
  'e2e/tasks',
  'e2e/live-log',
  'e2e/task-waiting',
  'e2e/run-once-and-key-sources',
];

/** Runs the selection once with `sandbox`; its wall time in seconds. */
function runOnce(sandbox) {
  const env = { ...process.env, SIGNALBOX_TASK_SANDBOX: sandbox };
  delete env.SIGNALBOX_TEST_PG_URL;
  delete env.SIGNALBOX_TEST_MYSQL_URL;
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...SELECTION], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // What vitest printed, shown only when the run fails.
    const output = [];
    child.stdout.on('data', (d) => output.push(d));
    child.stderr.on('data', (d) => output.push(d));
    child.once('error', reject);
    child.once('exit', (code) => {
      const seconds = (performance.now() - start) / 1000;
      if (code === 0) return resolve(seconds);
      process.stderr.write(Buffer.concat(output));
      reject(new Error(`the run with SIGNALBOX_TASK_SANDBOX=${sandbox} failed (exit ${code})`));
    });
  });
}

async function main() {
  const loadAtStart = os.loadavg()[0];
  const times = { auto: [], off: [] };
  for (let round = 0; round < ROUNDS; round++)
    for (const sandbox of round % 2 ? ['off', 'auto'] : ['auto', 'off']) {
      const seconds = await runOnce(sandbox);
      times[sandbox].push(seconds);
      log(
        `round ${round + 1}, sandbox ${sandbox}: ${seconds.toFixed(1)} s, load ${os.loadavg()[0].toFixed(1)}`,
      );
    }
  const total = (mode) => times[mode].reduce((s, v) => s + v, 0);
  const growth = ((total('auto') / total('off') - 1) * 100).toFixed(1);
  const list = (mode) => times[mode].map((s) => `${s.toFixed(0)} s`).join(', ');
  const date = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const row = `| ${date} | ${machineLabel(loadAtStart)} | ${ROUNDS} | ${list('auto')} | ${list('off')} | ${growth} % |`;
  console.log(row);
  if (WRITE) addReadmeRows('<!-- suite sandbox results:end -->', [row]);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
