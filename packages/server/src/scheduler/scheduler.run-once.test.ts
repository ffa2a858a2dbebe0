import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Harness } from '../../test/support/harness';
import { ManualClock } from '../../test/support/manual-clock';
import { schedulerHarness } from '../../test/support/scheduler-harness';
import type { recordingStarter, rows } from '../../test/support/scheduler-rows';
import { createScheduler, type SchedulerHandle } from './scheduler';
import { claimRunOnce, markRunOnceMissed } from './scheduler.store';

const MINUTE = 60_000;

describe.each(testDialects())('run-once schedules on $name', (dialect) => {
  let h: Harness;
  let starter: ReturnType<typeof recordingStarter>;
  let r: ReturnType<typeof rows>;
  let projectId: number;
  let templateId: number;
  const schedulers: SchedulerHandle[] = [];

  const make = (clock: ManualClock, runOnceGraceMs = 15 * MINUTE) => {
    const s = createScheduler({ ...h.deps, startTask: starter.start }, { clock, runOnceGraceMs });
    schedulers.push(s);
    return s;
  };
  const advance = async (s: SchedulerHandle, clock: ManualClock, to: string) => {
    clock.advanceTo(to);
    await s.idle();
  };
  /** Runs the timers due now (a time already past is armed with no delay) and waits for their work. */
  const settle = async (s: SchedulerHandle, clock: ManualClock) => {
    clock.advance(0);
    await s.idle();
  };
  const once = (runAt: string, values: Record<string, unknown> = {}) =>
    r.schedule(projectId, templateId, { type: 'run_at', cron_format: '', run_at: runAt, ...values });
  const row = (id: number) =>
    h.deps.db.selectFrom('schedule').selectAll().where('id', '=', id).executeTakeFirst();
  const tasksOf = (id: number) =>
    h.deps.db.selectFrom('task').select('id').where('schedule_id', '=', id).execute();
  const events = (id: number) =>
    h.deps.db
      .selectFrom('event')
      .select(['description', 'user_id'])
      .where('object_type', '=', 'schedule')
      .where('object_id', '=', id)
      .orderBy('id')
      .execute();

  beforeEach(async () => {
    ({ h, starter, r, projectId, templateId } = await schedulerHarness(dialect));
  });

  afterEach(async () => {
    for (const s of schedulers.splice(0)) await s.close();
    await h.close();
  });

  it('starts its task once at its time, then is disabled and says when it ran', async () => {
    const id = await once('2030-01-01T10:30:00.000Z', { name: 'Release' });
    const clock = new ManualClock('2030-01-01T10:00:00Z');
    const s = make(clock);
    await s.start();
    expect(s.planned().get(id)?.toISOString()).toBe('2030-01-01T10:30:00.000Z');

    await advance(s, clock, '2030-01-01T10:29:59.500Z');
    expect(starter.calls).toHaveLength(0);
    await advance(s, clock, '2030-01-01T10:30:00Z');
    expect(starter.calls).toEqual([
      {
        projectId,
        input: { template_id: templateId },
        origin: { userId: null, scheduleId: id, source: 'schedule' },
        taskId: expect.any(Number),
      },
    ]);
    expect(await row(id)).toMatchObject({
      active: 0,
      run_missed: 0,
      last_tick: '2030-01-01T10:30:00.000Z',
      last_run_at: '2030-01-01T10:30:00.000Z',
      run_at: '2030-01-01T10:30:00.000Z',
    });
    // Nothing stays armed: no later time fires it again, not even after a refresh.
    expect(clock.pending).toBe(0);
    await s.refresh();
    expect(s.planned().size).toBe(0);
    await advance(s, clock, '2031-01-01T00:00:00Z');
    expect(starter.calls).toHaveLength(1);
    expect(await tasksOf(id)).toHaveLength(1);
  });

  it("gives its task the schedule's task parameters", async () => {
    const id = await once('2030-01-01T10:30:00.000Z', {
      task_params: JSON.stringify({ message: 'release 2.0', inventory_id: 7 }),
    });
    const clock = new ManualClock('2030-01-01T10:00:00Z');
    const s = make(clock);
    await s.start();
    await advance(s, clock, '2030-01-01T10:30:00Z');
    expect(starter.calls.map((c) => [c.input, c.origin.scheduleId])).toEqual([
      [{ template_id: templateId, message: 'release 2.0', inventory_id: 7 }, id],
    ]);
  });

  it('starts once with two schedulers on one database, and a second claim of the same time loses', async () => {
    const id = await once('2030-01-01T10:30:00.000Z');
    const clockA = new ManualClock('2030-01-01T10:00:00Z');
    const clockB = new ManualClock('2030-01-01T10:00:00Z');
    const a = make(clockA);
    const b = make(clockB);
    await Promise.all([a.start(), b.start()]);
    clockA.advanceTo('2030-01-01T10:30:00Z');
    clockB.advanceTo('2030-01-01T10:30:00Z');
    await Promise.all([a.idle(), b.idle()]);
    expect(starter.calls).toHaveLength(1);
    expect(await tasksOf(id)).toHaveLength(1);

    // The claim itself: disabled by the winner, so no one claims or marks it again.
    expect(await claimRunOnce(h.deps.db, id, '2030-01-01T10:30:00.000Z')).toBe(false);
    expect(await markRunOnceMissed(h.deps.db, id, '2030-01-01T10:30:00.000Z')).toBe(false);
  });

  it('runs at start when its time passed while no server ran, within the grace', async () => {
    const id = await once('2030-01-01T10:30:00.000Z');
    const clock = new ManualClock('2030-01-01T10:40:00Z');
    const s = make(clock, 15 * MINUTE);
    await s.start();
    await settle(s, clock);
    expect(starter.calls).toHaveLength(1);
    expect(await row(id)).toMatchObject({
      active: 0,
      run_missed: 0,
      last_tick: '2030-01-01T10:30:00.000Z',
      last_run_at: '2030-01-01T10:40:00.000Z',
    });
  });

  it('is marked missed, disabled and not run when its time passed longer ago than the grace', async () => {
    const id = await once('2030-01-01T10:30:00.000Z', { name: 'Late' });
    const clock = new ManualClock('2030-01-01T10:45:00.001Z');
    const s = make(clock, 15 * MINUTE);
    await s.start();
    await settle(s, clock);
    expect(starter.calls).toHaveLength(0);
    expect(await row(id)).toMatchObject({ active: 0, run_missed: 1, last_tick: null, last_run_at: null });
    expect(await events(id)).toEqual([
      {
        description:
          'Schedule Late (once at 2030-01-01T10:30:00.000Z) of template Nightly deploy missed its time and was disabled without running',
        user_id: null,
      },
    ]);
    expect(h.logLines.some((l) => l.includes('missed its time') && l.includes(`"scheduleId":${id}`))).toBe(
      true,
    );

    // A second server starting later does not run it either.
    const other = make(new ManualClock('2030-01-01T10:31:00Z'));
    await other.start();
    expect(other.planned().size).toBe(0);
  });

  it('a missed mark and a late run exclude each other', async () => {
    const id = await once('2030-01-01T10:30:00.000Z');
    expect(await markRunOnceMissed(h.deps.db, id, '2030-01-01T10:30:00.000Z')).toBe(true);
    expect(await claimRunOnce(h.deps.db, id, '2030-01-01T10:30:00.000Z')).toBe(false);

    const second = await once('2030-01-01T11:00:00.000Z');
    expect(await claimRunOnce(h.deps.db, second, '2030-01-01T11:00:00.000Z')).toBe(true);
    expect(await markRunOnceMissed(h.deps.db, second, '2030-01-01T11:00:00.000Z')).toBe(false);
    expect(await row(second)).toMatchObject({ active: 0, run_missed: 0 });
  });

  it('with a grace of 0 never runs late', async () => {
    const id = await once('2030-01-01T10:30:00.000Z');
    const clock = new ManualClock('2030-01-01T10:30:01Z');
    const s = make(clock, 0);
    await s.start();
    await settle(s, clock);
    expect(starter.calls).toHaveLength(0);
    expect(await row(id)).toMatchObject({ active: 0, run_missed: 1 });
  });

  it('is deleted after starting its task when delete_after_run is set', async () => {
    const id = await once('2030-01-01T10:30:00.000Z', { delete_after_run: 1, name: 'Throwaway' });
    const clock = new ManualClock('2030-01-01T10:00:00Z');
    const s = make(clock);
    await s.start();
    await advance(s, clock, '2030-01-01T10:30:00Z');
    expect(starter.calls).toHaveLength(1);
    expect(await row(id)).toBeUndefined();
    expect((await events(id)).map((e) => e.description)).toEqual([
      'Schedule Throwaway (once at 2030-01-01T10:30:00.000Z) of template Nightly deploy started its task and was deleted',
    ]);
  });

  it('follows an edit of its time and ignores the old one', async () => {
    const id = await once('2030-01-01T10:30:00.000Z');
    const clock = new ManualClock('2030-01-01T10:00:00Z');
    const s = make(clock);
    await s.start();
    await h.deps.db
      .updateTable('schedule')
      .set({ run_at: '2030-01-01T11:00:00.000Z' })
      .where('id', '=', id)
      .execute();
    await s.refresh();
    expect(s.planned().get(id)?.toISOString()).toBe('2030-01-01T11:00:00.000Z');
    expect(clock.pending).toBe(1);
    await advance(s, clock, '2030-01-01T10:59:00Z');
    expect(starter.calls).toHaveLength(0);
    await advance(s, clock, '2030-01-01T11:00:00Z');
    expect(starter.calls).toHaveLength(1);

    // An edit no scheduler has seen yet: the old time's claim does not match the stored time, nothing runs.
    const moved = await once('2030-01-01T12:00:00.000Z');
    await s.refresh();
    await h.deps.db
      .updateTable('schedule')
      .set({ run_at: '2030-01-01T13:00:00.000Z' })
      .where('id', '=', moved)
      .execute();
    await advance(s, clock, '2030-01-01T12:00:00Z');
    expect(starter.calls).toHaveLength(1);
    expect(await row(moved)).toMatchObject({ active: 1, last_tick: null });
  });

  it('is not armed while inactive, and a task that cannot start leaves it disabled with an event', async () => {
    await once('2030-01-01T10:30:00.000Z', { active: 0 });
    const id = await once('2030-01-01T10:45:00.000Z', { name: 'Broken' });
    const clock = new ManualClock('2030-01-01T10:00:00Z');
    const s = make(clock);
    await s.start();
    expect([...s.planned().keys()]).toEqual([id]);
    starter.fail = new Error('Template needs an inventory');
    await advance(s, clock, '2030-01-01T11:00:00Z');
    expect(await row(id)).toMatchObject({ active: 0, run_missed: 0, last_run_at: null });
    expect((await events(id)).map((e) => e.description)).toEqual([
      'Schedule Broken (once at 2030-01-01T10:45:00.000Z) of template Nightly deploy could not start its task: Template needs an inventory',
    ]);
    expect(
      h.logLines.some((l) => l.includes('schedule run failed') && l.includes('needs an inventory')),
    ).toBe(true);
  });

  it('cron schedules note when they last started a task', async () => {
    const id = await r.schedule(projectId, templateId, { cron_format: '*/5 * * * *' });
    const clock = new ManualClock('2030-01-01T10:02:30Z');
    const s = make(clock);
    await s.start();
    expect((await row(id))?.last_run_at).toBeNull();
    await advance(s, clock, '2030-01-01T10:05:00Z');
    expect(await row(id)).toMatchObject({ active: 1, last_run_at: '2030-01-01T10:05:00.000Z' });
  });
});
