import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import type { Config } from '../../config';
import type { Db, Dialect } from '../../db';
import { createSecretBox, loadSecretKey } from '../../lib/crypto';
import { AppError } from '../../lib/errors';
import { readInstanceBackup, restoreInstanceBackup } from './instance-backup';

export const SECRET_KEY_REMINDER = [
  'This file holds no secret: key contents, secret variables and user passwords are left out and must be',
  'entered again after a restore. To keep them, back up the database itself (the SQLite file, or a dump of',
  'PostgreSQL/MariaDB) together with the secret key (SIGNALBOX_SECRET_KEY, or secret.key in the data dir):',
  'without that key the stored secrets cannot be read.',
].join('\n');

/**
 * `signalbox backup --file F` and `signalbox restore --file F`: the whole instance, in the format of
 * instance-backup.ts. Returns the exit code. Restore writes straight to the database: run it with the servers
 * stopped (they load the restored schedules when they start).
 */
export async function runInstanceBackupCommand(
  command: 'backup' | 'restore',
  ctx: { config: Config; db: Db; dialect: Dialect },
  argv: string[],
): Promise<number> {
  let file: string | undefined;
  try {
    file = parseArgs({ args: argv, options: { file: { type: 'string' } } }).values.file;
  } catch (err) {
    return fail((err as Error).message);
  }
  if (!file) return fail(`Usage: signalbox ${command} --file F`);

  if (command === 'backup') {
    const backup = await readInstanceBackup(ctx.db);
    // Names and e-mail addresses of every user: readable by the owner only.
    writeFileSync(file, `${JSON.stringify(backup, null, 2)}\n`, { mode: 0o600 });
    console.log(`Backed up ${backup.users.length} users and ${backup.projects.length} projects to ${file}`);
    console.log(SECRET_KEY_REMINDER);
    return 0;
  }

  let body: unknown;
  try {
    body = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return fail(`Cannot read ${file}: ${(err as Error).message}`);
  }
  const deps = {
    ...ctx,
    box: createSecretBox(loadSecretKey(ctx.config.secretKey, ctx.config.dataDir)),
    log: pino({ level: ctx.config.logLevel }),
    // No scheduler runs in this process: servers read the restored schedules when they start.
    scheduler: { start: async () => {}, refresh: async () => {}, close: async () => {} },
  };
  try {
    const summary = await restoreInstanceBackup(deps, body);
    console.log(
      `Restored ${summary.projects.length} projects and ${summary.created.length} users from ${file}`,
    );
    if (summary.kept.length) console.log(`Users already here, left as they are: ${summary.kept.join(', ')}`);
    if (summary.needPassword.length)
      console.log(
        `Users without a password (set one with \`npx signalbox user change-by-login --login L --password P\`): ${summary.needPassword.join(', ')}`,
      );
    console.log('Keys and secret variables were restored empty: fill them in again in each project.');
    return 0;
  } catch (err) {
    if (err instanceof AppError) return fail(err.message);
    throw err;
  }
}

function fail(message: string) {
  console.error(message);
  return 1;
}
