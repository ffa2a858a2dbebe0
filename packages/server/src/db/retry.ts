import type { FastifyBaseLogger } from 'fastify';
import { describeDbError, isDbUnavailable } from './unavailable';

/**
 * How long work that must reach the database (a task's status change, its output) keeps trying while the
 * database is unavailable. Module-wide so tests can shorten it before building an app.
 */
export const dbRetry = {
  /** Give up after this long (the periodic reconciliation ends a task whose end could not be saved). */
  capMs: 5 * 60_000,
  /** First pause between attempts; it doubles up to maxDelayMs. */
  firstDelayMs: 100,
  maxDelayMs: 5000,
};

export type RetryContext = {
  log: FastifyBaseLogger;
  what: string;
  /** Stop trying at once when this turns true (the server is shutting down). */
  giveUp?: () => boolean;
  [field: string]: unknown;
};

/**
 * Logs a failed background step: a lost database connection as one warning line (an outage fails every step at
 * once, each stack would say the same), anything else as an error with its stack.
 */
export function logFailure(log: FastifyBaseLogger, err: unknown, message: string, fields: object = {}) {
  if (isDbUnavailable(err)) log.warn({ ...fields, reason: describeDbError(err) }, message);
  else log.error({ ...fields, err }, message);
}

/**
 * Runs `work` again, with growing pauses, for as long as it fails because the database connection is gone (see
 * isDbUnavailable) and the cap allows; any other error, or the last one, is thrown. `work` must be safe to repeat:
 * a write whose answer was lost may have been applied already. Logs one warning when the database first fails and
 * one line when it answers again.
 */
export async function untilDbAnswers<T>(work: () => Promise<T>, context: RetryContext): Promise<T> {
  const { log, what, giveUp, ...fields } = context;
  const deadline = Date.now() + dbRetry.capMs;
  let delay = dbRetry.firstDelayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await work();
      if (attempt > 1) log.info({ ...fields, attempts: attempt }, `${what}: the database answers again`);
      return result;
    } catch (err) {
      if (!isDbUnavailable(err) || Date.now() + delay > deadline || giveUp?.()) throw err;
      if (attempt === 1)
        log.warn({ ...fields, reason: describeDbError(err) }, `${what}: database unavailable, trying again`);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, dbRetry.maxDelayMs);
    }
  }
}
