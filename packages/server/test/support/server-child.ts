import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { openDb } from '../../src/db';
import type { Deps } from '../../src/deps';
import { freePort } from './net';
import { serverBin, signInAdmin, waitForServer } from './server-process';
import { outputOf } from './task-fixtures';

/**
 * A real `signalbox server` child process with the environment `env` (see serverProcessEnv). `start` spawns it on
 * `port` and waits until it answers; `startAndSignIn` does so on a fresh port and returns the admin's session
 * cookie; `stop` signals it and waits for its exit. Its stderr goes to the test's, or with `capture` its stdout and
 * stderr both go to `output` (and its stdout alone to `stdout` too).
 */
export function serverChild(env: NodeJS.ProcessEnv, { capture = false } = {}) {
  const server = {
    process: null as ChildProcess | null,
    port: 0,
    output: '',
    stdout: '',
    async start() {
      const child = spawn(process.execPath, [serverBin, 'server'], {
        env: { ...env, SIGNALBOX_PORT: String(server.port) },
        stdio: capture ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'ignore', 'inherit'],
      });
      const keep = (chunk: Buffer) => {
        server.output += chunk;
      };
      child.stdout?.on('data', (chunk: Buffer) => {
        server.stdout += chunk;
        keep(chunk);
      });
      child.stderr?.on('data', keep);
      server.process = child;
      await waitForServer(server.port);
    },
    async startAndSignIn() {
      server.port = await freePort();
      await server.start();
      return signInAdmin(server.port);
    },
    /** True while the spawned process has not exited. */
    running: () => Boolean(server.process?.pid) && server.process!.exitCode === null,
    async stop(signal: NodeJS.Signals) {
      const child = server.process!;
      child.kill(signal);
      await new Promise((r) => child.once('exit', r));
    },
  };
  return server;
}

/** Posts `body` to `path` through `api` (see cookieApi); the id of what that created (a project, a task). */
export async function postForId(
  api: (method: string, path: string, body?: unknown) => Promise<Response>,
  path: string,
  body: unknown,
) {
  return ((await (await api('POST', path, body)).json()) as { id: number }).id;
}

/** The SQLite database of a server process on `dataDir`. */
export const dataDirDbUrl = (dataDir: string) => `sqlite://${join(dataDir, 'signalbox.db')}`;

/**
 * A second handle on a server process's database (`url`): `rows` for the row inserters of task-fixtures.ts and
 * the output lines of a task.
 */
export function serverDb(url: string) {
  const handle = openDb(url);
  const rows: Pick<Deps, 'db' | 'dialect'> = { db: handle.db, dialect: handle.dialect };
  // outputOf reads only the database.
  return { handle, rows, outputOf: (taskId: number) => outputOf(rows as Deps, taskId) };
}
