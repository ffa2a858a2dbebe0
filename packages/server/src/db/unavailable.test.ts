import { describe, expect, it } from 'vitest';
import { isConnectionLoss, isDbUnavailable, markDbError } from './unavailable';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('database unavailability', () => {
  it('recognises lost and refused connections of both drivers', () => {
    for (const err of [
      withCode('ECONNREFUSED'),
      withCode('ECONNRESET'),
      withCode('57P01', 'terminating connection due to administrator command'),
      withCode('08006'),
      withCode('PROTOCOL_CONNECTION_LOST'),
      Object.assign(new Error("Can't add new command when connection is in closed state"), { fatal: true }),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
    ])
      expect(isConnectionLoss(err), String(err)).toBe(true);
  });

  it('does not take a wrong statement for an outage', () => {
    for (const err of [
      withCode('23505', 'duplicate key value violates unique constraint'),
      withCode('42P01', 'relation "nope" does not exist'),
      withCode('ER_DUP_ENTRY'),
      new Error('Client was closed and is not queryable'),
      'ECONNREFUSED',
      null,
    ])
      expect(isConnectionLoss(err), String(err)).toBe(false);
  });

  it('counts only errors the database driver threw, not a refused connection to another service', () => {
    const webhook = withCode('ECONNREFUSED');
    expect(isDbUnavailable(webhook)).toBe(false);
    const database = markDbError(withCode('ECONNREFUSED'));
    expect(isDbUnavailable(database)).toBe(true);
    expect(isDbUnavailable(markDbError(withCode('23505')))).toBe(false);
  });
});
