// Shared pieces of the benchmarks: command-line options, logging, latency statistics, a free port, /proc readings,
// the script repository a bench task runs and the environment of a bench server.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder. */
export const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

export const args = process.argv.slice(2);

/** The value after `--name` on the command line, or `fallback`. */
export const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const log = (...m) => console.error('[bench]', ...m);

/** Count, median, 95th and 99th percentile, maximum and mean of a list of numbers. */
export const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const sum = sorted.reduce((s, v) => s + v, 0);
  return {
    n: sorted.length,
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    max: sorted.at(-1) ?? 0,
    mean: sum / (sorted.length || 1),
  };
};

/** The machine as a results row names it: CPU, cores, Node and the load average when the run started. */
export const machineLabel = (loadAtStart) => {
  const cpu = os.cpus()[0]?.model.split(' ').slice(0, 2).join(' ') ?? 'unknown';
  return `${cpu} (${os.cpus().length} cores), Node ${process.version}, load ${loadAtStart.toFixed(1)}`;
};

/**
 * Adds table rows to bench/README.md just above `marker` (the line that ends a results table), then re-aligns the
 * tables as the lint expects them.
 */
export function addReadmeRows(marker, rows) {
  const readme = join(root, 'bench/README.md');
  const text = readFileSync(readme, 'utf8');
  if (!text.includes(marker)) throw new Error(`bench/README.md has no ${marker}`);
  writeFileSync(readme, text.replace(marker, `${rows.join('\n')}\n${marker}`));
  execFileSync(join(root, 'node_modules/.bin/biome'), ['format', '--write', readme], { stdio: 'ignore' });
  log(`${rows.length === 1 ? 'row' : 'rows'} added to bench/README.md`);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A memory field of /proc/PID/status (VmRSS, VmHWM…) in bytes; 0 once the process is gone. */
export function readProc(pid, field) {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** User + system CPU seconds a process has used so far. */
export function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** A local git repository `work/repo` (used in place) whose one commit holds the script `name` reading `text`. */
export function scriptRepo(work, name, text) {
  const repo = join(work, 'repo');
  execFileSync('mkdir', ['-p', repo]);
  writeFileSync(join(repo, name), text, { mode: 0o755 });
  const git = (...a) =>
    execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', ...a], { cwd: repo });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'bench');
  return repo;
}

/**
 * The environment of a bench server on SQLite in `work/data`, with the admin `bench`. The request limiter is off
 * (one user sends thousands of requests a second) unless the bench is run with SIGNALBOX_RATE_LIMIT set.
 */
export const serverEnv = (work, port, password) => ({
  ...process.env,
  SIGNALBOX_RATE_LIMIT: process.env.SIGNALBOX_RATE_LIMIT || '0',
  SIGNALBOX_DATA_DIR: join(work, 'data'),
  SIGNALBOX_DB_URL: '',
  SIGNALBOX_HOST: '127.0.0.1',
  SIGNALBOX_PORT: String(port),
  SIGNALBOX_ADMIN_LOGIN: 'bench',
  SIGNALBOX_ADMIN_PASSWORD: password,
  SIGNALBOX_ADMIN_EMAIL: 'bench@localhost',
  SIGNALBOX_ADMIN_NAME: 'Bench',
  SIGNALBOX_LOG_LEVEL: 'warn',
});

/**
 * A JSON client of the server at `base` (http://host:port): `call(method, path, body, cookie)` answers
 * { status, headers, json, text } and throws on an HTTP error status.
 */
export const jsonClient =
  (base) =>
  async (method, path, body, cookie = '') => {
    const res = await fetch(base + path, {
      method,
      headers: { cookie, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null, text };
  };

/** Signs `auth` in on the server at `base`; the session cookie. */
export async function signIn(base, auth, password) {
  const res = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth, password }),
  });
  if (res.status !== 204) throw new Error(`login ${auth}: ${res.status} ${await res.text()}`);
  return String(res.headers.get('set-cookie')).split(';')[0];
}

/** Signs in as soon as the starting `server` process answers; gives up after a minute or when it exits. */
export async function signInWhenUp(server, base, auth, password) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await signIn(base, auth, password);
    } catch (err) {
      if (server.exitCode !== null) throw new Error(`server exited with ${server.exitCode}`);
      if (Date.now() > deadline) throw err;
      await sleep(200);
    }
  }
}

/**
 * What every new project is given: the id of its key of type none named 'None' and of its environment named
 * 'Empty' (`path`: the project's API path).
 */
export async function projectDefaults(call, path, cookie) {
  const keys = (await call('GET', `${path}/keys`, undefined, cookie)).json;
  const environments = (await call('GET', `${path}/environment`, undefined, cookie)).json;
  const key = keys.find((k) => k.name === 'None' && k.type === 'none')?.id;
  const environment = environments.find((e) => e.name === 'Empty')?.id;
  if (!key || !environment) throw new Error(`${path} lacks its None key or its Empty environment`);
  return { key, environment };
}

/**
 * A new project whose bash template `name` runs `playbook` from the local repository `repo`, with its None key
 * and its Empty environment: the project's API path and the template's id.
 */
export async function seedScriptProject(call, cookie, { repo, playbook, name }) {
  const project = (await call('POST', '/api/projects', { name: 'Bench' }, cookie)).json.id;
  const path = `/api/project/${project}`;
  const post = async (collection, body) =>
    (await call('POST', `${path}/${collection}`, body, cookie)).json.id;
  const { key, environment } = await projectDefaults(call, path, cookie);
  const repository = await post('repositories', { name, git_url: repo, git_branch: '', ssh_key_id: key });
  const template = await post('templates', {
    name,
    app: 'bash',
    playbook,
    repository_id: repository,
    environment_id: environment,
  });
  return { path, template };
}
