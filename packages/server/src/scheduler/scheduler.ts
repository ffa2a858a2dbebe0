import { Cron } from 'croner';
import { logFailure } from '../db/retry';
import { databaseNow } from '../db/values';
import type { Deps } from '../deps';
import type { Scheduler } from '../ports';
import { type Clock, MAX_DELAY, realClock } from './clock';
import { activeSchedules, type ScheduleEntry } from './scheduler.store';
import { redact, runOnce, runTick, type TickContext } from './ticks';

export type SchedulerHandle = Scheduler & {
  /** Resolves when every tick that has fired so far has finished its work (tests). */
  idle(): Promise<void>;
  /** The next planned tick of each armed schedule. */
  planned(): Map<number, Date>;
};

export type SchedulerOptions = {
  clock?: Clock;
  timezone?: string;
  /** How late a run-once schedule may still start its task (default: config.runOnceGrace seconds). */
  runOnceGraceMs?: number;
  /** How often the schedules are read again whatever was announced (default RELOAD_EVERY_MS). */
  reloadEveryMs?: number;
  /**
   * The time the instances sharing the database agree on, in ms since the epoch: a tick is claimed only once it
   * has come by this clock. Default: the database server's clock; with a `clock` given, that clock's time.
   */
  agreedNow?: () => Promise<number>;
};

/**
 * How often every instance reads the schedules again, announced or not: a safety net for a change another instance
 * made while the bus (Redis) was down. Changes are otherwise announced at once (projectChanged).
 */
export const RELOAD_EVERY_MS = 60_000;
/** Announcements within this long of one another cause one read. */
const ANNOUNCED_RELOAD_MS = 50;

/** An armed schedule: a cron schedule has its cron; a run-once schedule (cron null) waits for its one time. */
type Armed = { entry: ScheduleEntry; cron: Cron | null; timer?: unknown; next?: Date };

/** What makes two reads of a schedule arm the same timer. */
const timingOf = (e: ScheduleEntry) => (e.type === 'run_at' ? `run_at ${e.run_at}` : `cron ${e.cron_format}`);

/** After a failed re-read of the schedules (the database was unavailable), the next try comes this much later. */
export const RELOAD_RETRY_MS = 5000;

/**
 * Cron schedules, new-commit checks and run-once schedules. Each active schedule is armed with one timer for its
 * next tick; a tick is claimed in the database before anything runs, so it fires once even across server
 * processes. A run-once schedule's one tick is its `run_at`: the claim disables it in the same UPDATE. When no
 * server ran at that time, the first one to start runs it if it is at most the grace late, else marks it missed
 * (and disabled) without running it.
 */
export function createScheduler(
  deps: Pick<Deps, 'db' | 'dialect' | 'log' | 'box' | 'config' | 'startTask' | 'metrics' | 'bus'> &
    Partial<Pick<Deps, 'startWorkflow'>>,
  options: SchedulerOptions = {},
): SchedulerHandle {
  const clock = options.clock ?? realClock;
  const agreedNow =
    options.agreedNow ??
    (options.clock ? async () => clock.now().getTime() : () => databaseNow(deps.db, deps.dialect));
  /** Waits for the database clock, each with its timer; closing ends them all. */
  const waits = new Map<unknown, () => void>();
  const timezone = options.timezone ?? deps.config.scheduleTimezone;
  const runOnceGraceMs = options.runOnceGraceMs ?? deps.config.runOnceGrace * 1000;
  const armed = new Map<number, Armed>();
  const inFlight = new Set<Promise<void>>();
  let started = false;
  let closed = false;
  let refreshChain: Promise<void> = Promise.resolve();
  let reloadTimer: unknown;
  let announcedTimer: NodeJS.Timeout | undefined;
  let everyTimer: NodeJS.Timeout | undefined;
  /**
   * A write in a project (on this instance or, through Redis, on another) may have changed its schedules: they
   * are read again, once for a burst of writes.
   */
  const onProjectChanged = () => {
    if (announcedTimer || closed || !started) return;
    announcedTimer = setTimeout(() => {
      announcedTimer = undefined;
      reload().catch(() => {});
    }, ANNOUNCED_RELOAD_MS);
  };
  const ticks: TickContext = {
    deps,
    clock,
    timezone,
    runOnceGraceMs,
    agreedNow,
    waits,
    closed: () => closed,
    reload: () => reload(),
  };

  function disarm(a: Armed) {
    if (a.timer !== undefined) clock.clearTimer(a.timer);
    a.timer = undefined;
  }

  function arm(a: Armed, next: Date | null) {
    disarm(a);
    a.next = next ?? undefined;
    if (!next || closed) return;
    const delay = Math.min(MAX_DELAY, Math.max(0, next.getTime() - clock.now().getTime()));
    a.timer = clock.setTimer(() => {
      a.timer = undefined;
      if (armed.get(a.entry.id) !== a || closed) return;
      // A wait longer than setTimeout allows wakes up early: keep waiting for the same tick.
      if (next.getTime() - clock.now().getTime() > 1000) return arm(a, next);
      fire(a.entry.id, next, a.entry.type === 'run_at');
      // Missed ticks (a blocked event loop) are skipped, not replayed.
      const from = clock.now() > next ? clock.now() : next;
      if (from !== next) deps.metrics.schedulerMisses.inc(missedTicks(a, next, from));
      arm(a, nextRun(a, from));
    }, delay);
  }

  function nextRun(a: Armed, from: Date): Date | null {
    if (!a.cron) return null;
    try {
      return a.cron.nextRun(from);
    } catch (err) {
      deps.log.warn({ scheduleId: a.entry.id, err: (err as Error).message }, 'schedule has no next run');
      return null;
    }
  }

  /** How many ticks fall after `fired` up to `now` (capped: the count only feeds a metric). */
  function missedTicks(a: Armed, fired: Date, now: Date): number {
    let missed = 0;
    for (let t = nextRun(a, fired); t && t <= now && missed < 10_000; t = nextRun(a, t)) missed += 1;
    return missed;
  }

  /** Ticks of one schedule run one after another, so claims reach the database in tick order. */
  const chains = new Map<number, Promise<void>>();

  function fire(scheduleId: number, tick: Date, once: boolean) {
    deps.metrics.schedulerFires.inc();
    const previous = chains.get(scheduleId) ?? Promise.resolve();
    const work: Promise<void> = previous
      .then(() => (once ? runOnce(ticks, scheduleId, tick) : runTick(ticks, scheduleId, tick)))
      .catch((err: Error) => {
        deps.log.error(
          { scheduleId, tick: tick.toISOString(), err: redact(err.message) },
          'schedule run failed',
        );
      })
      .finally(() => {
        inFlight.delete(work);
        if (chains.get(scheduleId) === work) chains.delete(scheduleId);
      });
    chains.set(scheduleId, work);
    inFlight.add(work);
  }

  function reloadSoon() {
    if (reloadTimer !== undefined || closed) return;
    reloadTimer = clock.setTimer(() => {
      reloadTimer = undefined;
      handle.refresh().catch(() => {});
    }, RELOAD_RETRY_MS);
  }

  async function load() {
    if (!started || closed) return;
    const rows = await activeSchedules(deps.db);
    const seen = new Set<number>();
    for (const entry of rows) {
      seen.add(entry.id);
      const current = armed.get(entry.id);
      if (current && timingOf(current.entry) === timingOf(entry)) {
        current.entry = entry;
        continue;
      }
      if (current) disarm(current);
      if (entry.type === 'run_at') {
        const at = new Date(entry.run_at ?? '');
        if (Number.isNaN(at.getTime())) {
          armed.delete(entry.id);
          deps.log.warn({ scheduleId: entry.id }, 'run-once schedule has no valid time');
          continue;
        }
        const a: Armed = { entry, cron: null };
        armed.set(entry.id, a);
        // A time already past fires at once: runOnce decides between running late and marking it missed.
        arm(a, at);
        continue;
      }
      let cron: Cron;
      try {
        cron = new Cron(entry.cron_format, { timezone, paused: true });
      } catch (err) {
        armed.delete(entry.id);
        deps.log.warn(
          { scheduleId: entry.id, err: (err as Error).message },
          'schedule has an invalid cron format',
        );
        continue;
      }
      const a: Armed = { entry, cron };
      armed.set(entry.id, a);
      arm(a, nextRun(a, clock.now()));
    }
    for (const [id, a] of armed) {
      if (seen.has(id)) continue;
      disarm(a);
      armed.delete(id);
    }
  }

  function reload() {
    refreshChain = refreshChain.then(load, load).catch((err: unknown) => {
      logFailure(deps.log, err, 'reading the schedules failed; trying again shortly');
      reloadSoon();
      throw err;
    });
    return refreshChain;
  }

  const handle: SchedulerHandle = {
    async start() {
      started = true;
      closed = false;
      deps.bus.on('projectChanged', onProjectChanged);
      everyTimer = setInterval(() => void reload().catch(() => {}), options.reloadEveryMs ?? RELOAD_EVERY_MS);
      everyTimer.unref();
      await this.refresh();
    },
    /**
     * Re-reads the schedules table; concurrent calls run one after another. When the read fails the caller gets
     * the error and the scheduler tries again on its own a little later, so a change saved just before an outage
     * is still armed.
     */
    refresh: reload,
    async close() {
      closed = true;
      deps.bus.off('projectChanged', onProjectChanged);
      if (announcedTimer) clearTimeout(announcedTimer);
      if (everyTimer) clearInterval(everyTimer);
      announcedTimer = everyTimer = undefined;
      if (reloadTimer !== undefined) clock.clearTimer(reloadTimer);
      reloadTimer = undefined;
      for (const a of armed.values()) disarm(a);
      armed.clear();
      for (const [timer, done] of waits) {
        clock.clearTimer(timer);
        done();
      }
      await Promise.allSettled([...inFlight]);
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    planned() {
      return new Map([...armed].filter(([, a]) => a.next).map(([id, a]) => [id, a.next as Date]));
    },
  };
  return handle;
}
