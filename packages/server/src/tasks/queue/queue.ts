import { logFailure } from '../../db/retry';
import { waitingTasks } from '../store';
import { claimWaiting, type QueueContext } from './claim';
import { iso } from './instances';
import { releaseQueueLease, takeQueueLease } from './instances.store';

/**
 * The queue pump: on wake() it walks the waiting tasks (again if woken meanwhile) and claims each one no limit
 * blocks for this instance, handing it to `launch`. Why a task still waits is kept in `details`.
 */
export function createQueue(ctx: QueueContext) {
  const { db, instanceId } = ctx;
  let pumping = false;
  let again = false;
  let retry: NodeJS.Timeout | null = null;
  let scheduled: NodeJS.Immediate | null = null;
  /** The pass under way (or the last one). */
  let pumped: Promise<void> = Promise.resolve();

  const retrySoon = (ms: number) => {
    retry ??= setTimeout(() => {
      retry = null;
      wake();
    }, ms);
  };

  /**
   * Looks at the queue once the work under way settles: the wakes of one stretch of work (a queued task is both
   * published, which wakes the queue, and handed over) make one pass, and one that comes during a pass makes one
   * more after it.
   */
  function wake() {
    if (!ctx.running()) return;
    if (pumping) {
      again = true;
      return;
    }
    scheduled ??= setImmediate(pump);
  }

  function pump() {
    scheduled = null;
    if (!ctx.running() || pumping) return;
    pumping = true;
    pumped = (async () => {
      try {
        do {
          again = false;
          await pass();
        } while (again && ctx.running());
      } catch (err) {
        logFailure(ctx.log, err, 'task queue pass failed');
        // Look again soon rather than at the next safety poll: the database may be back by then.
        retrySoon(1000);
      } finally {
        pumping = false;
      }
    })();
  }

  /**
   * One walk over the waiting tasks under the queue lock: one instance claims at a time, so the counts it reads
   * include every other instance's claims and the project/template limits hold across instances. On PostgreSQL
   * and MySQL the lock is the lock row, locked in a transaction held for the pass: the database frees it the
   * moment the holder's connection ends, so a crashed instance never holds up the others, and no clock is
   * involved. SQLite serves the instances of one machine (one clock) through one file: there a lease row does.
   */
  async function pass() {
    const waiting = await waitingTasks(db);
    if (!waiting.length) return;
    if (ctx.dialect === 'sqlite') {
      const t = Date.now();
      // Another instance is claiming right now: look again shortly.
      if (!(await takeQueueLease(db, instanceId, iso(t), iso(t + ctx.timings.leaseMs))))
        return retrySoon(200);
      try {
        await claimWaiting(ctx, waiting);
      } finally {
        await releaseQueueLease(db, instanceId);
      }
      return;
    }
    const held = await db.transaction().execute(async (trx) => {
      const lock = await trx
        .selectFrom('task_queue_lock')
        .select('id')
        .where('id', '=', 1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!lock) return false;
      await claimWaiting(ctx, waiting);
      return true;
    });
    // Another instance is claiming right now: look again shortly.
    if (!held) retrySoon(200);
  }

  return {
    wake,
    /** Cancels a pending pass or retry (the engine is closing). */
    close() {
      if (retry) clearTimeout(retry);
      retry = null;
      if (scheduled) clearImmediate(scheduled);
      scheduled = null;
    },
    /** Resolves once no pass is under way or about to start (tests watch the passes with it). */
    async settled() {
      while (scheduled || pumping) {
        if (pumping) await pumped;
        else await new Promise(setImmediate);
      }
    },
  };
}
