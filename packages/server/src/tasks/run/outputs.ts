import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { jsonDepth, MAX_JSON_DEPTH } from '@signalbox/contracts';

/**
 * Task outputs: the named values a task publishes for later use (a build's version, a list of artifacts). The task
 * writes a JSON object, or `NAME=value` lines, to the file SIGNALBOX_OUTPUTS names, in its own folder; when it ends
 * the server reads that file and keeps the values on the task. The task controls its folder, so the file is read
 * with care: a regular file only (never through a symbolic link), really in the folder, at most 64 KiB.
 */
export const OUTPUTS_ENV = 'SIGNALBOX_OUTPUTS';
const OUTPUTS_ENV_NAME = OUTPUTS_ENV;
/**
 * Secret outputs: the same formats, written to the file SIGNALBOX_SECRET_OUTPUTS names. The server keeps them
 * sealed with its secret key (task.secret_outputs), answers only their names, and gives them to a workflow's
 * downstream nodes as secret values (encrypted at rest, masked in their logs).
 */
export const SECRET_OUTPUTS_ENV = 'SIGNALBOX_SECRET_OUTPUTS';
export const OUTPUTS_MAX_BYTES = 64 * 1024;

/** Where a task's outputs file is, in its folder. */
export const outputsPath = (taskDir: string) => join(taskDir, 'outputs');
/** Where a task's secret outputs file is, in its folder. */
export const secretOutputsPath = (taskDir: string) => join(taskDir, 'secret-outputs');

export type TaskOutputs = Record<string, unknown>;

const NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,99}$/;

/** The outputs of a document: a JSON object, or `NAME=value` lines (blank lines and `#` comments skipped). */
export function parseOutputs(text: string): TaskOutputs | 'too_deep' | null {
  const trimmed = text.trim();
  if (trimmed === '') return {};
  if (trimmed.startsWith('{')) {
    if (jsonDepth(trimmed) > MAX_JSON_DEPTH) return 'too_deep';
    try {
      const parsed: unknown = JSON.parse(trimmed);
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as TaskOutputs) : null;
    } catch {
      return null;
    }
  }
  const out: TaskOutputs = {};
  for (const raw of trimmed.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) return null;
    const name = line.slice(0, eq).trim();
    if (!NAME.test(name)) return null;
    out[name] = line.slice(eq + 1);
  }
  return out;
}

/**
 * Reads the outputs a task left in its folder; null when it left none or none that can be taken (said with one
 * line through `say`: a file that is not regular, too big or not outputs).
 */
export function readTaskOutputs(
  taskDir: string,
  say: (line: string) => void,
  which: 'plain' | 'secret' = 'plain',
): TaskOutputs | null {
  const path = which === 'secret' ? secretOutputsPath(taskDir) : outputsPath(taskDir);
  const OUTPUTS_ENV = which === 'secret' ? SECRET_OUTPUTS_ENV : OUTPUTS_ENV_NAME;
  let fd: number;
  try {
    // O_NOFOLLOW: a symbolic link is not opened; O_NONBLOCK: a FIFO left there does not hold the server.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    say(
      code === 'ELOOP' || lstatIsLink(path)
        ? `The task's outputs were ignored: ${OUTPUTS_ENV} is a symbolic link, not a file`
        : `The task's outputs were ignored: the file cannot be opened (${code ?? 'error'})`,
    );
    return null;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      say(`The task's outputs were ignored: ${OUTPUTS_ENV} is not a regular file`);
      return null;
    }
    // The file opened is the one in the task's folder (not a folder swapped in on the way).
    if (realpathSync(dirname(path)) !== realpathSync(taskDir) || !sameFile(path, stat)) {
      say(`The task's outputs were ignored: the file is not in the task's folder`);
      return null;
    }
    if (stat.size > OUTPUTS_MAX_BYTES) {
      say(`The task's outputs were ignored: the file is larger than ${OUTPUTS_MAX_BYTES / 1024} KiB`);
      return null;
    }
    const buffer = Buffer.alloc(OUTPUTS_MAX_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > OUTPUTS_MAX_BYTES) {
      say(`The task's outputs were ignored: the file is larger than ${OUTPUTS_MAX_BYTES / 1024} KiB`);
      return null;
    }
    const outputs = parseOutputs(buffer.subarray(0, length).toString('utf8'));
    if (outputs === 'too_deep') {
      say(`The task's outputs were ignored: the JSON is nested deeper than ${MAX_JSON_DEPTH} levels`);
      return null;
    }
    if (!outputs)
      say(`The task's outputs were ignored: write a JSON object or NAME=value lines to ${OUTPUTS_ENV}`);
    return outputs;
  } catch (err) {
    say(
      `The task's outputs were ignored: the file cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
    return null;
  } finally {
    closeSync(fd);
  }
}

function lstatIsLink(path: string) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function sameFile(path: string, stat: { dev: number; ino: number }) {
  try {
    const now = lstatSync(path);
    return now.dev === stat.dev && now.ino === stat.ino;
  } catch {
    return false;
  }
}
