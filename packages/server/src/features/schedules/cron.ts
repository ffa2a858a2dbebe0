import { type Coded, coded } from '@signalbox/contracts';
import { Cron } from 'croner';

const NICKNAMES = new Set(['@hourly', '@daily', '@weekly', '@monthly', '@yearly', '@annually']);

/**
 * Why a cron expression is not accepted, or null when it is. Accepts the standard 5-field syntax and the
 * nicknames @hourly/@daily/@weekly/@monthly/@yearly; croner's 6/7-field forms (seconds, years) are refused
 * so that every schedule means the same thing to Semaphore-compatible clients.
 */
export function cronError(expression: string, field = 'cron_format'): Coded | null {
  const text = expression.trim();
  if (text === '') return coded('required', { field });
  if (text.startsWith('@')) {
    return NICKNAMES.has(text.toLowerCase()) ? null : coded('cron_nickname', { cron: text });
  }
  const fields = text.split(/\s+/);
  if (fields.length !== 5) {
    return coded('cron_fields', { cron: text, count: fields.length });
  }
  try {
    const job = new Cron(text, { paused: true });
    const next = job.nextRun();
    job.stop();
    if (!next) return coded('cron_never_fires', { cron: text });
    return null;
  } catch (err) {
    const reason = (err as Error).message.replace(/^CronPattern:\s*/, '');
    // croner's own reason, in English: the code says the expression is invalid, the detail where.
    return coded('cron_invalid', { cron: text, detail: reason });
  }
}
