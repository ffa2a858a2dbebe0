// Runs a set-up step (an install, a build) with one line of progress instead of its whole output: the output is
// kept and shown only when the step fails, so the lines a person needs after it (the server's address, a first
// admin password) are not scrolled away. SIGNALBOX_BOOTSTRAP_VERBOSE=1 shows the output as it comes.
import { spawnSync } from 'node:child_process';

/**
 * Runs `cmd` in a shell in `cwd`, printing `[bootstrap] <note>…` first (to `write`) and `done (N s)` after it. On
 * failure the step's output (stdout and stderr, interleaved) is written out and an error naming the command thrown.
 */
export function quietRun(cmd, { cwd, note = cmd, write = (text) => process.stderr.write(text) } = {}) {
  const verbose = process.env.SIGNALBOX_BOOTSTRAP_VERBOSE === '1';
  const started = Date.now();
  write(`[bootstrap] ${note}… `);
  const result = spawnSync('/bin/sh', ['-c', `exec 2>&1; ${cmd}`], {
    cwd,
    stdio: verbose ? ['ignore', 'inherit', 'inherit'] : ['ignore', 'pipe', 'pipe'],
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.status === 0) {
    write(`done (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
    return;
  }
  write('failed:\n');
  if (!verbose) write(String(result.stdout ?? ''));
  throw new Error(`[bootstrap] ${cmd} failed (${result.signal ?? `exit code ${result.status}`})`);
}
