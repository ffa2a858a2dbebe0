import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';

/** A runner's folder: its settings, its private key and its work (task folders, repository cache). */
export function runnerDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(flag || env.SIGNALBOX_RUNNER_DIR || join(homedir(), '.signalbox-runner'));
}

export const settingsFile = 'runner.json';
export const keyFile = 'runner.key';

const settingsSchema = z.object({
  url: z.string().min(1),
  id: z.number().int().positive(),
  name: z.string().optional(),
  token: z.string().min(1),
  tags: z.array(z.string()).default([]),
  max_parallel: z.number().int().min(1).max(1000),
});
/** runner.json: where the runner's server is and who the runner is there (its token too: the file is 0600). */
export type RunnerSettings = z.infer<typeof settingsSchema>;

export class RunnerFilesError extends Error {}

export function isRegistered(dir: string): boolean {
  return existsSync(join(dir, settingsFile));
}

/** Writes a file only the runner's user can read, atomically (a crash leaves the old file or the new one). */
function writePrivate(path: string, content: string) {
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true });
  writeFileSync(tmp, content, { mode: 0o600, flag: 'wx' });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export function saveRunner(dir: string, settings: RunnerSettings, privateKey: string) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  writePrivate(join(dir, keyFile), privateKey);
  writePrivate(join(dir, settingsFile), `${JSON.stringify(settings, null, 2)}\n`);
}

export function loadRunner(dir: string): { settings: RunnerSettings; privateKey: string } {
  const path = join(dir, settingsFile);
  if (!existsSync(path))
    throw new RunnerFilesError(`No runner is registered in ${dir}: run "signalbox runner register" first`);
  let settings: RunnerSettings;
  try {
    settings = settingsSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
  } catch {
    throw new RunnerFilesError(`${path} is not a runner settings file`);
  }
  let privateKey: string;
  try {
    privateKey = readFileSync(join(dir, keyFile), 'utf8');
  } catch {
    throw new RunnerFilesError(`Cannot read the runner's private key ${join(dir, keyFile)}`);
  }
  return { settings, privateKey };
}

/** Removes what registration stored (the work folder goes too). */
export function removeRunner(dir: string) {
  rmSync(join(dir, settingsFile), { force: true });
  rmSync(join(dir, keyFile), { force: true });
  rmSync(join(dir, 'work'), { recursive: true, force: true });
  rmSync(join(dir, 'runner.pid'), { force: true });
}
