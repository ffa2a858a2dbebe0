import type { Db } from '../db';
import { fromBool, now } from '../db/values';
import { randomToken, sha256 } from '../lib/crypto';

export const SESSION_IDLE_MS = 7 * 24 * 3600 * 1000;
/** last_active is written at most this often, so reads stay reads. */
const TOUCH_EVERY_MS = 60 * 1000;

/** A new session; `verified` false when it must wait for a second factor (see totp.service.ts). */
export async function createSession(db: Db, userId: number, ip: string, userAgent: string, verified = true) {
  const token = randomToken();
  const t = now();
  await db
    .insertInto('session')
    .values({
      token_hash: sha256(token),
      user_id: userId,
      created: t,
      last_active: t,
      expired: 0,
      ip: ip.slice(0, 64),
      user_agent: userAgent.slice(0, 512),
      verified: fromBool(verified),
    })
    .execute();
  return token;
}

/** The live session for a cookie token, touched; null when unknown, expired or idle for 7 days. */
export async function resolveSession(db: Db, token: string) {
  const session = await db
    .selectFrom('session')
    .selectAll()
    .where('token_hash', '=', sha256(token))
    .where('expired', '=', 0)
    .executeTakeFirst();
  if (!session) return null;
  const idle = Date.now() - Date.parse(session.last_active);
  if (idle > SESSION_IDLE_MS) {
    await db.updateTable('session').set({ expired: 1 }).where('id', '=', session.id).execute();
    return null;
  }
  if (idle > TOUCH_EVERY_MS) {
    await db.updateTable('session').set({ last_active: now() }).where('id', '=', session.id).execute();
  }
  return session;
}

export async function expireSession(db: Db, id: number) {
  await db.updateTable('session').set({ expired: 1 }).where('id', '=', id).execute();
}

export async function expireUserSessions(db: Db, userId: number) {
  await db.updateTable('session').set({ expired: 1 }).where('user_id', '=', userId).execute();
}

/** True while the session has not been expired (logout, password change) and is not idle for too long. */
export async function isSessionLive(db: Db, id: number): Promise<boolean> {
  const session = await db
    .selectFrom('session')
    .select(['last_active'])
    .where('id', '=', id)
    .where('expired', '=', 0)
    .executeTakeFirst();
  return !!session && Date.now() - Date.parse(session.last_active) <= SESSION_IDLE_MS;
}

/** Ends the user's sessions that still wait for a second factor (their TOTP was turned off meanwhile). */
export async function expireUnverifiedSessions(db: Db, userId: number) {
  await db
    .updateTable('session')
    .set({ expired: 1 })
    .where('user_id', '=', userId)
    .where('verified', '=', 0)
    .where('expired', '=', 0)
    .execute();
}
