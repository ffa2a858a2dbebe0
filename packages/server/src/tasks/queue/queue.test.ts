import type { Compilable, CompiledQuery, Kysely, QueryId } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { migratedDb } from '../../../test/support/migrated-db';
import type { Database, DbHandle } from '../../db';
import { runnerTimings } from './instances';
import { createQueue } from './queue';

/** Counts the statements that read the waiting tasks: one per pass of the queue. */
class PassCounter {
  passes = 0;
  /** While set, a pass waits for it after reading the waiting tasks (a slow database). */
  hold: Promise<void> | null = null;

  /** `db` with its statements watched: every statement a pass runs goes through executeQuery, built or kept. */
  watch(db: Kysely<Database>): Kysely<Database> {
    return new Proxy(db, {
      get: (target, property) => {
        if (property === 'executeQuery')
          return async (query: CompiledQuery | Compilable, queryId?: QueryId) => {
            const compiled = 'compile' in query ? query.compile() : query;
            const result = await target.executeQuery(compiled, queryId);
            if (/^select /i.test(compiled.sql) && compiled.parameters.includes('waiting')) {
              this.passes += 1;
              await this.hold;
            }
            return result;
          };
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
}

/** Waits (event-loop turns, not time) until `done()` holds. */
async function until(done: () => boolean) {
  while (!done()) await new Promise(setImmediate);
}

describe.each(testDialects())('the task queue on $name', (dialect) => {
  let handle: DbHandle;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ handle, close } = await migratedDb(dialect, 'queue-passes'));
  });
  afterAll(async () => close?.());

  function queue(counter: PassCounter, running = () => true) {
    return createQueue({
      db: counter.watch(handle.db),
      dialect: handle.dialect,
      log: pino({ level: 'silent' }),
      maxParallelTasks: 1,
      instanceId: 'queue-test',
      timings: runnerTimings,
      runs: new Map(),
      claiming: new Set(),
      details: new Map(),
      status: { setStatus: async () => true, publishTask: () => {} },
      launch: () => {},
      remote: { useRemoteRunner: false, slots: async () => [], launch: () => {} },
      running,
    });
  }

  it('makes one pass for the wakes of one stretch of work', async () => {
    const counter = new PassCounter();
    const q = queue(counter);
    // A queued task is published (the bus wakes the queue) and handed over (a second wake) in one go.
    q.wake();
    q.wake();
    q.wake();
    await q.settled();
    expect(counter.passes).toBe(1);
  });

  it('makes one more pass after the one under way when woken during it', async () => {
    const counter = new PassCounter();
    const q = queue(counter);
    let answer = () => {};
    counter.hold = new Promise((resolve) => {
      answer = resolve;
    });
    q.wake();
    await until(() => counter.passes === 1);
    // The pass has started and waits for the database: the wakes now ask for one more pass, not one each.
    q.wake();
    q.wake();
    counter.hold = null;
    answer();
    await q.settled();
    expect(counter.passes).toBe(2);
  });

  it('makes no pass once closed, nor while the engine is not running', async () => {
    const counter = new PassCounter();
    const q = queue(counter);
    q.wake();
    q.close();
    await q.settled();
    const stopped = queue(counter, () => false);
    stopped.wake();
    await stopped.settled();
    expect(counter.passes).toBe(0);
  });
});
