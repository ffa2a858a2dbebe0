import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { type Coded, coded, errorMessage, type KeySourceType, SECRET_MAX } from '@signalbox/contracts';
import { type Config, settingNames } from '../config';
import type { SecretBox } from './crypto';
import { fieldError } from './errors';

/**
 * Keys whose secret lives on the server: an environment variable of the server process, or a file under the
 * configured directory, read each time a task (or a new-commit check, or a webhook) needs the key. Whoever can
 * create such a key can make tasks read what it names, so only administrators may create or change one, and
 * even they can name only environment variables starting with SIGNALBOX_KEY_ENV_PREFIX (never a setting of the
 * server) and only regular files inside SIGNALBOX_KEY_FILES_DIR (after symlinks are resolved). The same rules are
 * checked again at every read: a key stored under laxer settings reads nothing they no longer allow.
 */

type SourceConfig = Pick<Config, 'keyEnvPrefix' | 'keyFilesDir'>;

/** Why a key's secret could not be read: names the variable or file, never any of its content. */
export class KeySourceError extends Error {}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why an environment variable name may not be a key's source; null when it may. */
export function envNameProblem(config: SourceConfig, name: string): Coded | null {
  if (!ENV_NAME.test(name)) return coded('key_env_name_invalid', { name });
  const prefix = config.keyEnvPrefix;
  if (!name.startsWith(prefix) || name.length === prefix.length)
    return coded('key_env_prefix', { name, prefix });
  if (settingNames.has(name)) return coded('key_env_setting', { name });
  return null;
}

const inside = (dir: string, path: string) => {
  const rel = relative(dir, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
};

/**
 * The absolute path a file source names (a path relative to the key files directory is taken inside it), or why
 * it may not be a source. Checks only the text: no `..` segment, no control characters, inside the directory.
 */
function filePathOf(config: SourceConfig, path: string): { path: string } | { problem: Coded } {
  const dir = config.keyFilesDir;
  if (!dir) return { problem: coded('key_files_unset') };
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(path))
    return { problem: coded('control_chars', { field: 'source_storage_key' }) };
  if (path.split(/[\\/]/).includes('..')) return { problem: coded('key_file_dotdot', { path }) };
  const full = resolve(dir, path);
  if (!inside(resolve(dir), full))
    return {
      problem: coded('key_file_outside', { path, dir }),
    };
  return { path: full };
}

async function realpathOrNull(path: string): Promise<string | null> {
  try {
    return await realpath(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The key files directory with its symlinks resolved; throws when it does not exist. */
async function realDir(config: SourceConfig): Promise<string> {
  const dir = config.keyFilesDir as string;
  const real = await realpathOrNull(dir);
  if (!real) throw new KeySourceError(errorMessage(coded('key_files_dir_missing', { dir })));
  return real;
}

/**
 * Checks the source of a key an administrator saves and answers what to store: the variable name, or the file's
 * absolute path. A variable or file that does not exist yet is accepted (tasks fail naming it until it does);
 * an existing path must resolve, symlinks followed, to a regular file inside the directory. 400 naming the
 * problem otherwise.
 */
export async function checkKeySource(
  config: SourceConfig,
  type: KeySourceType,
  key: string,
): Promise<string> {
  const field = 'source_storage_key';
  if (type === 'env') {
    const problem = envNameProblem(config, key);
    if (problem) throw fieldError(field, problem);
    return key;
  }
  const named = filePathOf(config, key);
  if ('problem' in named) throw fieldError(field, named.problem);
  let dir: string;
  try {
    dir = await realDir(config);
  } catch {
    throw fieldError(field, coded('key_files_dir_missing', { dir: config.keyFilesDir as string }));
  }
  // The file itself when it exists, else the nearest directory above it that does.
  let probe = named.path;
  let real = await realpathOrNull(probe);
  while (!real && probe !== dirname(probe)) {
    probe = dirname(probe);
    real = await realpathOrNull(probe);
  }
  const exists = probe === named.path;
  if (!real || !(exists ? inside(dir, real) : real === dir || inside(dir, real))) {
    throw fieldError(field, coded('key_file_symlink_out', { path: key }));
  }
  if (exists) {
    const problem = await regularFileProblem(real);
    if (problem) throw fieldError(field, coded(problem, { path: key }));
  }
  return named.path;
}

async function regularFileProblem(
  path: string,
): Promise<'key_file_unreadable' | 'key_file_not_regular' | null> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    () => null,
  );
  if (!handle) return 'key_file_unreadable';
  try {
    return (await handle.stat()).isFile() ? null : 'key_file_not_regular';
  } finally {
    await handle.close();
  }
}

/** Reads an 'env' or 'file' source now. Throws KeySourceError naming the variable or file when it cannot. */
export async function readKeySource(config: SourceConfig, type: string, key: string): Promise<string> {
  if (type === 'env') {
    const problem = envNameProblem(config, key);
    if (problem) throw new KeySourceError(errorMessage(problem));
    const value = process.env[key];
    if (value === undefined) throw new KeySourceError(`Environment variable ${key} is not set on the server`);
    if (value === '') throw new KeySourceError(`Environment variable ${key} is empty on the server`);
    return value;
  }
  if (type !== 'file') throw new KeySourceError(`Unknown secret source "${type}"`);
  const named = filePathOf(config, key);
  if ('problem' in named) throw new KeySourceError(errorMessage(named.problem));
  const dir = await realDir(config);
  const real = await realpathOrNull(named.path);
  if (!real) throw new KeySourceError(`File ${named.path} does not exist on the server`);
  if (!inside(dir, real))
    throw new KeySourceError(
      `File ${named.path} leads out of the key files directory (through a symbolic link)`,
    );
  // O_NOFOLLOW: the resolved path must not have turned into a link since; O_NONBLOCK: a FIFO does not hang.
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    (err: NodeJS.ErrnoException) => {
      throw new KeySourceError(`File ${named.path} cannot be read by the server (${err.code ?? 'error'})`);
    },
  );
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new KeySourceError(`File ${named.path} is not a regular file`);
    if (stat.size > SECRET_MAX)
      throw new KeySourceError(`File ${named.path} is larger than ${SECRET_MAX} bytes`);
    const text = (await handle.readFile()).toString('utf8');
    if (text.trim() === '') throw new KeySourceError(`File ${named.path} is empty`);
    return text;
  } finally {
    await handle.close();
  }
}

/** The parts of a key's secret: what the task engine, new-commit checks and webhooks use. */
export type KeySecret = { login: string; password: string; passphrase: string; private_key: string };

/** The columns of an access_key row a secret is read from. */
export type KeySecretRow = {
  name: string;
  type: string;
  secret: string | null;
  source_storage_type: string | null;
  source_storage_key: string | null;
};

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** The stored (sealed) part of a key's secret; unreadable text counts as empty. */
export function openStoredSecret(box: SecretBox, sealed: string | null): Record<string, unknown> {
  if (!sealed) return {};
  try {
    const value = JSON.parse(box.open(sealed)) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * What a source's text means for a key of its type. The text is the password (login_password) or the private key
 * (ssh) itself, one trailing newline dropped from a password; the login (and an ssh passphrase) stay stored with
 * the key. A JSON object with `login` / `password` / `private_key` / `passphrase` (the peer's format) sets those
 * fields instead.
 */
export function applySourceText(type: string, stored: KeySecret, text: string): KeySecret {
  if (text.trimStart().startsWith('{')) {
    try {
      const json = JSON.parse(text) as Record<string, unknown>;
      const fields = ['login', 'password', 'private_key', 'passphrase'] as const;
      if (json && typeof json === 'object' && fields.some((f) => typeof json[f] === 'string')) {
        const pick = (f: (typeof fields)[number]) =>
          typeof json[f] === 'string' ? (json[f] as string) : stored[f];
        return {
          login: pick('login'),
          password: pick('password'),
          passphrase: pick('passphrase'),
          private_key: pick('private_key'),
        };
      }
    } catch {
      // not JSON: the text is the secret itself
    }
  }
  if (type === 'login_password') return { ...stored, password: text.replace(/\r?\n$/, '') };
  if (type === 'ssh') return { ...stored, private_key: text };
  return stored;
}

/**
 * A key's secret, decrypted or read from its source now. Throws KeySourceError, naming the key and the variable
 * or file, when a source cannot be read.
 */
export async function keySecretOf(
  deps: { box: SecretBox; config: SourceConfig },
  row: KeySecretRow,
): Promise<KeySecret> {
  const sealed = openStoredSecret(deps.box, row.secret);
  const stored: KeySecret = {
    login: str(sealed.login),
    password: str(sealed.password),
    passphrase: str(sealed.passphrase),
    private_key: str(sealed.private_key),
  };
  if (!row.source_storage_type || row.type === 'none') return stored;
  try {
    const text = await readKeySource(deps.config, row.source_storage_type, row.source_storage_key ?? '');
    return applySourceText(row.type, stored, text);
  } catch (err) {
    if (err instanceof KeySourceError) throw new KeySourceError(`Key "${row.name}": ${err.message}`);
    throw err;
  }
}
