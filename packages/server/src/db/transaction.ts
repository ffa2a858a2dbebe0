import type { Transaction } from 'kysely';
import type { Db } from '.';
import type { Database } from './tables';

/** Registers work to run once the transaction has committed; dropped when it rolls back. */
export type OnCommit = (fn: () => void) => void;

/** The hook registrar of each transaction `transaction()` is running, so helpers handed only `trx` find it. */
const pendingHooks = new WeakMap<object, OnCommit>();

/**
 * Runs `fn` once what `db` wrote is committed: at once for a plain handle, after the commit for a transaction begun
 * with `transaction()` (never, when it rolls back). For helpers that take any handle, such as recordEvent.
 */
export function afterCommit(db: Db, fn: () => void) {
  const onCommit = pendingHooks.get(db);
  if (onCommit) onCommit(fn);
  else fn();
}

/**
 * Runs `work` in one transaction. Side effects that others observe (bus events, alerts) go through `onCommit`:
 * they run after the commit, in the order registered, and never for a transaction that rolled back, so no
 * listener hears of a change that is not in the database (or reads the database before the change is there).
 * A hook that throws does not undo the commit or stop the hooks after it; the first such error is thrown once
 * they have all run.
 */
export async function transaction<T>(
  db: Db,
  work: (trx: Transaction<Database>, onCommit: OnCommit) => Promise<T>,
): Promise<T> {
  const hooks: (() => void)[] = [];
  const result = await db.transaction().execute((trx) => {
    const onCommit: OnCommit = (fn) => void hooks.push(fn);
    pendingHooks.set(trx, onCommit);
    return work(trx, onCommit);
  });
  let failure: { error: unknown } | undefined;
  for (const hook of hooks) {
    try {
      hook();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
  return result;
}
