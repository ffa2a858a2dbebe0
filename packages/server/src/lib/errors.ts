import {
  type CodedMessage,
  describeMessage,
  ErrorCode,
  type ErrorParams,
  findNulCharacter,
  messages,
} from '@signalbox/contracts';
import type { ZodError, ZodType, z } from 'zod';

/** The code of a message a status has when the message has none of its own. */
const codeOfStatus: Record<number, ErrorCode> = {
  400: ErrorCode.badRequest,
  401: ErrorCode.unauthorized,
  403: ErrorCode.forbidden,
  404: ErrorCode.notFound,
  409: ErrorCode.conflict,
};

/** The stable code of a message: the one the contracts recorded for it, else the status's own. */
export function codeOf(status: number, message: string): CodedMessage {
  return (
    describeMessage(message) ?? {
      code: codeOfStatus[status] ?? (status >= 500 ? ErrorCode.internal : ErrorCode.requestFailed),
    }
  );
}

/** The code of each field message; a field message the contracts did not record is an invalid value. */
export function fieldCodes(fields: Record<string, string>): Record<string, CodedMessage> {
  return Object.fromEntries(
    Object.entries(fields).map(([field, message]) => [
      field,
      describeMessage(message) ?? { code: ErrorCode.invalidValue },
    ]),
  );
}

/**
 * The one error type services throw: a status, a message a user understands, optional per-field messages. The
 * stable `code` (and the values the message embeds) is found from the message, so throwing a contract message is
 * enough.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly params?: ErrorParams;
  constructor(
    readonly statusCode: number,
    message: string,
    readonly fields?: Record<string, string>,
    readonly body?: Record<string, unknown>,
  ) {
    super(message);
    const described = describeMessage(message);
    // A refused field whose message has no code of its own: the request named an invalid value.
    const fallback =
      fields && statusCode === 400 ? { code: ErrorCode.invalidValue } : codeOf(statusCode, message);
    ({ code: this.code, params: this.params } = described ?? fallback);
  }
}

export const badRequest = (message: string, fields?: Record<string, string>) =>
  new AppError(400, message, fields);
export const unauthorized = (message: string = messages.notSignedIn) => new AppError(401, message);
export const forbidden = (message: string = messages.noPermission) => new AppError(403, message);
export const notFound = (what: string) => new AppError(404, messages.notFound(what));
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
  if (first && first.path.length === 0 && first.code === 'invalid_type') message = messages.bodyNotObject;
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
