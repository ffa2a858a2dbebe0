/** Socket errors of a database connection that broke or could not be made. */
const socketCodes = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** PostgreSQL SQLSTATEs of a server that ended the session or does not take one now. */
const postgresStates = new Set(['57P01', '57P02', '57P03', '53300']);

/** MariaDB/MySQL server errors of the same kind (mysql2 names them). */
const mysqlCodes = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ER_CONNECTION_KILLED',
  'ER_SERVER_SHUTDOWN',
  'ER_CON_COUNT_ERROR',
]);

/** node-postgres reports a dropped or unreachable connection with these messages and no code. */
const postgresMessages = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'timeout exceeded when trying to connect',
];

/**
 * True when the error says a connection is gone or cannot be made (the server restarted, an administrator ended
 * the session, the network dropped) rather than that the statement itself was wrong: trying again on a new
 * connection may succeed. Classifies any error; see isDbUnavailable for errors that reached the application.
 */
export function isConnectionLoss(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; fatal?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (socketCodes.has(code) || mysqlCodes.has(code) || postgresStates.has(code)) return true;
  // SQLSTATE class 08: connection exception.
  if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  // mysql2 marks every error that closed the connection as fatal.
  if (e.fatal === true) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return postgresMessages.some((m) => message.startsWith(m));
}

/** Errors the database driver threw (so a refused connection to some other service is never taken for one). */
const fromDatabase = new WeakSet<object>();

/** Marks an error as thrown by the database driver (db/read-retry.ts does, for every statement and connection). */
export function markDbError(err: unknown): unknown {
  if (err && typeof err === 'object') fromDatabase.add(err);
  return err;
}

/** True for a lost or refused database connection the driver reported: see isConnectionLoss. */
export function isDbUnavailable(err: unknown): boolean {
  return !!err && typeof err === 'object' && fromDatabase.has(err) && isConnectionLoss(err);
}

/** A one-line description of a connection error for the log (no stack: one outage fails many queries). */
export function describeDbError(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return typeof e?.code === 'string' && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}
