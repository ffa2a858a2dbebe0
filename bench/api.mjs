#!/usr/bin/env node
// Benchmark: the API's list and output endpoints against a bare server answering the same bytes.
//
//   node bench/api.mjs [--db sqlite|postgres] [--templates 1000] [--tasks 1000000] [--lines 1000000]
//                      [--connections 50] [--duration 5]
//                      [--only projects,users,templates,tasks,last,output,page,deep,cold,busy]
//                      [--match TEXT] [--semi-space 2] [--write] [--keep] [--profile DIR]
//
// Starts the built Signalbox server (`npm run build` first; run as `npm start` runs it) on a fresh SQLite data dir
// or a fresh PostgreSQL database (SIGNALBOX_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres: a
// database is created there and dropped at the end), and fills one project through the API: --templates bash
// templates, one real task printing --lines lines, then --tasks finished tasks spread over the templates, copied
// from that task's row by one INSERT … SELECT (no output of their own). Then, for each endpoint, in one run:
//   Signalbox  autocannon, --connections keep-alive connections for --duration seconds, API token as bearer;
//   bare       a Fastify server in its own process answering the same path with the same bytes from memory
//              (the body Signalbox answered, fetched once), the same load.
// Endpoints: the projects and users lists (tiny answers, with the token and with a session cookie), the templates
// list, the task list (limit 200; cold also 10,000 tasks from the oldest end and in the middle, by offset), the last
// tasks (history of 200), the first 300 output
// lines, and a 10,000-line output page at the start and 980,000 lines deep (the largest page the API serves).
// The lists are read warm (the same URL again: shared answers), cold (`cold`: every request a different query
// string, so no one-second shared answer serves it; the bare server answers the same bytes — a list whose data has
// not changed is still told by a cheap read: the task lists' revision stamp, the templates list's heads, shared by
// the readers of one turn of the event loop and begun after all of them asked) and in a busy project
// (`busy`: 20 short tasks of the project starting and ending all the time while the clients read, so every status
// change drops the project's shared answers — what a team running work meets).
// Server RSS: idle (after the seeding, a GC and 3 s of quiet) and peak (VmHWM at the end). --write adds the rows
// to bench/README.md; --keep leaves the temp dir (and database) behind; --profile DIR writes a V8 CPU profile of
// the Signalbox server during the load; --match TEXT runs only the endpoints whose label contains TEXT.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';
import {
  addReadmeRows,
  args,
  cpuSeconds,
  freePort,
  jsonClient,
  log,
  machineLabel,
  opt,
  projectDefaults,
  readProc,
  root,
  scriptRepo,
  serverEnv,
  signInWhenUp,
  sleep,
} from './lib/bench.mjs';

const DB = opt('db', 'sqlite');
const TEMPLATES = Number(opt('templates', '1000'));
const TASKS = Number(opt('tasks', '1000000'));
const LINES = Number(opt('lines', '1000000'));
const CONNECTIONS = Number(opt('connections', '50'));
const DURATION = Number(opt('duration', '5'));
const WRITE = args.includes('--write');
const KEEP = args.includes('--keep');
const PROFILE = opt('profile', '');
/** V8's young-generation semi-space cap of the server in MB; `npm start` runs it with 2. */
const SEMI_SPACE_MB = Number(opt('semi-space', '2'));
/**
 * Only these endpoints (comma-separated: projects, users, templates, tasks, last, output, page, deep); all when not
 * given.
 */
const ONLY = opt('only', '') ? opt('only', '').split(',') : null;
const MATCH = opt('match', '');
const PG_URL = process.env.SIGNALBOX_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DEEP_OFFSET = Math.max(0, LINES - 20_000);

const builtEntry = join(root, 'packages/server/dist/main.js');

/** A fresh database for the server: its URL, and how to run SQL on it and drop it. */
async function freshDatabase(work) {
  if (DB === 'sqlite') {
    const file = join(work, 'data', 'signalbox.db');
    return {
      url: '',
      label: 'SQLite',
      exec: async (sql) => {
        const db = new Database(file);
        db.pragma('busy_timeout = 60000');
        try {
          return db.prepare(sql).all();
        } catch (err) {
          if (/does not return data/.test(String(err))) return db.exec(sql);
          throw err;
        } finally {
          db.close();
        }
      },
      drop: async () => {},
    };
  }
  const name = `signalbox_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    label: 'PostgreSQL',
    exec: async (sql) => {
      const client = new pg.Client({ connectionString: url.href });
      await client.connect();
      try {
        return (await client.query(sql)).rows;
      } finally {
        await client.end();
      }
    },
    drop: async () => {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** `count` finished tasks over the templates [first, first + templates), copied from the row of task `seed`. */
async function copyTasks(database, seed, first, templates, count) {
  const columns =
    DB === 'sqlite'
      ? (await database.exec(`SELECT name FROM pragma_table_info('task')`)).map((row) => row.name)
      : (
          await database.exec(
            `SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'task' ORDER BY ordinal_position`,
          )
        ).map((row) => row.name);
  const copied = columns.filter((name) => name !== 'id');
  const q = (name) => `"${name}"`;
  const value = (name) => (name === 'template_id' ? `${first} + (n.i % ${templates})` : `t.${q(name)}`);
  const numbers =
    DB === 'sqlite'
      ? `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${count - 1})`
      : `WITH n(i) AS (SELECT generate_series(0, ${count - 1}))`;
  const sql = `INSERT INTO task (${copied.map(q).join(', ')}) ${numbers} SELECT ${copied.map(value).join(', ')} FROM n, task t WHERE t.id = ${seed}`;
  // PostgreSQL's autovacuum analyzes a table this changed on a running server; SQLite keeps no statistics unless
  // told to (ANALYZE), and the server never does: its plans are those of a database without them, so is the bench's.
  // (With statistics, the templates list took 5.2-6.9 ms and a page before a task 0.3-1.8 ms on the same copy of the
  // database, against 3.7-4.5 and 0.23 ms without.)
  await database.exec(DB === 'sqlite' ? sql : `${sql}; ANALYZE task;`);
  // A history this large was written over months and long since checkpointed into the database file; here the
  // copy sits in the WAL, which every read would have to look through.
  if (DB === 'sqlite') await database.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  // Each task written updates its template's row (its task count and newest task): a million at once leave a
  // million dead row versions in PostgreSQL's template table, which autovacuum clears as a running server's tasks
  // come and go (a scan of 1,000 templates read 20,000 pages and took 200 ms before this).
  if (DB === 'postgres') await database.exec('VACUUM ANALYZE template');
}

/** A bare Fastify server in its own process, answering each path with the bytes saved in `file`. */
async function startBare(file) {
  const port = await freePort();
  const script = `
    import Fastify from 'fastify';
    import { readFileSync } from 'node:fs';
    const routes = JSON.parse(readFileSync(${JSON.stringify(file)}, 'utf8'));
    const app = Fastify();
    const byUrl = new Map(routes.map((r) => [r.url, { body: Buffer.from(r.body, 'base64'), type: r.type }]));
    app.get('*', (request, reply) => {
      // A cold request's own query parameter names no other answer.
      const route = byUrl.get(request.url.replace(/[?&]cold=[0-9]+$/, ''));
      if (!route) return reply.status(404).send();
      return reply.type(route.type).send(route.body);
    });
    await app.listen({ host: '127.0.0.1', port: ${port} });
    console.log('ready');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: join(root, 'packages/server'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve, reject) => {
    child.stdout.once('data', resolve);
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return { child, base: `http://127.0.0.1:${port}` };
}

/**
 * autocannon against `base + path`: requests/s (mean), p50, p99 (ms), and how many answers were not 2xx. `cold`:
 * every request with its own `cold=<n>` query parameter (no answer shared between two requests).
 */
async function load(base, path, headers, cold = false) {
  let n = 0;
  const sep = path.includes('?') ? '&' : '?';
  const requests = cold
    ? [{ setupRequest: (req) => ({ ...req, path: `${path}${sep}cold=${++n}` }) }]
    : undefined;
  const run = (duration) =>
    autocannon({ url: base + path, connections: CONNECTIONS, duration, headers, pipelining: 1, requests });
  const warmUp = await run(1); // JIT, connection pools, caches
  const result = await run(DURATION);
  return {
    total: warmUp.requests.total + result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors + result.timeouts,
  };
}

/** Waits until the server answers a ping within 50 ms: the requests the last load left queued are done. */
async function settle(base) {
  for (;;) {
    const start = performance.now();
    await fetch(`${base}/api/ping`).then((res) => res.text());
    if (performance.now() - start < 50) return;
    await sleep(200);
  }
}

async function waitForTask(call, path, id, cookie) {
  for (;;) {
    const task = (await call('GET', `${path}/tasks/${id}`, undefined, cookie)).json;
    if (['success', 'error', 'stopped'].includes(task.status)) return task;
    await sleep(200);
  }
}

/**
 * Keeps a project busy: one loop per template starting a short task of it and waiting for its end, again and again,
 * until stop() (each task's status changes drop the project's shared answers, as a team's running work does).
 */
function keepBusy(call, path, templates, cookie) {
  let stopping = false;
  const loops = templates.map(async (templateId) => {
    while (!stopping) {
      const res = await call('POST', `${path}/tasks`, { template_id: templateId, environment: '{}' }, cookie);
      if (res.status !== 201) throw new Error(`busy task: ${res.status}`);
      await waitForTask(call, path, res.json.id, cookie);
    }
  });
  return {
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

const mb = (bytes) => `${Math.round(bytes / 2 ** 20)} MB`;
const fmt = (n) => Math.round(n).toLocaleString('en');

async function main() {
  if (!existsSync(builtEntry)) throw new Error('the server is not built: run `npm run build` first');
  const work = mkdtempSync(join(os.tmpdir(), 'signalbox-bench-api-'));
  const database = await freshDatabase(work);
  const loadAtStart = os.loadavg()[0];
  log(
    `work dir ${work}; ${database.label}, ${TEMPLATES} templates, ${fmt(TASKS)} tasks, ${fmt(LINES)} lines`,
  );

  const repo = scriptRepo(
    work,
    'print.sh',
    `#!/bin/bash\nseq -f 'line %.0f: ok: [web-01] => {"changed": false}' 1 "\${1:-${LINES}}"\n`,
  );
  const port = await freePort();
  const password = 'bench-password-1';
  const server = spawn(
    process.execPath,
    [
      `--max-semi-space-size=${SEMI_SPACE_MB}`,
      ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : []),
      join(root, 'packages/server/bin/signalbox.mjs'),
      'server',
    ],
    {
      env: { ...serverEnv(work, port, password), SIGNALBOX_DB_URL: database.url },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const stopServer = async () => {
    if (server.exitCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  };
  let bare;
  try {
    const base = `http://127.0.0.1:${port}`;
    const cookie = await signInWhenUp(server, base, 'bench', password);
    const call = jsonClient(base);
    const token = (await call('POST', '/api/user/tokens', {}, cookie)).json.token;

    // One project: TEMPLATES bash templates on a local repository; the first prints the lines.
    const project = (await call('POST', '/api/projects', { name: 'Bench' }, cookie)).json.id;
    const path = `/api/project/${project}`;
    const post = async (collection, body) =>
      (await call('POST', `${path}/${collection}`, body, cookie)).json.id;
    const { key, environment } = await projectDefaults(call, path, cookie);
    const repository = await post('repositories', {
      name: 'Scripts',
      git_url: repo,
      git_branch: '',
      ssh_key_id: key,
    });
    const templateIds = [];
    const started = Date.now();
    for (let i = 0; i < TEMPLATES; i += 20) {
      const batch = Array.from({ length: Math.min(20, TEMPLATES - i) }, (_, j) =>
        post('templates', {
          name: `Deploy service ${String(i + j + 1).padStart(4, '0')}`,
          description: 'Rolls the service out to the web tier',
          app: 'bash',
          playbook: 'print.sh',
          repository_id: repository,
          environment_id: environment,
        }),
      );
      templateIds.push(...(await Promise.all(batch)));
    }
    log(`${TEMPLATES} templates in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    // A busy project's tasks: short ones (a line, a fifth of a second), of 20 templates of their own.
    const busyTemplates = [];
    if (!ONLY || ONLY.includes('busy')) {
      writeFileSync(join(repo, 'short.sh'), '#!/bin/bash\necho busy\nsleep 2\n');
      for (let i = 0; i < 20; i++)
        busyTemplates.push(
          await post('templates', {
            name: `Busy ${i + 1}`,
            app: 'bash',
            playbook: 'short.sh',
            repository_id: repository,
            environment_id: environment,
          }),
        );
    }
    const output = (await call('POST', `${path}/tasks`, { template_id: templateIds[0] }, cookie)).json.id;
    const done = await waitForTask(call, path, output, cookie);
    if (done.status !== 'success') throw new Error(`the output task ended ${done.status}`);
    log(`task ${output} printed ${fmt(LINES)} lines`);
    const copyStart = Date.now();
    await copyTasks(database, output, templateIds[0], TEMPLATES, TASKS);
    log(`${fmt(TASKS)} tasks copied in ${((Date.now() - copyStart) / 1000).toFixed(1)} s`);

    // Each endpoint is read with the API token, or with the session cookie where the label says so (a console's
    // request: its session and user are looked up, where a token's owner is).
    const endpoints = [
      ['projects', 'GET /api/projects (token)', '/api/projects'],
      ['projects', 'GET /api/projects (session cookie)', '/api/projects', 'cookie'],
      ['users', 'GET /api/users (token)', '/api/users'],
      ['users', 'GET /api/users (session cookie)', '/api/users', 'cookie'],
      ['templates', 'GET …/templates', `${path}/templates`],
      ['tasks', 'GET …/tasks?limit=200', `${path}/tasks?limit=200`],
      ['last', 'GET …/tasks/last (history 200)', `${path}/tasks/last`],
      ['cold', 'GET …/templates, cold', `${path}/templates`, 'token', 'cold'],
      ['cold', 'GET …/tasks?limit=200, cold', `${path}/tasks?limit=200`, 'token', 'cold'],
      ['cold', 'GET …/tasks/last (history 200), cold', `${path}/tasks/last`, 'token', 'cold'],
      [
        'cold',
        `GET …/tasks?limit=200 at offset ${fmt(Math.max(0, TASKS - 10_000))}, cold`,
        `${path}/tasks?limit=200&offset=${Math.max(0, TASKS - 10_000)}`,
        'token',
        'cold',
      ],
      // The middle of the list: the deepest page from either end (the worst case of an offset).
      [
        'cold',
        `GET …/tasks?limit=200 at offset ${fmt(Math.floor(TASKS / 2))}, cold`,
        `${path}/tasks?limit=200&offset=${Math.floor(TASKS / 2)}`,
        'token',
        'cold',
      ],
      ['busy', 'GET …/templates, busy project', `${path}/templates`, 'token', 'busy'],
      ['busy', 'GET …/tasks?limit=200, busy project', `${path}/tasks?limit=200`, 'token', 'busy'],
      ['output', 'GET …/output first 300 lines', `${path}/tasks/${output}/output?limit=300`],
      [
        'page',
        'GET …/output 10,000 lines at offset 0',
        `${path}/tasks/${output}/output?offset=0&limit=10000`,
      ],
      [
        'deep',
        `GET …/output 10,000 lines at offset ${fmt(DEEP_OFFSET)}`,
        `${path}/tasks/${output}/output?offset=${DEEP_OFFSET}&limit=10000`,
      ],
    ]
      .filter(([name, label]) => (!ONLY || ONLY.includes(name)) && (!MATCH || label.includes(MATCH)))
      .map(([, label, url, auth, mode]) => [label, url, auth, mode]);
    const headersFor = (auth) => (auth === 'cookie' ? { cookie } : { authorization: `Bearer ${token}` });
    const saved = [];
    for (const [, url, auth] of endpoints) {
      if (saved.some((s) => s.url === url)) continue;
      const res = await fetch(base + url, { headers: headersFor(auth) });
      if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
      const body = Buffer.from(await res.arrayBuffer());
      saved.push({
        url,
        type: res.headers.get('content-type'),
        body: body.toString('base64'),
        bytes: body.length,
      });
    }
    const bareFile = join(work, 'bare.json');
    writeFileSync(bareFile, JSON.stringify(saved));
    bare = await startBare(bareFile);

    await sleep(3000);
    const idleRss = readProc(server.pid, 'VmRSS');
    const rows = [];
    for (const [label, url, auth, mode] of endpoints) {
      await settle(base);
      const busy = mode === 'busy' ? keepBusy(call, path, busyTemplates, cookie) : null;
      const cpuBefore = cpuSeconds(server.pid);
      const ours = await load(base, url, headersFor(auth), mode === 'cold');
      const cpu = cpuSeconds(server.pid) - cpuBefore;
      await busy?.stop();
      // Server CPU per answered request, warm-up included (both runs of `load`); in a busy project it includes
      // running the tasks.
      ours.cpuMs = (1000 * cpu) / Math.max(1, ours.total);
      const theirs = await load(bare.base, url, {}, mode === 'cold');
      rows.push({ label, bytes: saved.find((s) => s.url === url).bytes, ours, theirs });
      log(
        `${label}: ${fmt(ours.rps)} req/s p50 ${ours.p50} ms p99 ${ours.p99} ms (failed ${ours.failed}), ` +
          `server CPU ${ours.cpuMs.toFixed(2)} ms/request; ` +
          `bare ${fmt(theirs.rps)} req/s p99 ${theirs.p99} ms`,
      );
    }
    const peakRss = readProc(server.pid, 'VmHWM');
    await stopServer();
    report(rows, { database: database.label, loadAtStart, idleRss, peakRss });
  } finally {
    bare?.child.kill();
    await stopServer();
    if (!KEEP) {
      await database.drop();
      rmSync(work, { recursive: true, force: true });
    } else log(`kept ${work}`);
  }
}

function report(rows, { database, loadAtStart, idleRss, peakRss }) {
  const date = `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const machine = machineLabel(loadAtStart);
  const lines = rows.map(({ label, bytes, ours, theirs }) => {
    const share = ((100 * ours.rps) / theirs.rps).toFixed(1);
    return `| ${date} | ${machine} | ${database}, ${TEMPLATES} templates, ${fmt(TASKS)} tasks | ${label} | ${fmt(bytes)} | ${fmt(ours.rps)} | ${ours.p50} | ${ours.p99} | ${ours.failed} | ${ours.cpuMs.toFixed(2)} | ${fmt(theirs.rps)} | ${theirs.p99} | ${share} % | ${mb(idleRss)} / ${mb(peakRss)} |`;
  });
  console.log(lines.join('\n'));
  if (WRITE) addReadmeRows('<!-- api results:end -->', lines);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
