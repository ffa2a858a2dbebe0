import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The reads of an HTTP request stop when its client leaves before the answer: a list or a deep page nobody waits
 * for any more must not keep the database busy for the clients still there (a PostgreSQL scan of a million rows
 * ran on for seconds after its 50 clients had given up, and the next clients' reads queued behind it). The HTTP
 * layer runs a request's work with its signal (`readsFor`); the pools stop a SELECT of that work that has not
 * started, and cancel one that is running. Writes always run to their end: a client leaving mid-change must not
 * leave it half-made.
 */
const scope = new AsyncLocalStorage<AbortSignal>();

/** Runs `work` (and everything it starts) with the reads it makes stopped when `signal` aborts. */
export function readsFor<T>(signal: AbortSignal, work: () => T): T {
  return scope.run(signal, work);
}

/** What a read of a request whose client has left throws instead of its rows. */
export class ClientGone extends Error {
  constructor() {
    super('the client closed the connection before the answer; its database reads were stopped');
    this.name = 'ClientGone';
  }
}

const isRead = (sql: string) => /^\s*select\b/i.test(sql);

/**
 * Runs one statement of the pools: a SELECT of a request whose client has left is refused before it starts, and
 * `cancel` is called when the client leaves while it runs (the pool then ends that connection: a cancel sent for a
 * statement that has just finished must not reach the next statement on it).
 */
export async function stoppableRead<T>(sql: string, run: () => Promise<T>, cancel: () => void): Promise<T> {
  const signal = isRead(sql) ? scope.getStore() : undefined;
  if (!signal) return run();
  if (signal.aborted) throw new ClientGone();
  signal.addEventListener('abort', cancel, { once: true });
  try {
    return await run();
  } catch (err) {
    throw signal.aborted ? new ClientGone() : err;
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/** The synchronous form for SQLite, whose statements cannot be interrupted: refused before they start. */
export function checkReadWanted(sql: string) {
  if (isRead(sql) && scope.getStore()?.aborted) throw new ClientGone();
}
