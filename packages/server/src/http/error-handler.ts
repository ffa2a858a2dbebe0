import { type CodedMessage, messages } from '@signalbox/contracts';
import type { FastifyError, FastifyInstance } from 'fastify';
import { ZodError } from 'zod';
import { describeDbError, isDbUnavailable } from '../db/unavailable';
import { AppError, codeOf, fieldCodes, fromZod } from '../lib/errors';
import { ResponseSchemaMismatch } from './openapi';

/** The English message and its stable code, as every error response starts. */
const errorBody = (message: string, coded: CodedMessage) => ({
  error: message,
  code: coded.code,
  ...(coded.params ? { params: coded.params } : {}),
});

/** What a client sent that Fastify refused before any route ran, as a message the caller understands. */
function fastifyMessage(err: FastifyError): string {
  const code = err.code;
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.name === 'SyntaxError') return messages.bodyNotJson;
  if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return messages.bodyEmpty;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return messages.bodyTooLarge;
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return messages.unsupportedContentType;
  return err.message;
}

/** Maps every thrown error to {"error": …, "code": …}; 5xx never leaks internals. */
export function registerErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError | AppError | ZodError, request, reply) => {
    if (err instanceof ZodError) err = fromZod(err);
    if (err instanceof AppError) {
      return reply.status(err.statusCode).send({
        ...errorBody(err.message, err),
        ...(err.fields ? { fields: err.fields, field_errors: fieldCodes(err.fields) } : {}),
        ...(err.body ?? {}),
      });
    }
    const status = (err as FastifyError).statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const message = fastifyMessage(err as FastifyError);
      return reply.status(status).send(errorBody(message, codeOf(status, message)));
    }
    if (isDbUnavailable(err)) {
      // An outage fails many requests at once: one line each, no stack.
      request.log.warn({ reason: describeDbError(err) }, 'request failed: database unavailable');
      return reply
        .status(503)
        .send(errorBody(messages.databaseUnavailable, codeOf(503, messages.databaseUnavailable)));
    }
    request.log.error({ err }, 'request failed');
    // Responses are checked only under test (buildApp's checkResponses): the test shows which field drifted.
    if (err instanceof ResponseSchemaMismatch)
      return reply.status(500).send(errorBody(err.message, codeOf(500, messages.internal)));
    return reply.status(500).send(errorBody(messages.internal, codeOf(500, messages.internal)));
  });
}
