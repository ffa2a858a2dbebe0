import { coded } from '@signalbox/contracts';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { Db } from '../db';
import { sha256 } from '../lib/crypto';
import { AppError } from '../lib/errors';
import {
  countAddressFailure,
  deleteThrottle,
  findThrottle,
  insertThrottle,
  pruneThrottles,
  type ThrottleRow,
  uncountFailure,
  updateThrottleIf,
} from './sign-in-throttle.store';

/**
 * How failed password sign-ins are slowed down. A login+address pair gets `pairFreeFailures` failures, then
 * must wait `firstDelayMs` after the next, then twice that after each further one, up to `maxDelayMs`; a
 * right password resets the pair. An address gets `addressFailures` failures (across every login) per
 * `addressWindowMs`, then waits for the window to end. Rows a day quiet are forgotten.
 */
export const signInLimits = {
  pairFreeFailures: 4,
  firstDelayMs: 1000,
  maxDelayMs: 15 * 60 * 1000,
  addressFailures: 50,
  addressWindowMs: 15 * 60 * 1000,
  forgetMs: 24 * 60 * 60 * 1000,
  pruneEveryMs: 60 * 1000,
};

/** How long a pair waits after its `failures`-th failure in a row. */
export function pairDelayMs(failures: number): number {
  const over = failures - signInLimits.pairFreeFailures;
  if (over <= 0) return 0;
  return Math.min(signInLimits.firstDelayMs * 2 ** Math.min(over - 1, 40), signInLimits.maxDelayMs);
}

/** 429 for an attempt that must wait; its password was not looked at. */
export class ThrottledError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(waitMs: number) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    super(
      429,
      seconds < 120
        ? coded('sign_in_throttled', { seconds })
        : coded('sign_in_throttled_minutes', { minutes: Math.ceil(seconds / 60) }),
    );
    this.retryAfterSeconds = seconds;
  }
}

/** Runs a route's work; a throttled attempt's answer carries Retry-After. */
export async function withRetryAfter<T>(reply: FastifyReply, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ThrottledError) reply.header('retry-after', String(err.retryAfterSeconds));
    throw err;
  }
}

/**
 * The address an attempt is counted against: IPv4 as it is, IPv6 by its /64 network (one host commonly holds
 * a whole /64, and would otherwise get a fresh budget per address).
 */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped?.[1]) return mapped[1];
  if (!ip.includes(':')) return ip.slice(0, 64);
  const halves = ip.replace(/%.*/s, '').toLowerCase().split('::');
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  // An embedded IPv4 tail (::ffff:a.b.c.d, 64:ff9b::a.b.c.d) stands for two groups.
  const tailGroups = tail.length + (tail.at(-1)?.includes('.') ? 1 : 0);
  const full = [...head, ...Array(Math.max(0, 8 - head.length - tailGroups)).fill('0'), ...tail];
  const network = full.slice(0, 4).map((g) => (Number.parseInt(g, 16) || 0).toString(16));
  return `${network.join(':')}::/64`;
}

type Key = { id: string; user_id: number | null; login: string; address: string };

/** One password check being counted: which login (and user, when the login names one) from which address. */
export type SignInAttempt = {
  login: string;
  address: string;
  pair: Key;
  addressRow: Key;
  /** Set by startAttempt: the pair's failures counting this one, and until when it would then wait. */
  counted?: { pairFailures: number; pairBlockedUntil: string | null; addressFailures: number };
};

export function signInAttempt(login: string, userId: number | null, ip: string): SignInAttempt {
  const address = addressKey(ip);
  const name = login.trim().toLowerCase().slice(0, 255);
  // A known user's pair is keyed by id, so their username and e-mail share one count.
  const subject = userId === null ? `login:${name}` : `user:${userId}`;
  return {
    login: name,
    address,
    pair: { id: sha256(`${subject}|${address}`), user_id: userId, login: name, address },
    addressRow: { id: sha256(`address:${address}`), user_id: null, login: '', address },
  };
}

export type ThrottleContext = { db: Db; log?: FastifyBaseLogger };

const iso = (ms: number) => new Date(ms).toISOString();
type Decision = { waitMs: number } | { failures: number; firstFailure: string; blockedUntil: string | null };

function decidePair(row: ThrottleRow | undefined, at: number): Decision {
  const fresh = !row || Date.parse(row.last_failure) <= at - signInLimits.forgetMs;
  if (!fresh && row.blocked_until && Date.parse(row.blocked_until) > at)
    return { waitMs: Date.parse(row.blocked_until) - at };
  const failures = (fresh ? 0 : row.failures) + 1;
  const delay = pairDelayMs(failures);
  return {
    failures,
    firstFailure: fresh ? iso(at) : row.first_failure,
    blockedUntil: delay ? iso(at + delay) : null,
  };
}

/** Counts one attempt against a pair, unless it must wait; of racing requests for one pair one wins each count. */
async function chargePair(db: Db, key: Key) {
  for (let round = 0; round < 16; round++) {
    const at = Date.now();
    const row = await findThrottle(db, key.id);
    const decision = decidePair(row, at);
    if ('waitMs' in decision) return decision;
    const counts = {
      failures: decision.failures,
      first_failure: decision.firstFailure,
      last_failure: iso(at),
      blocked_until: decision.blockedUntil,
    };
    const won = row
      ? await updateThrottleIf(db, row, counts)
      : await insertThrottle(db, { ...key, ...counts });
    if (won) return decision;
  }
  // Still losing: many requests for this very login from this very address at once. Let them come back later.
  return { waitMs: signInLimits.firstDelayMs };
}

/** Counts one attempt against an address, unless its window is full; the address's failures counting this one. */
async function chargeAddress(db: Db, key: Key): Promise<{ waitMs: number } | { failures: number }> {
  const { addressFailures: max, addressWindowMs: windowMs } = signInLimits;
  for (let round = 0; round < 16; round++) {
    const at = Date.now();
    if (await countAddressFailure(db, key.id, max, iso(at - windowMs), iso(at)))
      return { failures: (await findThrottle(db, key.id))?.failures ?? 1 };
    const row = await findThrottle(db, key.id);
    const counts = { failures: 1, first_failure: iso(at), last_failure: iso(at), blocked_until: null };
    if (!row) {
      if (await insertThrottle(db, { ...key, ...counts })) return counts;
      continue;
    }
    const ends = Date.parse(row.first_failure) + windowMs;
    // The window is over: a new one begins with this attempt.
    if (ends <= at) {
      if (await updateThrottleIf(db, row, counts)) return counts;
      continue;
    }
    if (row.failures >= max) return { waitMs: ends - at };
  }
  return { waitMs: signInLimits.firstDelayMs };
}

const lastPrune = new WeakMap<Db, number>();

async function pruneNowAndThen(ctx: ThrottleContext) {
  const at = Date.now();
  if (at - (lastPrune.get(ctx.db) ?? 0) < signInLimits.pruneEveryMs) return;
  lastPrune.set(ctx.db, at);
  try {
    await pruneThrottles(ctx.db, iso(at - signInLimits.forgetMs));
  } catch (err) {
    ctx.log?.warn({ err }, 'pruning old sign-in failures failed');
  }
}

/**
 * Counts an attempt before its password is checked (so a burst of parallel guesses cannot slip past the
 * count), or throws ThrottledError when the pair or the address must still wait — the password unread.
 */
export async function startAttempt(ctx: ThrottleContext, attempt: SignInAttempt): Promise<void> {
  const pair = await findThrottle(ctx.db, attempt.pair.id);
  const pairWait = decidePair(pair, Date.now());
  if ('waitMs' in pairWait) throw new ThrottledError(pairWait.waitMs);
  const address = await chargeAddress(ctx.db, attempt.addressRow);
  if ('waitMs' in address) throw new ThrottledError(address.waitMs);
  const counted = await chargePair(ctx.db, attempt.pair);
  if ('waitMs' in counted) {
    await uncountFailure(ctx.db, attempt.addressRow.id);
    throw new ThrottledError(counted.waitMs);
  }
  attempt.counted = {
    pairFailures: counted.failures,
    pairBlockedUntil: counted.blockedUntil,
    addressFailures: address.failures,
  };
  await pruneNowAndThen(ctx);
}

/** The password was wrong: the counts stand. A count that starts a wait is logged (never the password). */
export function failAttempt(ctx: ThrottleContext, attempt: SignInAttempt): void {
  const counted = attempt.counted;
  if (!counted) return;
  const { login, address } = attempt;
  if (counted.pairBlockedUntil) {
    const seconds = Math.ceil((Date.parse(counted.pairBlockedUntil) - Date.now()) / 1000);
    ctx.log?.warn(
      { login, address, failures: counted.pairFailures, retry_after_s: Math.max(1, seconds) },
      'sign-in locked for this login from this address after repeated failures',
    );
  }
  if (counted.addressFailures >= signInLimits.addressFailures) {
    ctx.log?.warn(
      { login, address, failures: counted.addressFailures },
      'sign-in locked for every login from this address after repeated failures',
    );
  }
}

/** The password was right: the pair starts over and the address gets its count back. */
export async function passAttempt(ctx: ThrottleContext, attempt: SignInAttempt): Promise<void> {
  if (!attempt.counted) return;
  await deleteThrottle(ctx.db, attempt.pair.id);
  await uncountFailure(ctx.db, attempt.addressRow.id);
}
