import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import type { Db, Dialect } from '../../db';
import { parseSecretKey, secretKeyFiles, syncDirectory, writeSecretKeyFile } from '../../lib/crypto';
import { runnerTimings } from '../../tasks/queue/instances';
import { liveRunners } from '../../tasks/queue/instances.store';
import { keyIdOf, RotationError, rotateSecrets, rotationState, SEALED_TABLES } from './rotate';

export const SECRET_KEY_USAGE = `Usage: signalbox secret-key rotate [--new-key-file F | --write-new-key F] [--batch-size N]

Re-encrypts every stored secret under a new secret key, then installs that key. Stop every server on the
database first. The new key is never given on the command line (other users can read it in ps):
  --new-key-file F    read the new key (base64 of 32 bytes) from the file F
  SIGNALBOX_NEW_SECRET_KEY
                      or from this environment variable
  (neither)           generate one: into <data dir>/secret.key.pending, promoted to secret.key at the end; with
                      SIGNALBOX_SECRET_KEY set, into the new file --write-new-key F names (mode 0600)
Interrupted, it leaves every secret readable: run the same command again to finish (with SIGNALBOX_SECRET_KEY,
give the new key again with --new-key-file).`;

/** The environment variable a new key may be given in. */
export const NEW_KEY_ENV = 'SIGNALBOX_NEW_SECRET_KEY';

type Ctx = { config: Config; db: Db; dialect: Dialect; env?: NodeJS.ProcessEnv };

/** `signalbox secret-key rotate`: see SECRET_KEY_USAGE. Returns the exit code. */
export async function runSecretKeyCommand(ctx: Ctx, argv: string[]): Promise<number> {
  const [sub, ...args] = argv;
  if (sub !== 'rotate') {
    console.log(SECRET_KEY_USAGE);
    return sub === undefined || sub === 'help' || sub === '--help' ? 0 : 1;
  }
  let values: { 'new-key-file'?: string; 'write-new-key'?: string; 'batch-size'?: string };
  try {
    values = parseArgs({
      args,
      options: {
        'new-key-file': { type: 'string' },
        'write-new-key': { type: 'string' },
        'batch-size': { type: 'string' },
      },
    }).values;
  } catch {
    // The message of parseArgs would repeat the argument, which may be a key typed where it must not be.
    return fail(`Unknown option or argument.\n\n${SECRET_KEY_USAGE}`);
  }
  const batchSize = values['batch-size'] === undefined ? 200 : Number(values['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000)
    return fail('--batch-size must be a whole number from 1 to 10000');
  try {
    return await rotate(ctx, values, batchSize);
  } catch (err) {
    if (err instanceof RotationError) return fail(`Secret key not rotated: ${err.message}`);
    throw err;
  }
}

async function rotate(
  ctx: Ctx,
  values: { 'new-key-file'?: string; 'write-new-key'?: string },
  batchSize: number,
): Promise<number> {
  const env = ctx.env ?? process.env;
  const files = secretKeyFiles(ctx.config.dataDir);
  const inEnv = Boolean(ctx.config.secretKey);

  // The current key, read as the server reads it (but never generated).
  let current: Buffer;
  if (ctx.config.secretKey) current = Buffer.from(ctx.config.secretKey, 'base64');
  else if (existsSync(files.key)) current = readKey(files.key);
  else
    throw new RotationError(
      `there is no secret key to rotate: SIGNALBOX_SECRET_KEY is not set and ${files.key} does not exist`,
    );

  const running = await liveRunners(ctx, runnerTimings.heartbeatMs * 3);
  if (running.size)
    throw new RotationError(
      `a server is running on this database (instance ${[...running].join(', ')}): stop every server first`,
    );

  const given = [
    values['new-key-file'] !== undefined && readKey(values['new-key-file']),
    env[NEW_KEY_ENV] !== undefined && parseKey(env[NEW_KEY_ENV], NEW_KEY_ENV),
  ].filter((k): k is Buffer => k !== false);
  if (given.length > 1) throw new RotationError(`give the new key once: --new-key-file or ${NEW_KEY_ENV}`);
  if (given.length && values['write-new-key'])
    throw new RotationError('--write-new-key writes a generated key: it goes with no other new key');
  if (!inEnv && values['write-new-key'])
    throw new RotationError(
      `--write-new-key is for servers given SIGNALBOX_SECRET_KEY: the new key goes to ${files.pending}`,
    );
  const pending = !inEnv && existsSync(files.pending) ? readKey(files.pending) : undefined;
  const { rotating } = await rotationState(ctx.db);

  let next = given[0] ?? pending;
  if (next && pending && !next.equals(pending))
    throw new RotationError(
      `${files.pending} holds the new key of an unfinished rotation: run the command without a new key to finish it`,
    );
  if (!next && rotating)
    throw new RotationError(
      `an unfinished rotation to the key with id ${rotating.slice(0, 8)} is recorded in the database: give that ` +
        'key with --new-key-file to finish it',
    );
  let generatedInto: string | undefined;
  if (!next) {
    next = randomBytes(32);
    if (inEnv) {
      const out = values['write-new-key'];
      if (!out)
        throw new RotationError(
          'SIGNALBOX_SECRET_KEY is set: give the new key with --new-key-file or SIGNALBOX_NEW_SECRET_KEY, or ' +
            'name a file for a generated one with --write-new-key F',
        );
      if (existsSync(out)) throw new RotationError(`${out} exists already: name a new file for the new key`);
      writeSecretKeyFile(out, next);
      generatedInto = out;
    }
  }
  // Written before any value changes: the new key must survive an interruption.
  if (!inEnv && !pending) writeSecretKeyFile(files.pending, next);

  const counts = await rotateSecrets(ctx.db, current, next, {
    batchSize,
    afterBatch: (table, resealed) => console.log(`  ${table}: ${resealed} re-encrypted`),
  });
  if (counts) {
    console.log(`Secrets re-encrypted under the new key (id ${keyIdOf(next)}):`);
    for (const table of SEALED_TABLES) {
      const { resealed, already } = counts[table];
      console.log(
        `  ${table}: ${resealed}${already ? ` (and ${already} re-encrypted by an earlier run)` : ''}`,
      );
    }
  } else console.log(`The database's secrets were under the new key (id ${keyIdOf(next)}) already.`);

  if (!inEnv) {
    // The old key stays beside it for the backups taken before this rotation.
    writeSecretKeyFile(files.previous, current);
    renameSync(files.pending, files.key);
    syncDirectory(dirname(files.key));
    console.log(`Installed the new key in ${files.key}; the old key is in ${files.previous}.`);
    console.log(
      'Copy secret.key to the data directory of every other server of this database before starting it.',
    );
  } else {
    console.log(
      `Now set SIGNALBOX_SECRET_KEY of every server of this database to the new key${
        generatedInto ? ` (written to ${generatedInto})` : ''
      } and start them. Keep the old key with the backups taken before this rotation.`,
    );
  }
  return 0;
}

function readKey(file: string): Buffer {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new RotationError(
      `cannot read the key file ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`,
    );
  }
  return parseKey(text, file);
}

function parseKey(text: string, source: string): Buffer {
  try {
    return parseSecretKey(text, source);
  } catch (err) {
    throw new RotationError((err as Error).message);
  }
}

function fail(message: string) {
  console.error(message);
  return 1;
}
