import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { behindRelay } from '../../test/support/db-relay';
import { type TestDialect, testDialects } from '../../test/support/dialects';
import type { Harness } from '../../test/support/harness';
import { ManualClock } from '../../test/support/manual-clock';
import { schedulerHarness } from '../../test/support/scheduler-harness';
import type { recordingStarter, rows } from '../../test/support/scheduler-rows';
import { waitFor } from '../../test/support/task-fixtures';
import { createScheduler, RELOAD_RETRY_MS, type SchedulerHandle } from './scheduler';

/** The scheduler while its database cannot be reached for a while: no tick is lost to a short outage. */
function outageOn(name: TestDialect['name']) {
  const base = testDialects().find((d) => d.name === name) as TestDialect;
  describe.runIf(base)(`scheduler with the database unreachable on ${name}`, () => {
    let relay: Awaited<ReturnType<typeof behindRelay>>;
    let h: Harness;
    let starter: ReturnType<typeof recordingStarter>;
    let r: ReturnType<typeof rows>;
    let projectId: number;
    let templateId: number;
    let scheduler: SchedulerHandle | null = null;

    beforeEach(async () => {
      relay = await behindRelay(base);
      ({ h, starter, r, projectId, templateId } = await schedulerHarness(relay.dialect));
    });
    afterEach(async () => {
      relay.outage.up();
      await scheduler?.close();
      await h.close();
      await relay.close();
    });

    it('runs a tick that fired during the outage once the database is back, and keeps firing', async () => {
      const scheduleId = await r.schedule(projectId, templateId, { cron_format: '*/5 * * * *' });
      const clock = new ManualClock('2030-01-01T10:02:30Z');
      scheduler = createScheduler({ ...h.deps, startTask: starter.start }, { clock });
      await scheduler.start();

      relay.outage.down();
      clock.advanceTo('2030-01-01T10:05:00Z');
      await waitFor(
        async () => h.logLines.some((l) => l.includes('claiming a schedule tick: database unavailable')),
        10_000,
        'the claim to fail',
      );
      expect(starter.calls).toEqual([]);
      relay.outage.up();
      await scheduler.idle();
      expect(starter.calls.map((c) => c.origin)).toEqual([{ userId: null, scheduleId, source: 'schedule' }]);

      clock.advanceTo('2030-01-01T10:10:00Z');
      await scheduler.idle();
      expect(starter.calls).toHaveLength(2);
      expect(h.logLines.some((l) => l.includes('schedule run failed'))).toBe(false);
    });

    it('re-reads the schedules on its own when a refresh met the outage', async () => {
      const clock = new ManualClock('2030-01-01T10:02:30Z');
      scheduler = createScheduler({ ...h.deps, startTask: starter.start }, { clock });
      await scheduler.start();
      // Saved just before the database went away; the refresh that should arm it fails.
      const scheduleId = await r.schedule(projectId, templateId, { cron_format: '*/5 * * * *' });
      relay.outage.down();
      await expect(scheduler.refresh()).rejects.toThrow();
      relay.outage.up();
      expect(scheduler.planned().has(scheduleId)).toBe(false);

      clock.advance(RELOAD_RETRY_MS);
      await waitFor(async () => scheduler!.planned().has(scheduleId), 10_000, 'the schedule to be armed');
      expect(scheduler.planned().get(scheduleId)?.toISOString()).toBe('2030-01-01T10:05:00.000Z');
    });
  });
}

// Only where the servers are configured (CI sets SIGNALBOX_TEST_PG_URL and SIGNALBOX_TEST_MYSQL_URL).
outageOn('postgres');
outageOn('mysql');
