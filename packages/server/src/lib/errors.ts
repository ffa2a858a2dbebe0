import { findNulCharacter, messages } from '@signalbox/contracts';
import type { ZodError, ZodType, z } from 'zod';

/** The one error type services throw: a status, a message a user understands, optional per-field messages. */
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly fields?: Record<string, string>,
    readonly body?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const badRequest = (message: string, fields?: Record<string, string>) =>
  new AppError(400, message, fields);
export const unauthorized = (message = 'Not signed in') => new AppError(401, message);
export const forbidden = (message = 'You do not have permission to do this') => new AppError(403, message);
export const notFound = (what: string) => new AppError(404, `${what} not found`);
export const conflict = (message: string, body?: Record<string, unknown>) =>
  new AppError(409, message, undefined, body);

export function fromZod(error: ZodError): AppError {
  const fields: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = issue.path.join('.') || '_';
    if (!(key in fields)) fields[key] = issue.message;
  }
  const first = error.issues[0];
  let message = first?.message ?? 'Invalid request';
  // Zod's own wording for an absent object body is not helpful to a caller.
  if (first && first.path.length === 0 && first.code === 'invalid_type')
    message = 'Request body must be a JSON object';
  return new AppError(400, message, fields);
}

/**
 * Refuses a value holding U+0000 anywhere (strings and object keys, at any depth) with a 400 naming the field;
 * `label` names the value itself when the NUL is in a bare string.
 */
export function rejectNul(input: unknown, label = 'Request body') {
  const path = findNulCharacter(input);
  if (!path) return;
  // A NUL in a key is shown as \0, never sent back as the character itself.
  const field = path.length ? path.join('.').replaceAll('\0', '\\0') : label;
  const message = messages.noNul(field);
  throw new AppError(400, message, { [path.length ? field : '_']: message });
}

/** Parses input with a contract schema; a failure becomes a 400 naming the field. */
export function parse<T extends ZodType>(schema: T, input: unknown): z.output<T> {
  rejectNul(input, 'Value');
  const result = schema.safeParse(input);
  if (!result.success) throw fromZod(result.error);
  return result.data;
}

/** A row that must exist, read back after a write or looked up again: one deleted in between is a 404 naming it. */
export function found<T>(row: T | null | undefined, what: string): T {
  if (row == null) throw notFound(what);
  return row;
}
