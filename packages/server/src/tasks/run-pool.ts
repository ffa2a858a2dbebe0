import type { FastifyBaseLogger } from 'fastify';
import { logFailure } from '../db/retry';
import type { FinishedRun } from '../ports';
import { shutdownMessage } from './queue/instances';
import { type RunContext, type RunHandle, runTask } from './run/runner';

/**
 * The runs of this process: each launched task's handle, what follows its end (the finished-run reaction, leaving
 * the pool), the tasks being claimed on their way to become runs, and a shutdown's drain: waiting for the runs to
 * end within a grace period, then interrupting those left.
 */
export class RunPool {
  readonly runs = new Map<number, RunHandle>();
  /** Tasks being claimed by this instance (status set to starting, run not registered yet). */
  readonly claiming = new Set<number>();
  /** Each run with what follows its end. */
  private readonly finishing = new Set<Promise<void>>();
  /** The shutdown grace is over: every run, including one a claim under way starts now, is interrupted. */
  private interrupting = false;

  constructor(
    private readonly opts: {
      log: FastifyBaseLogger;
      run: RunContext;
      onRunFinished?: (run: FinishedRun) => Promise<void>;
      /** A run left the pool (its end handled): the queue may start another. */
      ended(taskId: number): void;
    },
  ) {}

  launch({ id, project_id, template_id }: { id: number; project_id: number; template_id: number }) {
    const handle = runTask(this.opts.run, id);
    handle.where = { project_id, template_id };
    this.runs.set(id, handle);
    if (this.interrupting) handle.interrupt(shutdownMessage);
    const settled: Promise<void> = handle.done
      .then((finished) => (finished ? this.opts.onRunFinished?.(finished) : undefined))
      .catch((err) => logFailure(this.opts.log, err, 'task run failed', { taskId: id }))
      .finally(() => {
        this.runs.delete(id);
        this.finishing.delete(settled);
        this.opts.ended(id);
      });
    this.finishing.add(settled);
  }

  /** Resolves once no run is left and no claim is on its way to become one. */
  async ended() {
    while (this.finishing.size || this.claiming.size) {
      if (this.finishing.size) await Promise.allSettled([...this.finishing]);
      // A claim that was under way when claiming stopped turns into a run within one status update.
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Waits up to `graceMs` for the runs to end, then interrupts those still running and waits for them. */
  async drain(graceMs: number) {
    let graceTimer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace over'>((resolve) => {
      graceTimer = setTimeout(() => resolve('grace over'), graceMs);
    });
    const outcome = await Promise.race([this.ended(), graceOver]);
    clearTimeout(graceTimer);
    if (outcome === 'grace over') {
      this.opts.log.info(
        { tasks: [...this.runs.keys()] },
        'shutdown grace is over: interrupting the tasks still running',
      );
      this.interrupting = true;
      for (const r of this.runs.values()) r.interrupt(shutdownMessage);
      await this.ended();
    }
  }

  /** What follows the runs' ends has finished (their handles have settled). */
  async settled() {
    await Promise.allSettled([...this.finishing]);
  }
}
