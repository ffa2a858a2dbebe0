import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../db';
import type { SignInThrottleTable } from '../db/tables';
import { isUniqueViolation } from '../db/values';

export type ThrottleRow = Selectable<SignInThrottleTable>;
export type ThrottleCounts = Pick<
  ThrottleRow,
  'failures' | 'first_failure' | 'last_failure' | 'blocked_until'
>;

export const findThrottle = (db: Db, id: string) =>
  db.selectFrom('sign_in_throttle').selectAll().where('id', '=', id).executeTakeFirst();

/** Inserts a first row for a key; false when another request inserted it first. */
export async function insertThrottle(db: Db, row: Insertable<SignInThrottleTable>): Promise<boolean> {
  try {
    await db.insertInto('sign_in_throttle').values(row).execute();
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

/**
 * Writes new counts only if the row is still as `seen` was read (compare-and-set): of two requests charging the
 * same key at once, exactly one wins and the other reads again.
 */
export async function updateThrottleIf(db: Db, seen: ThrottleRow, counts: ThrottleCounts): Promise<boolean> {
  const result = await db
    .updateTable('sign_in_throttle')
    .set(counts)
    .where('id', '=', seen.id)
    .where('failures', '=', seen.failures)
    .where('last_failure', '=', seen.last_failure)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Counts one failure against an address row in one atomic statement, while its window (begun after
 * `windowBegunAfter`) is open and it has fewer than `max`: many sign-ins from one address at once (a proxy)
 * never contend. False when the row is missing, full, or its window is over.
 */
export async function countAddressFailure(
  db: Db,
  id: string,
  max: number,
  windowBegunAfter: string,
  at: string,
): Promise<boolean> {
  const result = await db
    .updateTable('sign_in_throttle')
    .set((eb) => ({ failures: eb('failures', '+', 1), last_failure: at }))
    .where('id', '=', id)
    .where('failures', '<', max)
    .where('first_failure', '>', windowBegunAfter)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Gives back one counted failure (the attempt turned out right, or was refused after all). */
export async function uncountFailure(db: Db, id: string) {
  await db
    .updateTable('sign_in_throttle')
    .set((eb) => ({ failures: eb('failures', '-', 1) }))
    .where('id', '=', id)
    .where('failures', '>', 0)
    .execute();
}

export async function deleteThrottle(db: Db, id: string) {
  await db.deleteFrom('sign_in_throttle').where('id', '=', id).execute();
}

/** Forgets every failure counted against a user's login, from any address; the number of rows removed. */
export async function deleteUserThrottles(db: Db, userId: number): Promise<number> {
  const result = await db.deleteFrom('sign_in_throttle').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The latest time until which some address must wait before trying the user's password again, or null. */
export async function userBlockedUntil(db: Db, userId: number, at: string): Promise<string | null> {
  const row = await db
    .selectFrom('sign_in_throttle')
    .select((eb) => eb.fn.max('blocked_until').as('until'))
    .where('user_id', '=', userId)
    .where('blocked_until', '>', at)
    .executeTakeFirst();
  return row?.until ?? null;
}

/** Removes rows whose last failure is older than `before`; the number removed. */
export async function pruneThrottles(db: Db, before: string): Promise<number> {
  const result = await db
    .deleteFrom('sign_in_throttle')
    .where('last_failure', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
