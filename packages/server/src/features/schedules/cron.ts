import { Cron } from 'croner';

const NICKNAMES = new Set(['@hourly', '@daily', '@weekly', '@monthly', '@yearly', '@annually']);

/**
 * Why a cron expression is not accepted, or null when it is. Accepts the standard 5-field syntax and the
 * nicknames @hourly/@daily/@weekly/@monthly/@yearly; croner's 6/7-field forms (seconds, years) are refused
 * so that every schedule means the same thing to Semaphore-compatible clients.
 */
export function cronError(expression: string): string | null {
  const text = expression.trim();
  if (text === '') return 'Cron is required';
  if (text.startsWith('@')) {
    return NICKNAMES.has(text.toLowerCase())
      ? null
      : `Invalid cron expression "${text}": unknown nickname (use @hourly, @daily, @weekly, @monthly or @yearly)`;
  }
  const fields = text.split(/\s+/);
  if (fields.length !== 5) {
    return `Invalid cron expression "${text}": expected 5 fields (minute hour day month weekday), got ${fields.length}`;
  }
  try {
    const job = new Cron(text, { paused: true });
    const next = job.nextRun();
    job.stop();
    if (!next) return `Invalid cron expression "${text}": it never fires`;
    return null;
  } catch (err) {
    const reason = (err as Error).message.replace(/^CronPattern:\s*/, '');
    return `Invalid cron expression "${text}": ${reason}`;
  }
}
