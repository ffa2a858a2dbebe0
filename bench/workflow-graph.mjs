#!/usr/bin/env node
// Benchmark: how fast the console opens a workflow of 50 nodes in the graph editor and in the run view.
//
//   node bench/workflow-graph.mjs [--nodes 50] [--runs 3] [--write]
//
// Starts a real Signalbox server on a temporary SQLite data directory, creates a workflow of N nodes through the
// API (a build, an approval, then parallel lanes of deploy / delay / smoke nodes joined at the end) and starts a
// run of it, which waits at the approval with the other nodes pending. Then, in Debian's Chromium, it measures in
// the page the time from the click on the workflow's link (list page) to every node's card in the editor's graph,
// and from the click on the run's link (runs page) to every node's card with its status in the run view.
// Target on the 2-core CI machine: under 1 s for both. Needs the web build and the server build (npm start builds
// them). `--write` adds a row to bench/README.md.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
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
  seedScriptProject,
  serverEnv,
  signInWhenUp,
} from './lib/bench.mjs';

const NODES = Number(opt('nodes', '50'));
const RUNS = Number(opt('runs', '3'));
const WRITE = args.includes('--write');
const TARGET_MS = 1000;
const PASSWORD = 'bench-Passw0rd';

/** A DAG of `count` nodes: build → approval → lanes of template and delay nodes → a final join. */
export function benchWorkflow(count, templateId) {
  const nodes = [
    { id: 'build', type: 'template', template_id: templateId },
    { id: 'approve', type: 'approval', roles: ['owner'], required: 1 },
  ];
  const edges = [{ from: 'build', to: 'approve', condition: 'success' }];
  const lanes = 6;
  const middle = count - nodes.length - 1;
  const last = new Array(lanes).fill('approve');
  for (let i = 0; i < middle; i++) {
    const lane = i % lanes;
    const id = `n${i + 1}`;
    nodes.push(
      i % 5 === 4
        ? { id, type: 'delay', seconds: 30 }
        : { id, type: 'template', template_id: templateId, name: `deploy ${i + 1}` },
    );
    edges.push({ from: last[lane], to: id, condition: i % 7 === 6 ? 'always' : 'success' });
    last[lane] = id;
  }
  nodes.push({ id: 'smoke', type: 'template', template_id: templateId });
  for (const from of new Set(last)) edges.push({ from, to: 'smoke', condition: 'success' });
  return { nodes, edges };
}

/** Clicks `link` and measures, in the page, the time until `count` node cards (matching `selector`) are drawn and visible. */
async function timeToNodes(page, link, selector, count) {
  await link.waitFor();
  await page.evaluate(
    ({ selector, count }) => {
      window.doneAt = undefined;
      document.addEventListener('click', () => (window.clickAt = performance.now()), {
        capture: true,
        once: true,
      });
      // Drawn: React Flow keeps a node hidden until it has measured it, then places it.
      const drawn = () =>
        [...document.querySelectorAll(selector)].filter(
          (el) => el.closest('.react-flow__node')?.style.visibility !== 'hidden',
        ).length;
      new MutationObserver((_m, observer) => {
        if (drawn() >= count) {
          window.doneAt = performance.now();
          observer.disconnect();
        }
      }).observe(document.body, { childList: true, subtree: true, attributes: true });
    },
    { selector, count },
  );
  await link.click();
  await page.waitForFunction(() => window.doneAt !== undefined, null, { timeout: 60_000 });
  return page.evaluate(() => window.doneAt - window.clickAt);
}

async function main() {
  const loadAtStart = os.loadavg()[0];
  const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-'));
  const repo = scriptRepo(work, 'quick.sh', 'echo "quick run"\n');
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, 'packages/server/bin/signalbox.mjs'), 'server'], {
    cwd: root,
    env: serverEnv(work, port, PASSWORD),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  try {
    const cookie = await signInWhenUp(child, url, 'bench', PASSWORD);
    const call = jsonClient(url);
    const api = async (method, path, body) => {
      const answer = await call(method, path, body, cookie);
      if (answer.status >= 400)
        throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.json)}`);
      return answer.json;
    };
    const { path: apiPath, template } = await seedScriptProject(call, cookie, {
      repo,
      playbook: 'quick.sh',
      name: 'Quick',
    });
    const workflow = await api('POST', `${apiPath}/workflows`, {
      name: `Bench ${NODES} nodes`,
      ...benchWorkflow(NODES, template),
    });
    const run = await api('POST', `${apiPath}/workflows/${workflow.id}/runs`, { message: 'bench' });
    for (;;) {
      const { status } = await api('GET', `${apiPath}/workflow-runs/${run.id}`);
      if (status === 'waiting_approval') break;
      if (!['waiting', 'running'].includes(status)) throw new Error(`the run ended ${status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    log(`workflow ${workflow.id} (${NODES} nodes) and its run ${run.id}, waiting for approval; measuring…`);
    const base = apiPath.replace(/^\/api/, '');
    const editor = [];
    const runView = [];
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext({ baseURL: url, viewport: { width: 1280, height: 800 } });
      const [name, ...value] = cookie.split('=');
      await context.addCookies([{ name, value: value.join('='), url }]);
      const page = await context.newPage();
      await page.goto(`${base}/workflows`);
      editor.push(
        await timeToNodes(
          page,
          page.getByRole('link', { name: workflow.name, exact: true }),
          '.react-flow__node [data-node-id]',
          NODES,
        ),
      );
      await page.goto(`${base}/workflows/${workflow.id}/runs`);
      runView.push(
        await timeToNodes(
          page,
          page.getByRole('link', { name: `#${run.id}` }),
          '.react-flow__node [data-node-id][data-status]',
          NODES,
        ),
      );
      await context.close();
    }
    const best = (list) => Math.round(Math.min(...list));
    const result = {
      nodes: NODES,
      editorMs: editor.map(Math.round),
      runViewMs: runView.map(Math.round),
      editorBestMs: best(editor),
      runViewBestMs: best(runView),
      targetMs: TARGET_MS,
      met: best(editor) < TARGET_MS && best(runView) < TARGET_MS,
      loadAtStart,
    };
    console.log(JSON.stringify(result, null, 2));
    if (WRITE) {
      const yes = (ms) => (ms < TARGET_MS ? `${ms} ms (yes)` : `${ms} ms (**no**)`);
      const date = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
      addReadmeRows('<!-- workflow graph results:end -->', [
        `| ${date} | ${machineLabel(loadAtStart)} | ${NODES} | ${result.editorMs.join(', ')} | ${yes(result.editorBestMs)} | ${result.runViewMs.join(', ')} | ${yes(result.runViewBestMs)} |`,
      ]);
    }
  } finally {
    await browser.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
