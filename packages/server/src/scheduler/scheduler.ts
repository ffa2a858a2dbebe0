import { Cron } from 'croner';
import { recordEvent } from '../audit/audit.store';
import { logFailure, untilDbAnswers } from '../db/retry';
import { databaseNow } from '../db/values';
import type { Deps } from '../deps';
import { keySecretOf } from '../lib/key-sources';
import type { Scheduler } from '../ports';
import { storedDefaultParams, taskWithDefaults } from '../tasks/run/default-params';
import { type Clock, realClock } from './clock';
import { describeSchedule } from './describe';
import { branchHead, type GitAuth } from './git-head';
import {
  activeSchedules,
  claimRunOnce,
  claimTick,
  deleteRanSchedule,
  hasWaitingTask,
  markRunOnceMissed,
  type ScheduleEntry,
  saveCommitHash,
  saveLastRun,
  scheduleForRun,
} from './scheduler.store';

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

/** setTimeout's ceiling; longer waits are split. */
const MAX_DELAY = 2 ** 31 - 1;
/** After a failed re-read of the schedules (the database was unavailable), the next try comes this much later. */
export const RELOAD_RETRY_MS = 5000;

/** Strips credentials a git error message may echo back (user:password@host in a URL). */
const redact = (text: string) => text.replace(/\/\/[^/@\s]*@/g, '//***@');

/**
 * Cron schedules, new-commit checks and run-once schedules. Each active schedule is armed with one timer for its
 * next tick; a tick is claimed in the database before anything runs, so it fires once even across server
 * processes. A run-once schedule's one tick is its `run_at`: the claim disables it in the same UPDATE. When no
 * server ran at that time, the first one to start runs it if it is at most the grace late, else marks it missed
 * (and disabled) without running it.
 */
export function createScheduler(
  deps: Pick<Deps, 'db' | 'dialect' | 'log' | 'box' | 'config' | 'startTask' | 'metrics' | 'bus'>,
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
  /** Database reads and idempotent writes of a tick: a short outage delays the tick instead of losing it. */
  const persist = <T>(what: string, scheduleId: number, work: () => Promise<T>) =>
    untilDbAnswers(work, { log: deps.log, what, scheduleId, giveUp: () => closed });

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
      .then(() => (once ? runOnce(scheduleId, tick) : runTick(scheduleId, tick)))
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

  /**
   * Waits until `tick` has come by the clock the instances agree on (the database's), so that a machine whose own
   * clock runs ahead never claims a tick early (and a correct one then finds it taken). False when the scheduler
   * closed meanwhile.
   */
  async function untilDue(scheduleId: number, tick: Date): Promise<boolean> {
    for (;;) {
      if (closed) return false;
      const early = tick.getTime() - (await persist('reading the database clock', scheduleId, agreedNow));
      if (early <= 0) return !closed;
      await new Promise<void>((resolve) => {
        const done = () => {
          waits.delete(timer);
          resolve();
        };
        const timer = clock.setTimer(done, Math.min(early, MAX_DELAY));
        waits.set(timer, done);
      });
    }
  }

  /**
   * Runs one tick. A claim whose answer was lost is not taken for won (trying it again finds it claimed): the tick
   * is skipped rather than risk running twice. The task itself is created once, without retry, for the same reason.
   */
  async function runTick(scheduleId: number, tick: Date) {
    const at = tick.toISOString();
    if (!(await untilDue(scheduleId, tick))) return;
    if (!(await persist('claiming a schedule tick', scheduleId, () => claimTick(deps.db, scheduleId, at))))
      return;
    const s = await persist('reading a schedule', scheduleId, () => scheduleForRun(deps.db, scheduleId));
    if (s?.active !== 1) return;
    // Armed from an older read (the change was made on another instance and not yet heard of): only a tick of the
    // schedule's current cron runs.
    if (!isTickOf(s, tick)) {
      deps.log.info({ scheduleId, tick: at }, 'schedule tick skipped: its cron has changed');
      void reload().catch(() => {});
      return;
    }
    if (
      await persist('reading a schedule', scheduleId, () =>
        hasWaitingTask(deps.db, scheduleId, s.template_id),
      )
    ) {
      deps.log.info({ scheduleId }, 'schedule skipped: its previous task is still waiting');
      return;
    }
    const defaults = storedDefaultParams(s.task_params);
    let commitHash: string | null = null;
    if (s.repository_id !== null) {
      if (!s.repo_id || !s.git_url) {
        deps.log.warn({ scheduleId }, 'schedule skipped: its repository no longer exists');
        return;
      }
      const branch = defaults.git_branch || s.template_branch || s.repository_branch || 'HEAD';
      const head = await branchHead(s.git_url, branch, await gitAuth(s));
      if (!head) {
        deps.log.warn({ scheduleId, branch }, 'schedule skipped: branch not found in the repository');
        return;
      }
      if (head === s.last_commit_hash) return;
      commitHash = head;
    }
    const taskId = await deps.startTask(s.project_id, taskWithDefaults(s.template_id, defaults), {
      userId: null,
      scheduleId,
      ...(commitHash ? { commitHash } : {}),
    });
    if (commitHash)
      await persist('saving a schedule commit', scheduleId, () =>
        saveCommitHash(deps.db, scheduleId, commitHash),
      );
    await persist('saving when a schedule ran', scheduleId, () =>
      saveLastRun(deps.db, scheduleId, clock.now().toISOString()),
    );
    deps.log.info({ scheduleId, taskId, tick: tick.toISOString() }, 'schedule started a task');
  }

  /**
   * The one run of a run-once schedule. Later than the grace, it is marked missed; else it is claimed (and disabled
   * by the claim) and its task started once, without retry: a run that cannot start is logged and recorded, not
   * tried again.
   */
  async function runOnce(scheduleId: number, tick: Date) {
    const at = tick.toISOString();
    if (!(await untilDue(scheduleId, tick))) return;
    const late = (await persist('reading the database clock', scheduleId, agreedNow)) - tick.getTime();
    if (late > runOnceGraceMs) {
      if (
        await persist('marking a schedule missed', scheduleId, () =>
          markRunOnceMissed(deps.db, scheduleId, at),
        )
      ) {
        deps.log.warn(
          { scheduleId, runAt: at, lateSeconds: Math.round(late / 1000) },
          'run-once schedule missed its time (no server was running); disabled without running',
        );
        await recordScheduleEvent(scheduleId, 'missed its time and was disabled without running');
      }
      return;
    }
    if (!(await persist('claiming a schedule run', scheduleId, () => claimRunOnce(deps.db, scheduleId, at))))
      return;
    const s = await persist('reading a schedule', scheduleId, () => scheduleForRun(deps.db, scheduleId));
    if (!s) {
      deps.log.warn({ scheduleId }, 'run-once schedule skipped: its template no longer exists');
      return;
    }
    let taskId: number;
    try {
      taskId = await deps.startTask(
        s.project_id,
        taskWithDefaults(s.template_id, storedDefaultParams(s.task_params)),
        { userId: null, scheduleId },
      );
    } catch (err) {
      await recordScheduleEvent(scheduleId, `could not start its task: ${redact((err as Error).message)}`, s);
      throw err;
    }
    await persist('saving when a schedule ran', scheduleId, () =>
      saveLastRun(deps.db, scheduleId, clock.now().toISOString()),
    );
    deps.log.info({ scheduleId, taskId, runAt: at }, 'run-once schedule started its task');
    if (s.delete_after_run) {
      await persist('deleting a run-once schedule', scheduleId, () => deleteRanSchedule(deps.db, scheduleId));
      await recordScheduleEvent(scheduleId, 'started its task and was deleted', s);
    }
  }

  /** An audit event of the scheduler itself (no user) about one schedule. */
  async function recordScheduleEvent(
    scheduleId: number,
    what: string,
    known?: Awaited<ReturnType<typeof scheduleForRun>>,
  ) {
    const s = known ?? (await scheduleForRun(deps.db, scheduleId));
    if (!s) return;
    const name = describeSchedule(s, s.template_name);
    await persist('recording a schedule event', scheduleId, () =>
      recordEvent(deps.db, {
        project_id: s.project_id,
        user_id: null,
        object_type: 'schedule',
        object_id: scheduleId,
        description: `${name} ${what}`,
      }),
    );
  }

  async function gitAuth(s: NonNullable<Awaited<ReturnType<typeof scheduleForRun>>>): Promise<GitAuth> {
    const type = s.key_type;
    if (!type || s.key_id === null || type === 'none') return { type: 'none' };
    const secret = await keySecretOf(deps, {
      name: s.key_name ?? '',
      type,
      secret: s.key_secret,
      source_storage_type: s.key_source_type,
      source_storage_key: s.key_source_key,
    });
    if (type === 'login_password') return { type, login: secret.login, password: secret.password };
    if (type === 'ssh')
      return { type, login: secret.login, private_key: secret.private_key, passphrase: secret.passphrase };
    return { type: 'none' };
  }

  /** True when `tick` is a time the schedule's stored cron fires at. */
  function isTickOf(s: { type: string; cron_format: string }, tick: Date) {
    if (s.type === 'run_at') return false;
    try {
      const cron = new Cron(s.cron_format, { timezone, paused: true });
      return cron.nextRun(new Date(tick.getTime() - 1000))?.getTime() === tick.getTime();
    } catch {
      return false;
    }
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
