import type { Selectable } from 'kysely';
import type { Db } from '../db';
import type { Dialect } from '../db/dialect';
import type { UserTotpTable } from '../db/tables';
import { insertReturningId, now } from '../db/values';

export type TotpRow = Selectable<UserTotpTable>;

export const findTotp = (db: Db, userId: number) =>
  db.selectFrom('user_totp').selectAll().where('user_id', '=', userId).executeTakeFirst();

/** The users (of `userIds`, or all) whose TOTP is turned on, by user id. */
export async function confirmedTotps(db: Db, userIds?: number[]): Promise<Map<number, TotpRow>> {
  if (userIds?.length === 0) return new Map();
  let query = db.selectFrom('user_totp').selectAll().where('confirmed', '=', 1);
  if (userIds) query = query.where('user_id', 'in', userIds);
  return new Map((await query.execute()).map((row) => [row.user_id, row]));
}

/** Starts a new set-up for the user in place of any unconfirmed one (the caller checked none is confirmed). */
export async function replacePendingTotp(
  db: Db,
  dialect: Dialect,
  userId: number,
  sealedSecret: string,
): Promise<TotpRow> {
  await deleteTotpRows(db, userId, { pendingOnly: true });
  const id = await insertReturningId(db, dialect, 'user_totp', {
    user_id: userId,
    created: now(),
    secret: sealedSecret,
    confirmed: 0,
    confirmed_at: null,
    last_step: null,
  });
  return db.selectFrom('user_totp').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/**
 * Records `step` as the time step of the last code accepted, unless a code of that step or a later one was
 * accepted already: of two requests with the same code, exactly one wins. With `confirm`, also turns the TOTP on.
 */
export async function acceptStep(db: Db, totpId: number, step: number, confirm = false): Promise<boolean> {
  const result = await db
    .updateTable('user_totp')
    .set(confirm ? { last_step: step, confirmed: 1, confirmed_at: now() } : { last_step: step })
    .where('id', '=', totpId)
    .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
    .where('confirmed', '=', confirm ? 0 : 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function addRecoveryCodes(db: Db, totpId: number, hashes: string[]) {
  if (hashes.length)
    await db
      .insertInto('user_totp_recovery')
      .values(hashes.map((code_hash) => ({ totp_id: totpId, code_hash })))
      .execute();
}

export const listRecoveryCodes = (db: Db, totpId: number) =>
  db.selectFrom('user_totp_recovery').select(['id', 'code_hash']).where('totp_id', '=', totpId).execute();

export async function countRecoveryCodes(db: Db, totpId: number): Promise<number> {
  const row = await db
    .selectFrom('user_totp_recovery')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('totp_id', '=', totpId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Uses up one recovery code: false when another request used it first. */
export async function useRecoveryCode(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('user_totp_recovery').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Removes the user's TOTP and its recovery codes (only an unconfirmed set-up with `pendingOnly`); rows removed. */
export async function deleteTotpRows(db: Db, userId: number, { pendingOnly = false } = {}): Promise<number> {
  let query = db.selectFrom('user_totp').select('id').where('user_id', '=', userId);
  if (pendingOnly) query = query.where('confirmed', '=', 0);
  const ids = (await query.execute()).map((r) => r.id);
  if (!ids.length) return 0;
  await db.deleteFrom('user_totp_recovery').where('totp_id', 'in', ids).execute();
  const result = await db.deleteFrom('user_totp').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows);
}
