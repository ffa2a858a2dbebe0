import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { ClientError } from './errors';

/** The server a client command talks to and the API token it sends, and where they came from. */
export type Credentials = { url: string; token: string; from: 'environment' | 'file' };

/** Longest token the client sends (the server's are 43 characters). */
const MAX_TOKEN = 512;

/**
 * The folder of the client's settings: $XDG_CONFIG_HOME/signalbox, else ~/.config/signalbox (a relative
 * XDG_CONFIG_HOME is ignored, as the XDG spec says).
 */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.config'), 'signalbox');
}

/** A path as help texts show it: under the home folder as ~/… */
export function shortPath(path: string): string {
  const home = homedir();
  return path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
}

/** The file `signalbox login` writes: the server's URL and the token, readable by its owner only. */
export const credentialsFile = (env: NodeJS.ProcessEnv = process.env) =>
  join(configDir(env), 'credentials.json');

/**
 * A server URL as the client keeps it: http or https, no credentials, query or fragment, no trailing slash (a path
 * is kept: a server may be served under a prefix).
 */
export function normalizeUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ClientError(`"${text}" is not a URL (e.g. https://signalbox.example.com)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ClientError(`the server URL must start with https:// or http:// (got ${url.protocol})`);
  if (url.username || url.password)
    throw new ClientError('the server URL must not hold a user name or password');
  if (url.search || url.hash) throw new ClientError('the server URL must not hold a query or a fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** A token as the client sends it: trimmed, one printable line without spaces (never echoed back in an error). */
export function checkToken(text: string): string {
  const token = text.trim();
  if (!token) throw new ClientError('the API token is empty');
  if (token.length > MAX_TOKEN || !/^[\x21-\x7e]+$/.test(token))
    throw new ClientError('that is not an API token (make one in the console: user menu → API tokens)');
  return token;
}

/** Whether a URL sends a token in the clear to another machine (http to a host that is not this one). */
export function isCleartextRemote(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(hostname);
}

type Stored = { url: string; token: string };

function readStored(env: NodeJS.ProcessEnv, warn: (line: string) => void): Stored | null {
  const file = credentialsFile(env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ClientError(`cannot read ${file}: ${(err as Error).message}`);
  }
  if ((statSync(file).mode & 0o077) !== 0)
    warn(`warning: ${file} can be read by other users of this machine; run chmod 600 "${file}"`);
  try {
    const stored = JSON.parse(text) as Partial<Stored>;
    if (typeof stored.url === 'string' && typeof stored.token === 'string')
      return { url: normalizeUrl(stored.url), token: checkToken(stored.token) };
  } catch {}
  throw new ClientError(`${file} is not a file signalbox login wrote; run signalbox login again`);
}

/**
 * The server and token of a command: SIGNALBOX_URL and SIGNALBOX_TOKEN when set, else the stored ones. A stored
 * token is sent only to the URL it was stored for: with SIGNALBOX_URL naming another server, SIGNALBOX_TOKEN must be
 * set too.
 */
export function loadCredentials(
  env: NodeJS.ProcessEnv = process.env,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Credentials {
  const envUrl = env.SIGNALBOX_URL?.trim() ? normalizeUrl(env.SIGNALBOX_URL) : null;
  const envToken = env.SIGNALBOX_TOKEN?.trim() ? checkToken(env.SIGNALBOX_TOKEN) : null;
  if (envUrl && envToken) return { url: envUrl, token: envToken, from: 'environment' };
  const stored = readStored(env, warn);
  if (envToken) {
    if (!stored) throw new ClientError('SIGNALBOX_TOKEN is set but no server is: set SIGNALBOX_URL too');
    return { url: stored.url, token: envToken, from: 'environment' };
  }
  if (envUrl) {
    if (stored?.url === envUrl) return { url: envUrl, token: stored.token, from: 'file' };
    throw new ClientError(
      `no token for ${envUrl}: set SIGNALBOX_TOKEN, or run signalbox login --url ${envUrl}` +
        (stored ? ` (the stored token is for ${stored.url} and is sent nowhere else)` : ''),
    );
  }
  if (!stored)
    throw new ClientError(
      'not signed in: run signalbox login --url <server URL>, or set SIGNALBOX_URL and SIGNALBOX_TOKEN',
    );
  return { ...stored, from: 'file' };
}

/**
 * Stores the server and token for later commands: the folder is made (or set) 0700, the file is written 0600
 * under a temporary name and renamed over the old one, so no reader ever sees a partial or wider file.
 */
export function saveCredentials(stored: Stored, env: NodeJS.ProcessEnv = process.env): string {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = credentialsFile(env);
  const partial = `${file}.${process.pid}.tmp`;
  const fd = openSync(partial, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify({ url: stored.url, token: stored.token }, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(partial, file);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  return file;
}

/** Forgets the stored server and token; false when none was stored. */
export function removeCredentials(env: NodeJS.ProcessEnv = process.env): { file: string; removed: boolean } {
  const file = credentialsFile(env);
  try {
    rmSync(file);
    return { file, removed: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { file, removed: false };
    throw new ClientError(`cannot remove ${file}: ${(err as Error).message}`);
  }
}
