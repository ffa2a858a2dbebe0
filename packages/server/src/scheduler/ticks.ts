import { Cron } from 'croner';
import { recordEvent } from '../audit/audit.store';
import { untilDbAnswers } from '../db/retry';
import { parseJsonObject } from '../db/values';
import type { Deps } from '../deps';
import { keySecretOf } from '../lib/key-sources';
import { storedDefaultParams, taskWithDefaults } from '../tasks/run/default-params';
import { type Clock, MAX_DELAY } from './clock';
import { describeSchedule } from './describe';
import { branchHead, type GitAuth } from './git-head';
import {
  claimRunOnce,
  claimTick,
  deleteRanSchedule,
  hasWaitingTask,
  markRunOnceMissed,
  saveCommitHash,
  saveLastRun,
  scheduleForRun,
} from './scheduler.store';

/** What running a tick needs of the scheduler that armed it. */
export type TickContext = {
  deps: Pick<Deps, 'db' | 'log' | 'box' | 'config' | 'startTask' | 'bus'> &
    Partial<Pick<Deps, 'startWorkflow'>>;
  clock: Clock;
  timezone: string;
  runOnceGraceMs: number;
  /** The time the instances sharing the database agree on (see SchedulerOptions.agreedNow). */
  agreedNow(): Promise<number>;
  /** Waits for the database clock, each with its timer; closing the scheduler ends them all. */
  waits: Map<unknown, () => void>;
  closed(): boolean;
  /** Reads the schedules again (a tick found its schedule changed on another instance). */
  reload(): Promise<void>;
};

/** Strips credentials a git error message may echo back (user:password@host in a URL). */
export const redact = (text: string) => text.replace(/\/\/[^/@\s]*@/g, '//***@');

/** Database reads and idempotent writes of a tick: a short outage delays the tick instead of losing it. */
const persist = <T>(t: TickContext, what: string, scheduleId: number, work: () => Promise<T>) =>
  untilDbAnswers(work, { log: t.deps.log, what, scheduleId, giveUp: t.closed });

/**
 * Waits until `tick` has come by the clock the instances agree on (the database's), so that a machine whose own
 * clock runs ahead never claims a tick early (and a correct one then finds it taken). False when the scheduler
 * closed meanwhile.
 */
export async function untilDue(t: TickContext, scheduleId: number, tick: Date): Promise<boolean> {
  for (;;) {
    if (t.closed()) return false;
    const early = tick.getTime() - (await persist(t, 'reading the database clock', scheduleId, t.agreedNow));
    if (early <= 0) return !t.closed();
    await new Promise<void>((resolve) => {
      const done = () => {
        t.waits.delete(timer);
        resolve();
      };
      const timer = t.clock.setTimer(done, Math.min(early, MAX_DELAY));
      t.waits.set(timer, done);
    });
  }
}

/**
 * Runs one tick. A claim whose answer was lost is not taken for won (trying it again finds it claimed): the tick
 * is skipped rather than risk running twice. The task itself is created once, without retry, for the same reason.
 */
export async function runTick(t: TickContext, scheduleId: number, tick: Date) {
  const at = tick.toISOString();
  if (!(await untilDue(t, scheduleId, tick))) return;
  if (!(await persist(t, 'claiming a schedule tick', scheduleId, () => claimTick(t.deps.db, scheduleId, at))))
    return;
  const s = await persist(t, 'reading a schedule', scheduleId, () => scheduleForRun(t.deps.db, scheduleId));
  if (s?.active !== 1) return;
  // Armed from an older read (the change was made on another instance and not yet heard of): only a tick of the
  // schedule's current cron runs.
  if (!isTickOf(t, s, tick)) {
    t.deps.log.info({ scheduleId, tick: at }, 'schedule tick skipped: its cron has changed');
    void t.reload().catch(() => {});
    return;
  }
  if (s.workflow_id) {
    const runId = await startScheduledWorkflow(t, s);
    await persist(t, 'saving when a schedule ran', scheduleId, () =>
      saveLastRun(t.deps.db, scheduleId, t.clock.now().toISOString()),
    );
    t.deps.log.info({ scheduleId, runId, tick: at }, 'schedule started a workflow run');
    return;
  }
  if (
    await persist(t, 'reading a schedule', scheduleId, () =>
      hasWaitingTask(t.deps.db, scheduleId, s.template_id),
    )
  ) {
    t.deps.log.info({ scheduleId }, 'schedule skipped: its previous task is still waiting');
    return;
  }
  const defaults = storedDefaultParams(s.task_params);
  let commitHash: string | null = null;
  if (s.repository_id !== null) {
    if (!s.repo_id || !s.git_url) {
      t.deps.log.warn({ scheduleId }, 'schedule skipped: its repository no longer exists');
      return;
    }
    const branch = defaults.git_branch || s.template_branch || s.repository_branch || 'HEAD';
    const head = await branchHead(s.git_url, branch, await gitAuth(t, s));
    if (!head) {
      t.deps.log.warn({ scheduleId, branch }, 'schedule skipped: branch not found in the repository');
      return;
    }
    if (head === s.last_commit_hash) return;
    commitHash = head;
  }
  const taskId = await t.deps.startTask(s.project_id, taskWithDefaults(s.template_id, defaults), {
    userId: null,
    scheduleId,
    source: 'schedule',
    ...(commitHash ? { commitHash } : {}),
  });
  if (commitHash)
    await persist(t, 'saving a schedule commit', scheduleId, () =>
      saveCommitHash(t.deps.db, scheduleId, commitHash),
    );
  await persist(t, 'saving when a schedule ran', scheduleId, () =>
    saveLastRun(t.deps.db, scheduleId, t.clock.now().toISOString()),
  );
  t.deps.log.info({ scheduleId, taskId, tick: tick.toISOString() }, 'schedule started a task');
}

/**
 * The one run of a run-once schedule. Later than the grace, it is marked missed; else it is claimed (and disabled
 * by the claim) and its task started once, without retry: a run that cannot start is logged and recorded, not
 * tried again.
 */
export async function runOnce(t: TickContext, scheduleId: number, tick: Date) {
  const at = tick.toISOString();
  if (!(await untilDue(t, scheduleId, tick))) return;
  const late = (await persist(t, 'reading the database clock', scheduleId, t.agreedNow)) - tick.getTime();
  if (late > t.runOnceGraceMs) {
    if (
      await persist(t, 'marking a schedule missed', scheduleId, () =>
        markRunOnceMissed(t.deps.db, scheduleId, at),
      )
    ) {
      t.deps.log.warn(
        { scheduleId, runAt: at, lateSeconds: Math.round(late / 1000) },
        'run-once schedule missed its time (no server was running); disabled without running',
      );
      await recordScheduleEvent(t, scheduleId, 'missed its time and was disabled without running');
    }
    return;
  }
  if (
    !(await persist(t, 'claiming a schedule run', scheduleId, () => claimRunOnce(t.deps.db, scheduleId, at)))
  )
    return;
  const s = await persist(t, 'reading a schedule', scheduleId, () => scheduleForRun(t.deps.db, scheduleId));
  if (!s) {
    t.deps.log.warn({ scheduleId }, 'run-once schedule skipped: its template no longer exists');
    return;
  }
  let taskId: number;
  try {
    taskId = s.workflow_id
      ? await startScheduledWorkflow(t, s)
      : await t.deps.startTask(
          s.project_id,
          taskWithDefaults(s.template_id, storedDefaultParams(s.task_params)),
          { userId: null, scheduleId, source: 'schedule' },
        );
  } catch (err) {
    await recordScheduleEvent(
      t,
      scheduleId,
      `could not start its task: ${redact((err as Error).message)}`,
      s,
    );
    throw err;
  }
  await persist(t, 'saving when a schedule ran', scheduleId, () =>
    saveLastRun(t.deps.db, scheduleId, t.clock.now().toISOString()),
  );
  t.deps.log.info({ scheduleId, taskId, runAt: at }, 'run-once schedule started its task');
  if (s.delete_after_run) {
    await persist(t, 'deleting a run-once schedule', scheduleId, () =>
      deleteRanSchedule(t.deps.db, scheduleId),
    );
    await recordScheduleEvent(t, scheduleId, 'started its task and was deleted', s);
  }
}

/** An audit event of the scheduler itself (no user) about one schedule. */
export async function recordScheduleEvent(
  t: TickContext,
  scheduleId: number,
  what: string,
  known?: Awaited<ReturnType<typeof scheduleForRun>>,
) {
  const s = known ?? (await scheduleForRun(t.deps.db, scheduleId));
  if (!s) return;
  const name = describeSchedule(s, s.template_name);
  await persist(t, 'recording a schedule event', scheduleId, () =>
    recordEvent(t.deps.db, {
      project_id: s.project_id,
      user_id: null,
      object_type: 'schedule',
      object_id: scheduleId,
      description: `${name} ${what}`,
    }),
  );
}

export async function gitAuth(
  t: TickContext,
  s: NonNullable<Awaited<ReturnType<typeof scheduleForRun>>>,
): Promise<GitAuth> {
  const type = s.key_type;
  if (!type || s.key_id === null || type === 'none') return { type: 'none' };
  const secret = await keySecretOf(t.deps, {
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
export function isTickOf(t: TickContext, s: { type: string; cron_format: string }, tick: Date) {
  if (s.type === 'run_at') return false;
  try {
    const cron = new Cron(s.cron_format, { timezone: t.timezone, paused: true });
    return cron.nextRun(new Date(tick.getTime() - 1000))?.getTime() === tick.getTime();
  } catch {
    return false;
  }
}

/**
 * A schedule of a workflow starts a run: the extra variables of its task parameters answer the workflow's survey
 * (its defaults fill the rest), its message is the run's.
 */
async function startScheduledWorkflow(
  t: TickContext,
  s: { id: number; project_id: number; workflow_id: number | null; task_params: string | null },
): Promise<number> {
  if (!t.deps.startWorkflow || !s.workflow_id) throw new Error('this scheduler cannot start workflows');
  const defaults = storedDefaultParams(s.task_params);
  return t.deps.startWorkflow(s.project_id, s.workflow_id, parseJsonObject(defaults.environment), {
    source: 'schedule',
    scheduleId: s.id,
    message: defaults.message ?? '',
  });
}
