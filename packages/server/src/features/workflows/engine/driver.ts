import type { Deps } from '../../../deps';
import { activeRunIds } from '../runs.store';
import { advanceRun } from './advance';

export type WorkflowDriver = {
  /** Starts the sweep: at once (resuming runs a previous process left), then every `intervalMs`. */
  start(): void;
  /** Moves the run of a task that just ended on (nothing when the task belongs to no run). */
  taskFinished(taskId: number): Promise<void>;
  close(): Promise<void>;
};

/**
 * Keeps runs moving: each finished task advances its run at once, and a sweep every `intervalMs` advances every
 * active run — delays and approval timeouts that came due, tasks other instances ran, and on start the runs a
 * killed process left. Advancing is made of claims (see advanceRun), so every instance may sweep every run.
 */
export function createWorkflowDriver(deps: Deps, options: { intervalMs?: number } = {}): WorkflowDriver {
  const intervalMs = options.intervalMs ?? 1000;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  let sweeping: Promise<void> | null = null;
  /** Runs being advanced here, and whether another advance was asked for meanwhile. */
  const busy = new Map<number, boolean>();

  async function advance(runId: number) {
    if (busy.has(runId)) {
      busy.set(runId, true);
      return;
    }
    busy.set(runId, false);
    try {
      do {
        busy.set(runId, false);
        await advanceRun(deps, runId);
      } while (busy.get(runId) && !closed);
    } catch (err) {
      deps.log.warn({ err, runId }, 'advancing a workflow run failed; the next sweep tries again');
    } finally {
      busy.delete(runId);
    }
  }

  async function sweep() {
    try {
      for (const id of await activeRunIds(deps.db)) {
        if (closed) return;
        await advance(id);
      }
    } catch (err) {
      deps.log.warn({ err }, 'the workflow sweep failed; it runs again shortly');
    }
  }

  const tick = () => {
    if (closed || sweeping) return;
    sweeping = sweep().finally(() => {
      sweeping = null;
    });
  };

  return {
    start() {
      deps.metrics.watchWorkflowRuns(async () => {
        const rows = await deps.db
          .selectFrom('workflow_run')
          .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
          .groupBy('status')
          .execute();
        return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
      });
      tick();
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    async taskFinished(taskId) {
      const task = await deps.db
        .selectFrom('task')
        .select('workflow_run_id')
        .where('id', '=', taskId)
        .executeTakeFirst();
      if (task?.workflow_run_id) await advance(task.workflow_run_id);
    },
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      await sweeping;
    },
  };
}
