import { findNulCharacter, messages } from '@signalbox/contracts';
import type { FastifyError, FastifyInstance } from 'fastify';
import { ZodError, type ZodType, type z } from 'zod';
import { describeDbError, isDbUnavailable } from '../db/unavailable';

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

function fromZod(error: ZodError): AppError {
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

/** Maps every thrown error to {"error": …}; 5xx never leaks internals. */
export function registerErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError | AppError | ZodError, request, reply) => {
    if (err instanceof ZodError) err = fromZod(err);
    if (err instanceof AppError) {
      return reply
        .status(err.statusCode)
        .send({ error: err.message, ...(err.fields ? { fields: err.fields } : {}), ...(err.body ?? {}) });
    }
    const status = (err as FastifyError).statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const code = (err as FastifyError).code;
      let message = err.message;
      if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.name === 'SyntaxError')
        message = 'Request body is not valid JSON';
      else if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY') message = 'Request body is empty';
      else if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') message = 'Request body is too large';
      else if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') message = 'Unsupported content type';
      return reply.status(status).send({ error: message });
    }
    if (isDbUnavailable(err)) {
      // An outage fails many requests at once: one line each, no stack.
      request.log.warn({ reason: describeDbError(err) }, 'request failed: database unavailable');
      return reply.status(503).send({ error: 'Database unavailable, try again' });
    }
    request.log.error({ err }, 'request failed');
    return reply.status(500).send({ error: 'Internal server error' });
  });
}
