import { randomBytes } from 'node:crypto';
import {
  CURRENT_PASSWORD_INCORRECT,
  coded,
  INCORRECT_PASSCODE,
  INCORRECT_RECOVERY_CODE,
  TOTP_DISABLED,
  TOTP_NOT_ENABLED,
  type TotpConfirmed,
  type TotpEnrollment,
  type TotpStatus,
  type UserTotp,
} from '@signalbox/contracts';
import type { FastifyBaseLogger } from 'fastify';
import { findUserById, type UserRow } from '../../access/principals.store';
import { expireUnverifiedSessions } from '../../access/sessions.store';
import {
  addressKey,
  failAttempt,
  passAttempt,
  type SignInAttempt,
  signInAttempt,
  startAttempt,
} from '../../access/sign-in-throttle';
import {
  acceptStep,
  addRecoveryCodes,
  confirmedTotps,
  countRecoveryCodes,
  deleteTotpRows,
  findTotp,
  listRecoveryCodes,
  replacePendingTotp,
  type TotpRow,
  useRecoveryCode,
} from '../../access/totp.store';
import type { Config } from '../../config';
import type { Db } from '../../db';
import type { Dialect } from '../../db/dialect';
import { transaction } from '../../db/transaction';
import { type SecretBox, sha256 } from '../../lib/crypto';
import { AppError, badRequest, fieldError, forbidden, notFound } from '../../lib/errors';
import { hashPassword, passwordMatches } from '../../lib/password-hash';
import type { EventBus } from '../../live/bus';
import { type Actor, event, isAdmin } from '../users';

/**
 * Two-factor sign-in with time-based one-time passwords (RFC 6238: 6 digits, 30-second steps, SHA-1, as every
 * authenticator app reads them). A code is accepted one step either side of the server's clock, and never twice: a
 * code's step must be later than the last accepted one's. Guessed codes are throttled like passwords, per user and
 * address (wrong guesses from one address never hold back the right code from another). Recovery codes are kept as bcrypt hashes, each accepted
 * once. The secret is sealed with the server's secret key and shown to the user only while setting up.
 */
export type TotpContext = {
  db: Db;
  dialect: Dialect;
  config: Pick<Config, 'totpEnabled' | 'totpAllowRecovery'>;
  /** Absent on the command line, which never reads a secret. */
  box?: SecretBox;
  bus?: EventBus;
  log?: FastifyBaseLogger;
};

const ISSUER = 'Signalbox';
const STEP_SECONDS = 30;
const RECOVERY_CODES = 10;

const isSelf = (actor: Actor, id: number) => actor.user?.id === id;
const epochNow = () => Math.floor(Date.now() / 1000);

export const SET_UP_OWN = coded('totp_own_only');
export const VIEW_OWN_TOTP = coded('totp_view_own_only');
export const TOTP_ALREADY_ON = coded('totp_already_on');
export const PROOF_REQUIRED = coded('totp_proof_required');

export const toUserTotp = (row: TotpRow): UserTotp => ({
  id: row.id,
  created: row.created,
  user_id: row.user_id,
});

/** The user's `totp` field for user objects: present once TOTP is on (whatever the server setting). */
export async function userTotp(db: Db, userId: number): Promise<UserTotp | undefined> {
  const row = await findTotp(db, userId);
  return row?.confirmed === 1 ? toUserTotp(row) : undefined;
}

/** Adds the `totp` field to user objects. */
export async function withTotp<U extends { id: number }>(
  db: Db,
  users: U[],
): Promise<(U & { totp?: UserTotp })[]> {
  const rows = await confirmedTotps(db, users.length > 100 ? undefined : users.map((u) => u.id));
  return users.map((u) => {
    const row = rows.get(u.id);
    return row ? { ...u, totp: toUserTotp(row) } : u;
  });
}

/** The step of a code that matches the secret within one step of now and is later than `lastStep`; else null. */
async function matchingStep(
  secret: string,
  passcode: string,
  lastStep: number | null,
): Promise<number | null> {
  const { verify } = await otplib();
  const result = await verify({
    secret,
    token: passcode,
    epoch: epochNow(),
    period: STEP_SECONDS,
    epochTolerance: STEP_SECONDS,
    ...(lastStep === null ? {} : { afterTimeStep: lastStep }),
  });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

/**
 * Code attempts count against the user from one address (and against the address, as password attempts do), as
 * password attempts count against a login from one address: wrong guesses from one place never hold back the
 * right code from another, so someone who knows the password cannot lock the real user out.
 */
function codeAttempt(user: UserRow, ip: string): SignInAttempt {
  const attempt = signInAttempt(user.username, user.id, ip);
  const address = addressKey(ip);
  return {
    ...attempt,
    pair: {
      id: sha256(`second-factor|user:${user.id}|${address}`),
      user_id: user.id,
      login: attempt.login,
      address,
    },
  };
}

/** Checks a code as a sign-in is checked: throttled (429), a wrong or reused one counted; true when accepted. */
async function checkCode(
  ctx: TotpContext,
  user: UserRow,
  totp: TotpRow,
  passcode: string,
  ip: string,
): Promise<boolean> {
  const attempt = codeAttempt(user, ip);
  await startAttempt(ctx, attempt);
  const secret = openSecret(ctx, totp);
  const step = await matchingStep(secret, passcode, totp.last_step);
  if (step === null || !(await acceptStep(ctx.db, totp.id, step))) {
    failAttempt(ctx, attempt);
    return false;
  }
  await passAttempt(ctx, attempt);
  return true;
}

function openSecret(ctx: TotpContext, totp: TotpRow): string {
  if (!ctx.box) throw new Error('the secret box is needed to read a TOTP secret');
  return ctx.box.open(totp.secret);
}

async function targetUser(ctx: TotpContext, id: number): Promise<UserRow> {
  const user = await findUserById(ctx.db, id);
  if (!user) throw notFound('user');
  return user;
}

/** The user's TOTP named by `totpId` in the path; 404 for any other id. */
async function namedTotp(ctx: TotpContext, userId: number, totpId: number): Promise<TotpRow> {
  const totp = await findTotp(ctx.db, userId);
  if (!totp || totp.id !== totpId) throw notFound('totp');
  return totp;
}

/** GET /api/users/{id}/2fas/totp: the user's TOTP (confirmed or still being set up); 404 when there is none. */
export async function totpStatus(ctx: TotpContext, actor: Actor, id: number): Promise<TotpStatus> {
  if (!isAdmin(actor) && !isSelf(actor, id)) throw forbidden(VIEW_OWN_TOTP);
  await targetUser(ctx, id);
  const totp = await findTotp(ctx.db, id);
  if (!totp) throw notFound('totp');
  return {
    ...toUserTotp(totp),
    confirmed: totp.confirmed === 1,
    recovery_codes_left: await countRecoveryCodes(ctx.db, totp.id),
  };
}

/**
 * POST /api/users/{id}/2fas/totp: begins setting up TOTP for the caller's own account (an administrator cannot do
 * it for someone else: the secret is for the user's eyes). Replaces a set-up not yet confirmed.
 */
export async function startTotp(ctx: TotpContext, actor: Actor, id: number): Promise<TotpEnrollment> {
  if (!isSelf(actor, id)) throw forbidden(SET_UP_OWN);
  if (!ctx.config.totpEnabled) throw badRequest(TOTP_NOT_ENABLED);
  const user = await targetUser(ctx, id);
  if ((await findTotp(ctx.db, id))?.confirmed === 1) throw badRequest(TOTP_ALREADY_ON);
  if (!ctx.box) throw new Error('the secret box is needed to seal a TOTP secret');
  const { generateSecret } = await otplib();
  const secret = generateSecret();
  const row = await replacePendingTotp(ctx.db, ctx.dialect, id, ctx.box.seal(secret));
  return { ...toUserTotp(row), secret, url: await otpauthUrl(user, secret) };
}

/** The TOTP library, loaded by the first set-up or sign-in that needs it (most servers never do). */
const otplib = () => import('otplib');

const otpauthUrl = async (user: UserRow, secret: string) =>
  (await otplib()).generateURI({ issuer: ISSUER, label: user.username, secret, period: STEP_SECONDS });

/** GET …/2fas/totp/{totp_id}/qr: the set-up's otpauth:// URI as a PNG QR code; only the user, only while setting up. */
export async function totpQrPng(ctx: TotpContext, actor: Actor, id: number, totpId: number): Promise<Buffer> {
  if (!isSelf(actor, id)) throw forbidden(SET_UP_OWN);
  const user = await targetUser(ctx, id);
  const totp = await namedTotp(ctx, id, totpId);
  // Once confirmed, the secret is not shown again.
  if (totp.confirmed === 1) throw notFound('totp_setup');
  const { toBuffer } = await import('qrcode');
  return toBuffer(await otpauthUrl(user, openSecret(ctx, totp)), {
    type: 'png',
    width: 256,
    margin: 2,
    errorCorrectionLevel: 'M',
  });
}

/**
 * POST …/2fas/totp/{totp_id}/confirm: the first code from the app turns TOTP on; the recovery codes (when the
 * server allows them) are answered only this once.
 */
export async function confirmTotp(
  ctx: TotpContext,
  actor: Actor,
  id: number,
  totpId: number,
  passcode: string,
): Promise<TotpConfirmed> {
  if (!isSelf(actor, id)) throw forbidden(SET_UP_OWN);
  if (!ctx.config.totpEnabled) throw badRequest(TOTP_NOT_ENABLED);
  const user = await targetUser(ctx, id);
  const totp = await namedTotp(ctx, id, totpId);
  if (totp.confirmed === 1) throw badRequest(TOTP_ALREADY_ON);
  const step = await matchingStep(openSecret(ctx, totp), passcode, totp.last_step);
  if (step === null) throw fieldError('passcode', INCORRECT_PASSCODE);
  const codes = ctx.config.totpAllowRecovery ? recoveryCodes() : [];
  const hashes = await Promise.all(codes.map((code) => hashPassword(normalRecoveryCode(code))));
  await transaction(ctx.db, async (trx) => {
    if (!(await acceptStep(trx, totp.id, step, true))) throw fieldError('passcode', INCORRECT_PASSCODE);
    await addRecoveryCodes(trx, totp.id, hashes);
  });
  await event(ctx, actor, id, `Two-factor sign-in of user ${user.username} turned on`);
  return { ...toUserTotp(totp), recovery_codes: codes };
}

/** Ten codes of 80 random bits each, in base32 as XXXX-XXXX-XXXX-XXXX. */
function recoveryCodes(): string[] {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  return Array.from({ length: RECOVERY_CODES }, () => {
    const bytes = randomBytes(10);
    let bits = '';
    for (const b of bytes) bits += b.toString(2).padStart(8, '0');
    const chars = (bits.match(/.{5}/g) ?? []).map((five) => alphabet[Number.parseInt(five, 2)]).join('');
    return chars.match(/.{4}/g)?.join('-') ?? chars;
  });
}

const normalRecoveryCode = (code: string) => code.replace(/[\s-]+/g, '').toUpperCase();

/**
 * DELETE /api/users/{id}/2fas/totp/{totp_id}: turns TOTP off. Users turning off their own prove it is them with a
 * current code or their password (a set-up not yet confirmed needs neither); an administrator resets anyone else's.
 */
export async function disableTotp(
  ctx: TotpContext,
  actor: Actor,
  id: number,
  totpId: number,
  proof: { passcode?: string; password?: string },
) {
  if (!isAdmin(actor) && !isSelf(actor, id)) throw forbidden(VIEW_OWN_TOTP);
  const user = await targetUser(ctx, id);
  const totp = await namedTotp(ctx, id, totpId);
  if (isSelf(actor, id) && totp.confirmed === 1) await proveItIsThem(ctx, actor, user, totp, proof);
  await resetTotp(ctx, actor, user);
}

async function proveItIsThem(
  ctx: TotpContext,
  actor: Actor,
  user: UserRow,
  totp: TotpRow,
  proof: { passcode?: string; password?: string },
) {
  const ip = actor.address ?? '';
  if (proof.passcode !== undefined) {
    if (!(await checkCode(ctx, user, totp, proof.passcode, ip)))
      throw fieldError('passcode', INCORRECT_PASSCODE);
    return;
  }
  if (proof.password !== undefined && proof.password !== '' && user.external !== 1) {
    const attempt = signInAttempt(user.username, user.id, ip);
    await startAttempt(ctx, attempt);
    if (!(await passwordMatches(proof.password, user.password))) {
      failAttempt(ctx, attempt);
      throw fieldError('password', CURRENT_PASSWORD_INCORRECT);
    }
    await passAttempt(ctx, attempt);
    return;
  }
  throw fieldError('passcode', PROOF_REQUIRED);
}

/**
 * Turns a user's TOTP off with its recovery codes (the DELETE route, and `signalbox user totp disable`); sessions
 * still waiting for a code end (they sign in again with a password only). False when the user had none.
 */
export async function resetTotp(
  ctx: Pick<TotpContext, 'db' | 'dialect' | 'bus' | 'log'>,
  actor: Actor,
  user: UserRow,
): Promise<boolean> {
  const wasOn = (await findTotp(ctx.db, user.id))?.confirmed === 1;
  const removed = await transaction(ctx.db, async (trx) => {
    const count = await deleteTotpRows(trx, user.id);
    await expireUnverifiedSessions(trx, user.id);
    return count;
  });
  if (!removed) return false;
  // Cancelling a set-up that was never confirmed is no event.
  if (wasOn) {
    const how = isSelf(actor, user.id) ? 'turned off' : 'reset';
    await event(ctx, actor, user.id, `Two-factor sign-in of user ${user.username} ${how}`);
  }
  return true;
}

/** A session waiting for a code whose user has no TOTP (not met in practice: turning TOTP off ends such sessions). */
const noSecondFactor = () => new AppError(401, INCORRECT_PASSCODE);

/** POST /api/auth/verify: a code for the session waiting for it; throws 401 when wrong or reused, 429 when throttled. */
export async function verifyPasscode(ctx: TotpContext, userId: number, ip: string, passcode: string) {
  if (!ctx.config.totpEnabled) throw forbidden(TOTP_DISABLED);
  const user = await findUserById(ctx.db, userId);
  const totp = user && (await findTotp(ctx.db, userId));
  if (!user || totp?.confirmed !== 1) throw noSecondFactor();
  if (!(await checkCode(ctx, user, totp, passcode, ip))) throw new AppError(401, INCORRECT_PASSCODE);
}

/** POST /api/auth/recovery: a recovery code in place of a code; each works once (401 after), throttled as codes are. */
export async function verifyRecoveryCode(ctx: TotpContext, userId: number, ip: string, code: string) {
  if (!ctx.config.totpEnabled || !ctx.config.totpAllowRecovery) throw forbidden(TOTP_DISABLED);
  const user = await findUserById(ctx.db, userId);
  const totp = user && (await findTotp(ctx.db, userId));
  if (!user || totp?.confirmed !== 1) throw noSecondFactor();
  const attempt = codeAttempt(user, ip);
  await startAttempt(ctx, attempt);
  const wanted = normalRecoveryCode(code);
  for (const row of await listRecoveryCodes(ctx.db, totp.id)) {
    if (!(await passwordMatches(wanted, row.code_hash))) continue;
    // Of two requests with the same code, one uses it up; the other is refused as a wrong code.
    if (!(await useRecoveryCode(ctx.db, row.id))) break;
    await passAttempt(ctx, attempt);
    ctx.log?.info({ user_id: user.id }, 'recovery code used for two-factor sign-in');
    return;
  }
  failAttempt(ctx, attempt);
  throw new AppError(401, INCORRECT_RECOVERY_CODE);
}
