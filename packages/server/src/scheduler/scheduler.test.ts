import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Harness } from '../../test/support/harness';
import { ManualClock } from '../../test/support/manual-clock';
import { schedulerHarness } from '../../test/support/scheduler-harness';
import type { recordingStarter, rows } from '../../test/support/scheduler-rows';
import { waitFor } from '../../test/support/task-fixtures';
import { EventBus } from '../live/bus';
import { createScheduler, type SchedulerHandle } from './scheduler';
import { claimTick } from './scheduler.store';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.test', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

function makeRepo() {
  const dir = mkdtempSync(join(tmpdir(), 'signalbox-sched-repo-'));
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'run.sh'), 'echo one\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'first');
  return dir;
}

describe.each(testDialects())('scheduler on $name', (dialect) => {
  let h: Harness;
  let starter: ReturnType<typeof recordingStarter>;
  let r: ReturnType<typeof rows>;
  let projectId: number;
  let templateId: number;
  const schedulers: SchedulerHandle[] = [];
  const cleanup: string[] = [];

  const make = (clock: ManualClock, timezone?: string) => {
    const s = createScheduler(
      { ...h.deps, startTask: starter.start },
      { clock, ...(timezone ? { timezone } : {}) },
    );
    schedulers.push(s);
    return s;
  };
  /** Moves the clock and waits for the ticks it fired to finish their database work. */
  const advance = async (s: SchedulerHandle, clock: ManualClock, to: string) => {
    clock.advanceTo(to);
    await s.idle();
  };

  beforeEach(async () => {
    ({ h, starter, r, projectId, templateId } = await schedulerHarness(dialect));
  });

  afterEach(async () => {
    for (const s of schedulers.splice(0)) await s.close();
    await h.close();
    for (const dir of cleanup.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('fires on time, with the schedule as the origin, and keeps firing', async () => {
    const scheduleId = await r.schedule(projectId, templateId, { cron_format: '*/5 * * * *' });
    const clock = new ManualClock('2030-01-01T10:02:30Z');
    const s = make(clock);
    await s.start();
    expect(s.planned().get(scheduleId)?.toISOString()).toBe('2030-01-01T10:05:00.000Z');

    await advance(s, clock, '2030-01-01T10:04:59.900Z');
    expect(starter.calls).toHaveLength(0);
    await advance(s, clock, '2030-01-01T10:05:00Z');
    expect(starter.calls).toEqual([
      {
        projectId,
        input: { template_id: templateId },
        origin: { userId: null, scheduleId, source: 'schedule' },
        taskId: expect.any(Number),
      },
    ]);
    const task = await h.deps.db
      .selectFrom('task')
      .selectAll()
      .where('id', '=', starter.calls[0]!.taskId)
      .executeTakeFirstOrThrow();
    expect(task.schedule_id).toBe(scheduleId);
    expect(s.planned().get(scheduleId)?.toISOString()).toBe('2030-01-01T10:10:00.000Z');

    await advance(s, clock, '2030-01-01T10:20:00Z');
    expect(starter.calls).toHaveLength(4);
  });

  it("passes the schedule's task parameters to every task it starts", async () => {
    const taskParams = {
      environment: '{"REGION":"eu"}',
      message: 'nightly build',
      git_branch: 'release',
      arguments: '["-v"]',
      params: { debug: true },
    };
    const scheduleId = await r.schedule(projectId, templateId, {
      cron_format: '*/5 * * * *',
      task_params: JSON.stringify(taskParams),
    });
    const clock = new ManualClock('2030-01-01T10:02:30Z');
    const s = make(clock);
    await s.start();
    await advance(s, clock, '2030-01-01T10:05:00Z');
    await advance(s, clock, '2030-01-01T10:10:00Z');
    const input = { template_id: templateId, ...taskParams };
    expect(starter.calls.map((c) => [c.input, c.origin])).toEqual([
      [input, { userId: null, scheduleId, source: 'schedule' }],
      [input, { userId: null, scheduleId, source: 'schedule' }],
    ]);
  });

  // Servers sharing the database: a schedule changed through one is changed on all of them.
  it('hears of a change made on another server and arms the new cron', async () => {
    const scheduleId = await r.schedule(projectId, templateId, { cron_format: '* * * * *' });
    const clock = new ManualClock('2030-01-01T10:00:30Z');
    const [here, there] = [make(clock), make(clock)];
    await Promise.all([here.start(), there.start()]);
    expect(there.planned().get(scheduleId)?.toISOString()).toBe('2030-01-01T10:01:00.000Z');

    // Changed to yearly through `here`'s API: the write is announced on the bus (through Redis to every server).
    await h.deps.db
      .updateTable('schedule')
      .set({ cron_format: '0 0 1 1 *' })
      .where('id', '=', scheduleId)
      .execute();
    h.deps.bus.emit('projectChanged', { projectId });
    await waitFor(
      async () =>
        there.planned().get(scheduleId)?.toISOString() === '2031-01-01T00:00:00.000Z' ? true : undefined,
      5000,
      'the other server to arm the new cron',
    );
    await advance(here, clock, '2030-01-01T10:10:00Z');
    await there.idle();
    expect(starter.calls).toHaveLength(0);
  });

  it('runs only ticks of the current cron, though a change was never heard of', async () => {
    const scheduleId = await r.schedule(projectId, templateId, { cron_format: '* * * * *' });
    const clock = new ManualClock('2030-01-01T10:00:30Z');
    // A server whose bus hears nothing from the others (Redis down), with no periodic read in the test's time.
    const deaf = createScheduler(
      { ...h.deps, bus: new EventBus(), startTask: starter.start },
      { clock, reloadEveryMs: 3_600_000 },
    );
    schedulers.push(deaf);
    await deaf.start();
    await h.deps.db
      .updateTable('schedule')
      .set({ cron_format: '0 0 1 1 *' })
      .where('id', '=', scheduleId)
      .execute();
    // Its armed minute tick comes: the claim reads the schedule again and skips the stale tick, then re-arms.
    await advance(deaf, clock, '2030-01-01T10:01:00Z');
    expect(starter.calls).toHaveLength(0);
    await waitFor(
      async () =>
        deaf.planned().get(scheduleId)?.toISOString() === '2031-01-01T00:00:00.000Z' ? true : undefined,
      5000,
      'the stale server to arm the new cron',
    );
    await advance(deaf, clock, '2030-01-01T10:05:00Z');
    expect(starter.calls).toHaveLength(0);
  });

  it('reads cron times in the configured timezone', async () => {
    await r.schedule(projectId, templateId, { cron_format: '0 9 * * *' });
    const clock = new ManualClock('2030-01-01T06:00:00Z');
    const s = make(clock, 'Europe/Berlin');
    await s.start();
    await advance(s, clock, '2030-01-01T07:59:59Z');
    expect(starter.calls).toHaveLength(0);
    await advance(s, clock, '2030-01-01T08:00:00Z'); // 09:00 in Berlin (UTC+1 in winter)
    expect(starter.calls).toHaveLength(1);
  });

  it('uses config.scheduleTimezone by default (UTC)', async () => {
    await r.schedule(projectId, templateId, { cron_format: '0 9 * * *' });
    const clock = new ManualClock('2030-01-01T06:00:00Z');
    const s = make(clock);
    await s.start();
    await advance(s, clock, '2030-01-01T08:30:00Z');
    expect(starter.calls).toHaveLength(0);
    await advance(s, clock, '2030-01-01T09:00:00Z');
    expect(starter.calls).toHaveLength(1);
  });

  it('refresh applies creates, updates and deletes at once', async () => {
    const clock = new ManualClock('2030-01-01T10:00:30Z');
    const s = make(clock);
    await s.start();
    expect(s.planned().size).toBe(0);

    const scheduleId = await r.schedule(projectId, templateId, { cron_format: '* * * * *' });
    await s.refresh();
    await advance(s, clock, '2030-01-01T10:01:00Z');
    expect(starter.calls).toHaveLength(1);

    // Update: every 10 minutes from now on.
    await h.deps.db
      .updateTable('schedule')
      .set({ cron_format: '*/10 * * * *' })
      .where('id', '=', scheduleId)
      .execute();
    await s.refresh();
    expect(s.planned().get(scheduleId)?.toISOString()).toBe('2030-01-01T10:10:00.000Z');
    await advance(s, clock, '2030-01-01T10:09:59Z');
    expect(starter.calls).toHaveLength(1);
    await advance(s, clock, '2030-01-01T10:10:00Z');
    expect(starter.calls).toHaveLength(2);

    // Delete: nothing more fires and no timer is left.
    await h.deps.db.deleteFrom('schedule').where('id', '=', scheduleId).execute();
    await s.refresh();
    expect(s.planned().size).toBe(0);
    expect(clock.pending).toBe(0);
    await advance(s, clock, '2030-01-01T11:00:00Z');
    expect(starter.calls).toHaveLength(2);
  });

  it('skips inactive schedules, invalid cron formats and schedules whose template is gone', async () => {
    await r.schedule(projectId, templateId, { cron_format: '* * * * *', active: 0 });
    const bad = await r.schedule(projectId, templateId, { cron_format: 'every minute please' });
    await r.schedule(projectId, 999_999, { cron_format: '* * * * *' });
    const good = await r.schedule(projectId, templateId, { cron_format: '* * * * *' });
    const clock = new ManualClock('2030-01-01T10:00:30Z');
    const s = make(clock);
    await s.start();
    expect([...s.planned().keys()]).toEqual([good]);
    await advance(s, clock, '2030-01-01T10:03:00Z');
    expect(starter.calls.map((c) => c.origin.scheduleId)).toEqual([good, good, good]);
    expect(
      h.logLines.some((l) => l.includes('invalid cron format') && l.includes(`"scheduleId":${bad}`)),
    ).toBe(true);

    // Deactivating without a refresh is still honoured at the next tick (the claim checks `active`).
    await h.deps.db.updateTable('schedule').set({ active: 0 }).where('id', '=', good).execute();
    await advance(s, clock, '2030-01-01T10:05:00Z');
    expect(starter.calls).toHaveLength(3);
  });

  it('never fires twice for one tick, even with two schedulers on one database', async () => {
    const scheduleId = await r.schedule(projectId, templateId, { cron_format: '* * * * *' });
    const clockA = new ManualClock('2030-01-01T10:00:30Z');
    const clockB = new ManualClock('2030-01-01T10:00:30Z');
    const a = make(clockA);
    const b = make(clockB);
    await Promise.all([a.start(), b.start()]);
    // Repeated refreshes must not arm a second timer.
    await Promise.all([a.refresh(), a.refresh(), a.refresh()]);
    expect(clockA.pending).toBe(1);

    for (const minute of ['01', '02', '03']) {
      clockA.advanceTo(`2030-01-01T10:${minute}:00Z`);
      clockB.advanceTo(`2030-01-01T10:${minute}:00Z`);
      await Promise.all([a.idle(), b.idle()]);
    }
    expect(starter.calls).toHaveLength(3);
    const tasks = await h.deps.db
      .selectFrom('task')
      .select('id')
      .where('schedule_id', '=', scheduleId)
      .execute();
    expect(tasks).toHaveLength(3);

    // The claim itself: one winner per tick, earlier ticks are refused.
    expect(await claimTick(h.deps.db, scheduleId, '2030-01-01T10:04:00.000Z')).toBe(true);
    expect(await claimTick(h.deps.db, scheduleId, '2030-01-01T10:04:00.000Z')).toBe(false);
    expect(await claimTick(h.deps.db, scheduleId, '2030-01-01T10:03:00.000Z')).toBe(false);
  });

  it('claims a tick only once it has come by the database clock, on a machine whose clock runs ahead', async () => {
    const scheduleId = await r.schedule(projectId, templateId, { cron_format: '*/5 * * * *' });
    // This machine's clock runs 90 s ahead of the database's (the one the instances agree on).
    const clock = new ManualClock('2030-01-01T10:00:10Z');
    const ahead = createScheduler(
      { ...h.deps, startTask: starter.start },
      { clock, agreedNow: async () => clock.now().getTime() - 90_000 },
    );
    schedulers.push(ahead);
    await ahead.start();
    const lastTick = async () =>
      (
        await h.deps.db
          .selectFrom('schedule')
          .select('last_tick')
          .where('id', '=', scheduleId)
          .executeTakeFirstOrThrow()
      ).last_tick;

    // By its own clock the 10:05 tick has come; by the database's it is 10:03:30: the tick waits for 10:05 there
    // (a second timer besides the one of the 10:10 tick), claiming nothing, so a server on time can have it.
    clock.advanceTo('2030-01-01T10:05:00Z');
    await expect.poll(() => clock.pending).toBe(2);
    clock.advanceTo('2030-01-01T10:06:29Z');
    expect(clock.pending).toBe(2);
    expect(starter.calls).toEqual([]);
    expect(await lastTick()).toBeNull();

    // The database clock reaches 10:05: now the tick is claimed and its task started, once.
    clock.advanceTo('2030-01-01T10:06:30Z');
    await ahead.idle();
    expect(starter.calls).toHaveLength(1);
    expect(await lastTick()).toBe('2030-01-01T10:05:00.000Z');
    expect(clock.pending).toBe(1);
  });

  it('does not fire while its previous task of the template is still waiting', async () => {
    starter.status = 'waiting';
    const scheduleId = await r.schedule(projectId, templateId, { cron_format: '* * * * *' });
    const clock = new ManualClock('2030-01-01T10:00:30Z');
    const s = make(clock);
    await s.start();
    await advance(s, clock, '2030-01-01T10:01:00Z');
    expect(starter.calls).toHaveLength(1);
    await advance(s, clock, '2030-01-01T10:02:00Z');
    await advance(s, clock, '2030-01-01T10:03:00Z');
    expect(starter.calls).toHaveLength(1);

    // Once it leaves the queue, the next tick fires again.
    await h.deps.db
      .updateTable('task')
      .set({ status: 'running' })
      .where('id', '=', starter.calls[0]!.taskId)
      .execute();
    await advance(s, clock, '2030-01-01T10:04:00Z');
    expect(starter.calls).toHaveLength(2);

    // A waiting task someone else started (not this schedule) does not hold the schedule back.
    await h.deps.db
      .updateTable('task')
      .set({ status: 'success' })
      .where('schedule_id', '=', scheduleId)
      .execute();
    await r.task(projectId, templateId, { status: 'waiting', user_id: 1 });
    await advance(s, clock, '2030-01-01T10:05:00Z');
    expect(starter.calls).toHaveLength(3);
  });

  it('logs a task that cannot start and keeps the schedule alive', async () => {
    await r.schedule(projectId, templateId, { cron_format: '* * * * *' });
    const clock = new ManualClock('2030-01-01T10:00:30Z');
    const s = make(clock);
    await s.start();
    starter.fail = new Error('Template needs an inventory');
    await advance(s, clock, '2030-01-01T10:01:00Z');
    expect(
      h.logLines.some((l) => l.includes('schedule run failed') && l.includes('needs an inventory')),
    ).toBe(true);
    starter.fail = undefined;
    await advance(s, clock, '2030-01-01T10:02:00Z');
    expect(starter.calls).toHaveLength(1);
  });

  describe.each([
    ['a local path', (dir: string) => dir],
    ['a file:// URL', (dir: string) => `file://${dir}`],
  ])('check-new-commits with %s', (_label, urlOf) => {
    it('fires on the first tick and then only when the branch head moved', async () => {
      const dir = makeRepo();
      cleanup.push(dir);
      const repositoryId = await r.repository(projectId, urlOf(dir), 'main');
      const scheduleId = await r.schedule(projectId, templateId, {
        cron_format: '* * * * *',
        repository_id: repositoryId,
      });
      const clock = new ManualClock('2030-01-01T10:00:30Z');
      const s = make(clock);
      await s.start();
      const lastHash = async () =>
        (
          await h.deps.db
            .selectFrom('schedule')
            .select('last_commit_hash')
            .where('id', '=', scheduleId)
            .executeTakeFirstOrThrow()
        ).last_commit_hash;

      const first = git(dir, 'rev-parse', 'HEAD');
      await advance(s, clock, '2030-01-01T10:01:00Z');
      expect(starter.calls).toHaveLength(1);
      expect(starter.calls[0]!.origin).toEqual({
        userId: null,
        scheduleId,
        source: 'schedule',
        commitHash: first,
      });
      expect(await lastHash()).toBe(first);

      await advance(s, clock, '2030-01-01T10:02:00Z');
      await advance(s, clock, '2030-01-01T10:03:00Z');
      expect(starter.calls).toHaveLength(1);

      writeFileSync(join(dir, 'run.sh'), 'echo two\n');
      git(dir, 'commit', '-q', '-am', 'second');
      const second = git(dir, 'rev-parse', 'HEAD');
      await advance(s, clock, '2030-01-01T10:04:00Z');
      expect(starter.calls).toHaveLength(2);
      expect(starter.calls[1]!.origin.commitHash).toBe(second);
      expect(await lastHash()).toBe(second);

      await advance(s, clock, '2030-01-01T10:05:00Z');
      expect(starter.calls).toHaveLength(2);
    });
  });

  it('uses the template branch over the repository branch for new-commit checks', async () => {
    const dir = makeRepo();
    cleanup.push(dir);
    git(dir, 'checkout', '-q', '-b', 'release');
    writeFileSync(join(dir, 'run.sh'), 'echo release\n');
    git(dir, 'commit', '-q', '-am', 'release');
    const release = git(dir, 'rev-parse', 'release');
    git(dir, 'checkout', '-q', 'main');
    const tpl = await r.template(projectId, { git_branch: 'release' });
    const repositoryId = await r.repository(projectId, `file://${dir}`, 'main');
    await r.schedule(projectId, tpl, { cron_format: '* * * * *', repository_id: repositoryId });
    const clock = new ManualClock('2030-01-01T10:00:30Z');
    const s = make(clock);
    await s.start();
    await advance(s, clock, '2030-01-01T10:01:00Z');
    expect(starter.calls[0]?.origin.commitHash).toBe(release);
  });

  it('does not fire when the repository cannot be read', async () => {
    const missing = join(tmpdir(), 'signalbox-no-such-repo-xyz');
    const repositoryId = await r.repository(projectId, `file://${missing}`, 'main');
    await r.schedule(projectId, templateId, { cron_format: '* * * * *', repository_id: repositoryId });
    const clock = new ManualClock('2030-01-01T10:00:30Z');
    const s = make(clock);
    await s.start();
    await advance(s, clock, '2030-01-01T10:01:00Z');
    expect(starter.calls).toHaveLength(0);
    expect(h.logLines.some((l) => l.includes('schedule run failed'))).toBe(true);
  });
});
