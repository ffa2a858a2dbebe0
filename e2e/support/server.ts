import { type ChildProcess, execSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { webBuildIsStale } from '../../packages/web/sources-digest.mjs';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const ADMIN = {
  login: 'admin',
  password: 'admin-Passw0rd',
  name: 'Ada Admin',
  email: 'admin@example.com',
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Builds the web console when its build is missing or was made from other sources (npm test's bootstrap normally
 * did it already; a browser test run alone would otherwise test an old build).
 */
export function ensureWebBuild() {
  if (!webBuildIsStale()) return;
  // The test runner sets NODE_ENV=test, with which Vite would make React's development build (effects run twice
  // under StrictMode): the console users get is the production one.
  execSync('npm run build -w @signalbox/web', {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
}

export type TestServer = {
  url: string;
  dataDir: string;
  dbFile: string;
  logs: string[];
  stop: () => Promise<void>;
};

/**
 * A real Signalbox server on a free port with a temporary SQLite database and a known admin. It runs the bundle of
 * the working tree the test run built at its start (SIGNALBOX_TEST_SERVER_BIN, see built-server.ts), which starts
 * in a third of the time tsx takes to load the sources; a file run on its own without it runs the sources through
 * tsx (bin/signalbox-src.mjs).
 */
export async function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  ensureWebBuild();
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'signalbox-e2e-'));
  const logs: string[] = [];
  const child: ChildProcess = spawn(
    process.execPath,
    [process.env.SIGNALBOX_TEST_SERVER_BIN ?? join(root, 'packages/server/bin/signalbox-src.mjs'), 'server'],
    {
      cwd: root,
      env: {
        ...process.env,
        SIGNALBOX_DATA_DIR: dataDir,
        SIGNALBOX_PORT: String(port),
        SIGNALBOX_HOST: '127.0.0.1',
        SIGNALBOX_ADMIN_LOGIN: ADMIN.login,
        SIGNALBOX_ADMIN_PASSWORD: ADMIN.password,
        SIGNALBOX_ADMIN_NAME: ADMIN.name,
        SIGNALBOX_ADMIN_EMAIL: ADMIN.email,
        SIGNALBOX_LOG_LEVEL: 'warn',
        SIGNALBOX_BCRYPT_COST: '4',
        // Every test file signs in as the one admin of a shared server, faster than any person: the request
        // limiter (tested on its own) would count them all as one user.
        SIGNALBOX_RATE_LIMIT: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.on('data', (d) => logs.push(String(d)));
  child.stderr?.on('data', (d) => logs.push(String(d)));
  const url = `http://127.0.0.1:${port}`;
  // A server that ends before the test stops it fails every later request of the file: say why, once.
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (!stopping)
      console.error(
        `the e2e server at ${url} exited by itself (${signal ?? `code ${code}`}):\n${logs.join('')}`,
      );
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${logs.join('')}`);
    try {
      const r = await fetch(`${url}/api/ping`);
      if (r.ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`server did not start: ${logs.join('')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    dataDir,
    dbFile: join(dataDir, 'signalbox.db'),
    logs,
    stop: async () => {
      stopping = true;
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
