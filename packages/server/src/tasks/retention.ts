import { recordEvent } from '../audit/audit.store';
import type { Deps } from '../deps';
import { type Clock, realClock } from '../scheduler/clock';
import {
  deleteExpiredWorkflowRuns,
  deleteFinishedTasks,
  deleteOutputSlice,
  expiredTaskIds,
  outputCounts,
  projectRetentions,
} from './retention.store';
import { sweepRepositoryCaches } from './run/repository-caches';

const DAY = 24 * 60 * 60 * 1000;

export type RetentionOptions = {
  clock?: Clock;
  /** Wait before the first run after start (default one minute, so the start itself is not slowed). */
  firstDelay?: number;
  /** Wait between the end of one run and the start of the next (default one hour). */
  interval?: number;
  /** Tasks selected and deleted per transaction (default 500). */
  taskChunk?: number;
  /** Output rows deleted per transaction (default 10 000); a task with more loses its output in slices first. */
  outputChunk?: number;
};

export type RetentionResult = { projects: number; tasks: number; output: number };

export type Retention = {
  start(): void;
  /** Stops the timer and waits for a run in progress, which ends after its current chunk. */
  close(): Promise<void>;
  /** One pass over every project now (also what the timer calls). */
  run(): Promise<RetentionResult>;
};

/**
 * Age-based retention: every hour (and once shortly after start) deletes finished tasks, with their output,
 * that ended longer ago than their project's `task_retention_days`, or SIGNALBOX_TASK_RETENTION_DAYS when the
 * project's is 0; 0 for both keeps everything. Unfinished tasks are never touched. Work is cut into short
 * transactions (at most `taskChunk` tasks and about `outputChunk` output rows each) with a turn of the event
 * loop between them, so a large backlog is worked off without holding the database or the server for long.
 * Each pass also removes the caches and kept working copies of repositories that no longer exist.
 * Several instances on one database may run it at once: deleting is idempotent. Each project that lost tasks
 * gets an event in its Activity naming how many and why.
 */
export function createRetention(
  deps: Pick<Deps, 'db' | 'config' | 'log' | 'bus'>,
  options: RetentionOptions = {},
) {
  const clock = options.clock ?? realClock;
  const firstDelay = options.firstDelay ?? 60_000;
  const interval = options.interval ?? 60 * 60 * 1000;
  const taskChunk = Math.max(1, options.taskChunk ?? 500);
  const outputChunk = Math.max(1, options.outputChunk ?? 10_000);
  let timer: unknown;
  let started = false;
  /** Set by close(): a run in progress stops after its current transaction. */
  let stopping = false;
  let running: Promise<RetentionResult> | null = null;

  const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

  /** Deletes the given tasks in transactions of at most about `outputChunk` output rows each. */
  async function deleteChunk(ids: number[], total: RetentionResult) {
    const counts = await outputCounts(deps.db, ids);
    let batch: number[] = [];
    let rows = 0;
    const flush = async () => {
      if (!batch.length) return;
      const done = await deleteFinishedTasks(deps.db, batch);
      total.tasks += done.tasks;
      total.output += done.output;
      batch = [];
      rows = 0;
      await pause();
    };
    for (const id of ids) {
      let count = counts.get(id) ?? 0;
      // A task with a huge log: its output goes in slices first, each in its own short statement.
      while (count > outputChunk) {
        if (stopping) return;
        const gone = await deleteOutputSlice(deps.db, id, outputChunk);
        total.output += gone;
        count = gone < outputChunk ? 0 : count - gone;
        await pause();
      }
      if (rows + count > outputChunk) await flush();
      if (stopping) return;
      batch.push(id);
      rows += count;
    }
    await flush();
  }

  async function pass(): Promise<RetentionResult> {
    const total: RetentionResult = { projects: 0, tasks: 0, output: 0 };
    const now = clock.now().getTime();
    for (const project of await projectRetentions(deps.db)) {
      const days =
        project.task_retention_days > 0 ? project.task_retention_days : deps.config.taskRetentionDays;
      if (days <= 0) continue;
      const cutoff = new Date(now - days * DAY).toISOString();
      const before = total.tasks;
      while (!stopping) {
        const ids = await expiredTaskIds(deps.db, project.id, cutoff, taskChunk);
        if (!ids.length) break;
        const deleted = total.tasks;
        await deleteChunk(ids, total);
        // Nothing of the chunk could be deleted (another instance got there, or they changed state): stop
        // rather than select the same ids forever.
        if (total.tasks === deleted) break;
      }
      // Workflow runs follow the same rule as their tasks: ended before the cutoff, they go.
      while (!stopping && (await deleteExpiredWorkflowRuns(deps.db, project.id, cutoff, taskChunk)) > 0)
        await pause();
      if (total.tasks > before) {
        total.projects += 1;
        // The project's Activity says where its old tasks went.
        const n = total.tasks - before;
        deps.bus.emit('projectChanged', { projectId: project.id });
        await recordEvent(deps.db, {
          project_id: project.id,
          user_id: null,
          object_type: 'task',
          object_id: null,
          description: `Retention deleted ${n} finished ${n === 1 ? 'task' : 'tasks'} older than ${days} days`,
        });
      }
    }
    // What the server keeps of repositories deleted since (here or by another server on the database) goes too.
    if (!stopping) {
      const swept = await sweepRepositoryCaches(deps.db, deps.config.dataDir);
      if (swept.length)
        deps.log.info({ repositories: swept }, 'retention: removed the caches of deleted repositories');
    }
    if (total.tasks > 0 || total.output > 0) {
      deps.log.info(
        { tasks: total.tasks, outputRows: total.output, projects: total.projects },
        `retention: deleted ${total.tasks} finished tasks with ${total.output} output lines in ${total.projects} projects`,
      );
    }
    return total;
  }

  function run(): Promise<RetentionResult> {
    if (running) return running;
    // A run asked for directly (tests) works without the timer; close() still cuts it short.
    if (!started) stopping = false;
    running = pass().finally(() => {
      running = null;
    });
    return running;
  }

  function arm(delay: number) {
    timer = clock.setTimer(() => {
      timer = undefined;
      if (!started) return;
      run()
        .catch((err: unknown) => deps.log.warn({ err: (err as Error).message }, 'retention: run failed'))
        .finally(() => {
          if (started) arm(interval);
        });
    }, delay);
  }

  return {
    start() {
      if (started) return;
      started = true;
      stopping = false;
      arm(firstDelay);
    },
    async close() {
      started = false;
      stopping = true;
      if (timer !== undefined) clock.clearTimer(timer);
      timer = undefined;
      await running?.catch(() => {});
    },
    run,
  } satisfies Retention;
}
