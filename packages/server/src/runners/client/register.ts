import {
  type RunnerRegistered,
  type RunnerRegistration,
  runnerTokenHeader,
} from '../../runner-protocol/protocol';
import { generateRunnerKeys } from '../../runner-protocol/seal';
import { isRegistered, loadRunner, type RunnerSettings, removeRunner, saveRunner } from './files';

/** A failure the command explains in one line (never with a token in it). */
export class RunnerCommandError extends Error {}

/** The server's base URL without a trailing slash; only http and https. */
export function serverUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RunnerCommandError(
      `--url ${JSON.stringify(text)} is not a URL (e.g. https://signalbox.example.com)`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RunnerCommandError('--url must start with http:// or https://');
  if (url.username || url.password)
    throw new RunnerCommandError('--url must not hold a user name or password');
  url.search = '';
  url.hash = '';
  return url.toString().replace(/\/+$/, '');
}

/** The message of an error answer ({message} or {error}), else its status line. */
async function answerMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    const message = typeof body.message === 'string' ? body.message : body.error;
    if (typeof message === 'string' && message) return message.slice(0, 500);
  } catch {
    // not JSON
  }
  return `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
}

async function request(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new RunnerCommandError(`Cannot reach the server at ${new URL(url).origin}: ${why}`);
  }
}

export type RegisterOptions = {
  dir: string;
  url: string;
  registrationToken: string;
  name?: string;
  tags: string[];
  maxParallel: number;
  projectId?: number;
};

/** Registers a new runner: a new key pair, the server's answer and the key stored in the runner folder. */
export async function registerRunner(opts: RegisterOptions): Promise<RunnerSettings> {
  if (isRegistered(opts.dir)) {
    const { settings } = loadRunner(opts.dir);
    throw new RunnerCommandError(
      `${opts.dir} already holds runner ${settings.id} of ${settings.url}: run "signalbox runner unregister" first, or use another --dir`,
    );
  }
  const url = serverUrl(opts.url);
  const keys = generateRunnerKeys();
  const body: RunnerRegistration = {
    registration_token: opts.registrationToken,
    public_key: keys.publicKey,
    max_parallel_tasks: opts.maxParallel,
    ...(opts.name ? { name: opts.name } : {}),
    ...(opts.tags.length ? { tags: opts.tags } : {}),
    ...(opts.projectId ? { project_id: opts.projectId } : {}),
  };
  const res = await request(`${url}/api/internal/runners`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status === 401 || res.status === 403)
    throw new RunnerCommandError(`The server refused the registration token: ${await answerMessage(res)}`);
  if (!res.ok)
    throw new RunnerCommandError(`The server refused the registration: ${await answerMessage(res)}`);
  let answer: RunnerRegistered;
  try {
    answer = (await res.json()) as RunnerRegistered;
  } catch {
    throw new RunnerCommandError(`The server at ${url} did not answer as a Signalbox server`);
  }
  if (!Number.isInteger(answer?.id) || answer.id < 1 || typeof answer.token !== 'string' || !answer.token)
    throw new RunnerCommandError(`The server at ${url} did not answer as a Signalbox server`);
  const settings: RunnerSettings = {
    url,
    id: answer.id,
    ...(opts.name ? { name: opts.name } : {}),
    token: answer.token,
    tags: opts.tags,
    max_parallel: opts.maxParallel,
  };
  saveRunner(opts.dir, settings, keys.privateKey);
  return settings;
}

/**
 * Tells the server to forget the runner (with its own token), then removes its files. `force` removes the files
 * even when the server cannot be reached or no longer knows the runner.
 */
export async function unregisterRunner(dir: string, force = false): Promise<RunnerSettings> {
  const { settings } = loadRunner(dir);
  try {
    const res = await request(`${settings.url}/api/internal/runners`, {
      method: 'DELETE',
      headers: { [runnerTokenHeader]: settings.token },
    });
    if (!res.ok && res.status !== 404 && res.status !== 401)
      throw new RunnerCommandError(
        `The server refused to unregister the runner: ${await answerMessage(res)}`,
      );
    if ((res.status === 404 || res.status === 401) && !force)
      throw new RunnerCommandError(
        `The server does not know runner ${settings.id} (already deleted?): ${await answerMessage(res)}; use --force to remove its files anyway`,
      );
  } catch (err) {
    if (!force) throw err;
  }
  removeRunner(dir);
  return settings;
}
