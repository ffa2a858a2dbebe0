import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// A runner's folder is its own: one runner process at a time, recorded in runner.pid.

/** The pid of a live runner process using the folder, if any. */
export function runnerProcessIn(dir: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dir, 'runner.pid'), 'utf8').trim());
  } catch {
    return null;
  }
  if (!(pid > 0) || pid === process.pid) return null;
  try {
    process.kill(pid, 0);
  } catch {
    return null;
  }
  // A reused pid of another program is not a runner.
  return readCmdline(pid).includes('runner') ? pid : null;
}

export class RunnerBusyError extends Error {}

/** Refuses to run two runner processes in one folder (they would kill each other's tasks at start). */
export function lockRunnerDir(dir: string): () => void {
  const other = runnerProcessIn(dir);
  if (other) throw new RunnerBusyError(`Another runner process (pid ${other}) is running in ${dir}`);
  const path = join(dir, 'runner.pid');
  writeFileSync(path, String(process.pid), { mode: 0o600 });
  return () => {
    try {
      if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path, { force: true });
    } catch {
      // already gone
    }
  };
}

function readCmdline(pid: number) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}
