import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The reads of an HTTP request stop when its client leaves before the answer: a list or a deep page nobody waits
 * for any more must not keep the database busy for the clients still there (a PostgreSQL scan of a million rows
 * ran on for seconds after its 50 clients had given up, and the next clients' reads queued behind it). The HTTP
 * layer runs a request's work in a `ReadScope` it ends when the client leaves; the PostgreSQL and MariaDB pools stop
 * a SELECT of that work that has not started, and cancel one that is running. Writes always run to their end: a
 * client leaving mid-change must not leave it half-made. (SQLite's statements run to their end once started.)
 */
export class ReadScope {
  /** The client has left: no read of this scope starts any more. */
  gone = false;
  private readonly cancels = new Set<() => void>();

  /** The client has left: cancels the reads running now. */
  end() {
    if (this.gone) return;
    this.gone = true;
    for (const cancel of this.cancels) cancel();
    this.cancels.clear();
  }

  /** Runs `work` (and everything it starts) with its reads in this scope. */
  run<T>(work: () => T): T {
    return scopes.run(this, work);
  }

  async watch<T>(run: () => Promise<T>, cancel: () => void): Promise<T> {
    this.cancels.add(cancel);
    try {
      return await run();
    } catch (err) {
      throw this.gone ? new ClientGone() : err;
    } finally {
      this.cancels.delete(cancel);
    }
  }
}

const scopes = new AsyncLocalStorage<ReadScope>();

/**
 * What a read of a request whose client has left throws instead of its rows. It has no stack: under overload it is
 * thrown for every read of every client that gave up, nothing logs where it came from, and Kysely's drivers append
 * their own stack to any error whose `stack` is a string (formatting two traces per stopped read).
 */
export class ClientGone extends Error {
  constructor() {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super('the client closed the connection before the answer; its database reads were stopped');
    Error.stackTraceLimit = limit;
    this.name = 'ClientGone';
    Object.defineProperty(this, 'stack', { value: undefined, writable: true, configurable: true });
  }
}

/**
 * A SELECT: every read the app makes starts so, and `with` may hide a write. A character test first, since every
 * statement of the pools passes here.
 */
export function isRead(sql: string) {
  let i = 0;
  while (sql.charCodeAt(i) <= 32) i++;
  return (sql.charCodeAt(i) | 32) === 115 && /^select\b/i.test(sql.slice(i, i + 7));
}

/**
 * Runs one statement of the pools: a SELECT of a request whose client has left is refused before it starts, and
 * `cancel` is called when the client leaves while it runs (the pool then ends that connection: a cancel sent for a
 * statement that has just finished must not reach the next statement on it).
 */
export function stoppableRead<T>(sql: string, run: () => Promise<T>, cancel: () => void): Promise<T> {
  const scope = scopes.getStore();
  if (!scope || !isRead(sql)) return run();
  if (scope.gone) return Promise.reject(new ClientGone());
  return scope.watch(run, cancel);
}
