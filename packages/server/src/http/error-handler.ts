import { type CodedMessage, coded } from '@signalbox/contracts';
import type { FastifyError, FastifyInstance } from 'fastify';
import { ZodError } from 'zod';
import { ClientGone } from '../db/client-gone';
import { describeDbError, isDbUnavailable } from '../db/unavailable';
import { AppError, errorBody, fromZod } from '../lib/errors';
import { ResponseSchemaMismatch } from './openapi';

/** What a client sent that Fastify refused before any route ran, by code. */
function fastifyError(err: FastifyError): CodedMessage {
  const code = err.code;
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.name === 'SyntaxError') return coded('body_not_json');
  if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return coded('body_empty');
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return coded('body_too_large');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return coded('unsupported_content_type');
  return coded('request_failed');
}

/** Maps every thrown error to {"error": …, "code": …}; 5xx never leaks internals. */
export function registerErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError | AppError | ZodError, request, reply) => {
    if (err instanceof ZodError) err = fromZod(err);
    if (err instanceof AppError) {
      return reply.status(err.statusCode).send({
        ...errorBody(err),
        ...(err.fieldErrors ? { fields: err.fields, field_errors: err.fieldErrors } : {}),
        ...(err.body ?? {}),
      });
    }
    const status = (err as FastifyError).statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const error = fastifyError(err as FastifyError);
      // A refusal the server has no wording for keeps Fastify's own text, for the caller to read.
      const body = errorBody(error);
      return reply
        .status(status)
        .send(error.code === 'request_failed' ? { ...body, error: (err as Error).message } : body);
    }
    if (err instanceof ClientGone) {
      // No one is there to read an answer: the socket is closed, and nothing went wrong on this side.
      request.log.info('client closed the connection; its database reads were stopped');
      reply.hijack();
      reply.raw.destroy();
      return;
    }
    if (isDbUnavailable(err)) {
      // An outage fails many requests at once: one line each, no stack.
      request.log.warn({ reason: describeDbError(err) }, 'request failed: database unavailable');
      return reply.status(503).send(errorBody(coded('database_unavailable')));
    }
    request.log.error({ err }, 'request failed');
    // Responses are checked only under test (buildApp's checkResponses): the test shows which field drifted.
    if (err instanceof ResponseSchemaMismatch)
      return reply.status(500).send({ ...errorBody(coded('internal')), error: err.message });
    return reply.status(500).send(errorBody(coded('internal')));
  });
}
