import type { Schedule } from '@signalbox/contracts';
import { Cron } from 'croner';

/**
 * When a schedule next starts a task: a run-once schedule at its run_at, a cron schedule at the cron's next time
 * read in the server's schedule time zone (GET /api/info schedule_timezone); null when it will not run (inactive,
 * or a cron that does not parse or never fires).
 */
export function nextRunOf(schedule: Schedule, timezone: string | undefined, now = new Date()): Date | null {
  if (!schedule.active) return null;
  if (schedule.type === 'run_at') return schedule.run_at ? new Date(schedule.run_at) : null;
  try {
    const job = new Cron(schedule.cron_format, { paused: true, timezone: timezone || 'UTC' });
    const next = job.nextRun(now);
    job.stop();
    return next;
  } catch {
    return null;
  }
}
