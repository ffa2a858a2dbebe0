import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { waitFor } from './task-fixtures';
import { taskSharedEnv } from './task-shared';

/**
 * Helpers for tests that run a real `signalbox server` child process: its command, its environment with a known
 * admin, waiting until it answers, signing the admin in and calling the API with the session cookie.
 */

/**
 * The `signalbox` command of the working tree as it is: the bundle the process tiers build when their run starts
 * (test/support/built-server.ts, a third of tsx's start-up time), else the TypeScript sources through tsx. The
 * server built by `npm run build` (bin/signalbox.mjs) is tested through `npm start` (npm-start.test.ts).
 */
export const serverBin =
  process.env.SIGNALBOX_TEST_SERVER_BIN ??
  fileURLToPath(new URL('../../bin/signalbox-src.mjs', import.meta.url));

const ADMIN = { login: 'admin', password: 'admin-password-1' };

/** The environment of a server on `dataDir` (SQLite unless `extra` names a database) with the known admin. */
export const serverProcessEnv = (dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  SIGNALBOX_DATA_DIR: dataDir,
  SIGNALBOX_HOST: '127.0.0.1',
  SIGNALBOX_ADMIN_LOGIN: ADMIN.login,
  SIGNALBOX_ADMIN_PASSWORD: ADMIN.password,
  SIGNALBOX_ADMIN_EMAIL: 'admin@example.test',
  SIGNALBOX_ADMIN_NAME: 'Admin',
  SIGNALBOX_LOG_LEVEL: 'warn',
  ...taskSharedEnv,
  ...extra,
});

/** The URL of `path` on the local server listening on `port`. */
export const localUrl = (port: number, path: string) => `http://127.0.0.1:${port}${path}`;

/** Waits until the server on `port` answers its ping (a refused connection counts as "not yet"). */
export async function waitForServer(port: number) {
  await waitFor(
    async () => {
      try {
        return (await fetch(localUrl(port, '/api/ping'))).ok;
      } catch {
        return false;
      }
    },
    // A server child compiles the sources through tsx first: on a busy 2-core machine that can take half a minute.
    90_000,
    'the server to answer',
  );
}

/** Signs the known admin in (expects 204) and returns the session cookie. */
export async function signInAdmin(port: number): Promise<string> {
  const login = await fetch(localUrl(port, '/api/auth/login'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth: ADMIN.login, password: ADMIN.password }),
  });
  expect(login.status).toBe(204);
  return String(login.headers.get('set-cookie')).split(';')[0]!;
}

/** Calls the server's API with the session cookie (a body is sent as JSON). */
export const cookieApi =
  (port: number, cookie: string) =>
  (method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(localUrl(port, path), {
      method,
      headers: { cookie, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
