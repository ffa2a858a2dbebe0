#!/usr/bin/env node
// The readers of bench/task-output-readers.mjs, in a process of their own so their work does not delay the
// bench's pings:
//
//   node bench/task-output-readers-child.mjs --base URL --cookie C --path /api/project/P/tasks/T --mode pages|raw
//                                            --readers 5 --lines 1000000 --total 1000003
//
// --lines: the task's printed lines (`line N: …`); --total: all stored lines of the task (with the engine's).

import { opt, stats } from './lib/bench.mjs';

const READERS = Number(opt('readers', '5'));
const LINES = Number(opt('lines', '1000000'));
const TOTAL = Number(opt('total', '0'));
const lineStart = (n) => `line ${n}: `;

/**
 * READERS concurrent loops reading the whole log. In pages mode each loop first reads the log once verifying
 * every line (JSON.parse: ids ascending, the task's lines in order, every stored line once), then goes on reading
 * it without parsing (counting the rows and checking the next-page cursor only moves forward), so the server, not
 * the readers' parsing, sets the pace.
 * Prints {"event":"started"} once every loop is reading at full pace (the totals start then), and its totals as
 * JSON on SIGTERM.
 */
async function readerChild() {
  const base = opt('base');
  const cookie = opt('cookie');
  const path = opt('path');
  const mode = opt('mode', 'pages');
  const controller = new AbortController();
  const totals = { verifiedPasses: 0, passes: 0, pages: 0, lines: 0, bytes: 0, errors: [], requestMs: [] };
  let started = 0;
  const markStarted = (state) => {
    if (state.started) return;
    state.started = true;
    if (++started < READERS) return;
    Object.assign(totals, { passes: 0, pages: 0, lines: 0, bytes: 0, requestMs: [] });
    process.stdout.write(`${JSON.stringify({ event: 'started' })}\n`);
  };
  const fail = (message) => {
    if (totals.errors.length < 20) totals.errors.push(message);
  };

  async function readPages(verify) {
    let url = `${base}${path}/output`;
    let expected = 1;
    let rows = 0;
    let lastId = 0;
    while (url) {
      const t0 = performance.now();
      const res = await fetch(url, { headers: { cookie }, signal: controller.signal });
      const text = await res.text();
      totals.requestMs.push(performance.now() - t0);
      if (res.status !== 200) return fail(`${url}: ${res.status} ${text.slice(0, 200)}`);
      totals.pages++;
      totals.bytes += text.length;
      if (verify) {
        // The task's own lines, in order, between the engine's lines (the command, the final status).
        for (const row of JSON.parse(text)) {
          if (!(row.id > lastId)) return fail(`id ${row.id} after ${lastId}`);
          if (row.output.startsWith('line ')) {
            if (!row.output.startsWith(lineStart(expected)))
              return fail(`line ${expected}: got ${row.output.slice(0, 40)}`);
            expected++;
          }
          rows++;
          lastId = row.id;
        }
      } else {
        for (let i = text.indexOf('{"id":'); i >= 0; i = text.indexOf('{"id":', i + 6)) rows++;
      }
      const next = /<([^>]*)>\s*;\s*rel="next"/.exec(res.headers.get('link') ?? '');
      url = next ? base + next[1] : null;
      if (next && !verify) {
        const after = Number(/[?&]after=(\d+)/.exec(next[1])?.[1]);
        if (!(after > lastId)) return fail(`next page after ${after}, previous after ${lastId}`);
        lastId = after;
      }
    }
    totals.lines += rows;
    if (rows !== TOTAL) fail(`pass ended after ${rows} of ${TOTAL} stored lines`);
    if (verify && expected - 1 !== LINES) fail(`pass ended after ${expected - 1} of ${LINES} task lines`);
    if (verify) totals.verifiedPasses++;
    else totals.passes++;
  }

  async function readRaw(state) {
    const t0 = performance.now();
    const res = await fetch(`${base}${path}/raw_output`, { headers: { cookie }, signal: controller.signal });
    if (res.status !== 200) return fail(`raw_output: ${res.status}`);
    let lines = 0;
    for await (const chunk of res.body) {
      markStarted(state);
      totals.bytes += chunk.length;
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
    }
    totals.requestMs.push(performance.now() - t0);
    totals.lines += lines;
    totals.passes++;
    if (lines !== TOTAL) fail(`raw_output had ${lines} of ${TOTAL} stored lines`);
  }

  async function readLoop(state) {
    if (mode === 'pages') {
      await readPages(true);
      markStarted(state);
    }
    while (!controller.signal.aborted) await (mode === 'raw' ? readRaw(state) : readPages(false));
  }

  const loops = Array.from({ length: READERS }, () => {
    const state = { started: false };
    return readLoop(state).catch((err) => {
      if (!controller.signal.aborted) fail(String(err));
      markStarted(state);
    });
  });
  process.once('SIGTERM', async () => {
    controller.abort();
    await Promise.allSettled(loops);
    const { requestMs, ...rest } = totals;
    const done = JSON.stringify({ event: 'done', ...rest, requestMs: stats(requestMs) });
    process.stdout.write(`${done}\n`, () => process.exit(0));
  });
}

readerChild();
