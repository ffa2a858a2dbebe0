import { sql, type Transaction } from 'kysely';
import type { Database, Db } from '../../db';
import { SECRET_KEY_OPTION, SECRET_KEY_ROTATION_OPTION } from '../../db/options';
import { toCount } from '../../db/values';
import { createSecretBox, secretKeyFingerprint } from '../../lib/crypto';

/**
 * Every table with a column sealed with the secret key, each in its `secret` column: access_key (the key store's
 * keys, environment secrets and secret variables, integration auth secrets), task (secret survey answers of
 * unfinished tasks), user_totp (two-factor secrets) and terraform_state_version (the built-in state backend's
 * states). The OIDC sign-in cookie is sealed too but lives in the
 * browser for minutes only; runner job payloads are sealed to each runner's own key, not this one.
 */
export const SEALED_TABLES = ['access_key', 'task', 'user_totp', 'terraform_state_version'] as const;
export type SealedTable = (typeof SEALED_TABLES)[number];

/** Per table: values re-encrypted by this run, and values a former (interrupted) run had re-encrypted already. */
export type RotationCounts = Record<SealedTable, { resealed: number; already: number }>;

/** A rotation that cannot start or go on; its message says why and what to do. */
export class RotationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RotationError';
  }
}

/** The short id of a key, as sealed values carry it: safe to print. */
export const keyIdOf = (key: Buffer) => secretKeyFingerprint(key).slice(0, 8);

/** What the database records of its key: its fingerprint, and the new key's of an unfinished rotation. */
export async function rotationState(db: Db): Promise<{ recorded?: string; rotating?: string }> {
  const rows = await db
    .selectFrom('option')
    .select(['key', 'value'])
    .where('key', 'in', [SECRET_KEY_OPTION, SECRET_KEY_ROTATION_OPTION])
    .execute();
  const of = (key: string) => rows.find((r) => r.key === key)?.value;
  return { recorded: of(SECRET_KEY_OPTION), rotating: of(SECRET_KEY_ROTATION_OPTION) };
}

async function setOption(trx: Transaction<Database> | Db, key: string, value: string) {
  const res = await trx.updateTable('option').set({ value }).where('key', '=', key).executeTakeFirst();
  if (toCount(res.numUpdatedRows) === 0) await trx.insertInto('option').values({ key, value }).execute();
}

/** Sealed text a batch holds in memory at most (at least one row): states may be 16 MiB each. */
const BATCH_BYTES = 64 * 1024 * 1024;

/**
 * The next rows after `afterId` with a sealed value: at most `size` of them and, past the first, no more than
 * `bytes` of sealed text together (their lengths are read first). `more` is false once the table has no row left.
 */
async function sealedBatch(
  trx: Transaction<Database> | Db,
  table: SealedTable,
  afterId: number,
  size: number,
  bytes: number,
) {
  // The four tables share the shape read here (an integer id and a nullable text `secret`).
  const db = trx as Db;
  const lengths = await db
    .selectFrom(table as 'access_key')
    .select(['id', sql<number | string>`length(secret)`.as('n')])
    .where('id', '>', afterId)
    .where('secret', 'is not', null)
    .where('secret', '!=', '')
    .orderBy('id')
    .limit(size)
    .execute();
  let count = 0;
  for (let total = 0; count < lengths.length; count++) {
    total += Number(lengths[count]?.n ?? 0);
    if (count > 0 && total > bytes) break;
  }
  const ids = lengths.slice(0, count).map((r) => r.id);
  const rows = ids.length
    ? ((await db
        .selectFrom(table as 'access_key')
        .select(['id', 'secret'])
        .where('id', 'in', ids)
        .where('secret', 'is not', null)
        .orderBy('id')
        .execute()) as { id: number; secret: string }[])
    : [];
  return {
    rows,
    last: ids[ids.length - 1] ?? afterId,
    more: lengths.length === size || count < lengths.length,
  };
}

export type RotateOptions = {
  /** Rows re-encrypted per transaction. */
  batchSize?: number;
  /** Sealed text per transaction, at most (at least one row); 64 MiB by default. */
  batchBytes?: number;
  /** Called after each committed batch (tests interrupt a rotation here). */
  afterBatch?: (table: SealedTable, resealed: number) => void | Promise<void>;
};

/**
 * Re-encrypts every sealed value of the database from `current` to `next`, in batches, each in one transaction,
 * and then records `next` as the database's key. Safe to interrupt at any point: the database records the
 * rotation (SECRET_KEY_ROTATION_OPTION, so no server starts meanwhile) before the first value changes, every value
 * opens under one of the two keys at any moment, and a run with the same two keys resumes (values already under
 * `next` are left as they are). Nothing is changed when a value opens under neither key. Returns the counts, or
 * null when the database records `next` already (an earlier run finished the database's part).
 */
export async function rotateSecrets(
  db: Db,
  current: Buffer,
  next: Buffer,
  options: RotateOptions = {},
): Promise<RotationCounts | null> {
  const batchSize = options.batchSize ?? 200;
  const batchBytes = options.batchBytes ?? BATCH_BYTES;
  const [from, to] = [secretKeyFingerprint(current), secretKeyFingerprint(next)];
  if (from === to) throw new RotationError('the new key is the current key: give another one');
  const state = await rotationState(db);
  if (state.rotating && state.rotating !== to)
    throw new RotationError(
      `an unfinished rotation to another key (id ${state.rotating.slice(0, 8)}) is recorded in the database: ` +
        'give that key as the new key to finish it',
    );
  if (!state.rotating && state.recorded === to) return null;
  if (state.recorded && state.recorded !== from && state.recorded !== to)
    throw new RotationError(
      `the current key (id ${from.slice(0, 8)}) is not the database's key (id ${state.recorded.slice(0, 8)}): ` +
        'run the command with the key the server uses',
    );

  const both = createSecretBox(next, current);
  const nextOnly = createSecretBox(next);
  const opensUnder = (box: typeof both, sealed: string) => {
    try {
      box.open(sealed);
      return true;
    } catch {
      return false;
    }
  };

  // Every value must open before the first one changes: a rotation that stopped on a value half-way would leave
  // the servers unable to start until that value is dealt with.
  const unreadable: string[] = [];
  for (const table of SEALED_TABLES) {
    for (let after = 0; ; ) {
      const batch = await sealedBatch(db, table, after, batchSize, batchBytes);
      for (const row of batch.rows) if (!opensUnder(both, row.secret)) unreadable.push(`${table} ${row.id}`);
      if (!batch.more) break;
      after = batch.last;
    }
  }
  if (unreadable.length)
    throw new RotationError(
      `${unreadable.length} sealed value(s) open under neither the current nor the new key, so nothing was ` +
        `changed: ${unreadable.slice(0, 10).join(', ')}${unreadable.length > 10 ? ', …' : ''} (table and id)`,
    );

  await setOption(db, SECRET_KEY_ROTATION_OPTION, to);
  const counts = Object.fromEntries(
    SEALED_TABLES.map((table) => [table, { resealed: 0, already: 0 }]),
  ) as RotationCounts;
  for (const table of SEALED_TABLES) {
    for (let after = 0; ; ) {
      const { size, last, more, resealed } = await db.transaction().execute(async (trx) => {
        const { rows, last, more } = await sealedBatch(trx, table, after, batchSize, batchBytes);
        let changed = 0;
        for (const row of rows) {
          if (opensUnder(nextOnly, row.secret)) {
            counts[table].already++;
            continue;
          }
          const res = await (trx as unknown as Db)
            .updateTable(table as 'access_key')
            .set({ secret: nextOnly.seal(both.open(row.secret)) })
            .where('id', '=', row.id)
            .where('secret', '=', row.secret)
            .executeTakeFirst();
          changed += toCount(res.numUpdatedRows);
        }
        return { size: rows.length, last, more, resealed: changed };
      });
      counts[table].resealed += resealed;
      if (size) await options.afterBatch?.(table, resealed);
      if (!more) break;
      after = last;
    }
  }
  await db.transaction().execute(async (trx) => {
    await setOption(trx, SECRET_KEY_OPTION, to);
    await trx.deleteFrom('option').where('key', '=', SECRET_KEY_ROTATION_OPTION).execute();
  });
  return counts;
}
