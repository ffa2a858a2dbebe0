import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';
import { isRead } from './client-gone';
import { isDbUnavailable, markDbError } from './unavailable';

/** The driver's errors are marked as the database's (see isDbUnavailable). */
const marked = <T>(work: Promise<T>) => work.catch((err: unknown) => Promise.reject(markDbError(err)));

/**
 * Wraps a dialect so that a read (a `select`) that fails because its connection was lost runs again on a new
 * connection when it was the first statement on that connection — a lone query, never one inside a transaction or
 * after other statements on a pinned connection, whose session state a new connection would not have — so a
 * request that reads while the database restarts or ends its sessions still answers. Writes are never repeated
 * here (a write whose answer was lost may have been applied): their error reaches the caller.
 */
export function retryReads(dialect: Dialect, poolSize: number): Dialect {
  // An outage can leave every pooled connection dead, and the pool finds out one use at a time; each failed use
  // drops one, so after poolSize of them the next is a new connection. One that cannot be opened fails at once.
  const attempts = poolSize + 1;
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => new ReadRetryingDriver(dialect.createDriver(), attempts),
  };
}

class RetryingConnection implements DatabaseConnection {
  /** No statement ran on this checkout yet (a transaction's `begin` counts). */
  fresh = true;
  /** Null after a lost connection went back to the pool and no new one could be had. */
  current: DatabaseConnection | null;

  constructor(
    private readonly driver: Driver,
    connection: DatabaseConnection,
    private readonly attempts: number,
  ) {
    this.current = connection;
  }

  connection(): DatabaseConnection {
    if (!this.current)
      throw markDbError(
        Object.assign(new Error('The database connection was lost'), { code: 'ECONNABORTED' }),
      );
    return this.current;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const repeatable = this.fresh && isRead(query.sql);
    this.fresh = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.connection().executeQuery<R>(query);
      } catch (err) {
        markDbError(err);
        if (!repeatable || attempt >= this.attempts || !isDbUnavailable(err)) throw err;
        // Hand the lost connection back first (the pool closes it and frees its slot), then take another.
        const lost = this.connection();
        this.current = null;
        await this.driver.releaseConnection(lost);
        this.current = await marked(this.driver.acquireConnection());
      }
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    this.fresh = false;
    return this.connection().streamQuery<R>(query, chunkSize);
  }
}

class ReadRetryingDriver implements Driver {
  constructor(
    private readonly driver: Driver,
    private readonly attempts: number,
  ) {}

  init() {
    return this.driver.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await marked(this.driver.acquireConnection());
    return new RetryingConnection(this.driver, connection, this.attempts);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    const c = connection as RetryingConnection;
    c.fresh = false;
    await marked(this.driver.beginTransaction(c.connection(), settings));
  }

  async commitTransaction(connection: DatabaseConnection) {
    await marked(this.driver.commitTransaction((connection as RetryingConnection).connection()));
  }

  async rollbackTransaction(connection: DatabaseConnection) {
    await marked(this.driver.rollbackTransaction((connection as RetryingConnection).connection()));
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    await marked(this.nested('savepoint')((connection as RetryingConnection).connection(), name, compile));
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ) {
    await marked(
      this.nested('rollbackToSavepoint')((connection as RetryingConnection).connection(), name, compile),
    );
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ) {
    await marked(
      this.nested('releaseSavepoint')((connection as RetryingConnection).connection(), name, compile),
    );
  }

  private nested(method: 'savepoint' | 'rollbackToSavepoint' | 'releaseSavepoint') {
    const fn = this.driver[method];
    if (!fn) throw new Error(`The database driver has no ${method}`);
    return fn.bind(this.driver);
  }

  async releaseConnection(connection: DatabaseConnection) {
    const c = connection as RetryingConnection;
    if (c.current) await this.driver.releaseConnection(c.current);
    c.current = null;
  }

  destroy() {
    return this.driver.destroy();
  }
}
