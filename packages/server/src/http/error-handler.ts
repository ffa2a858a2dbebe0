import type { FastifyError, FastifyInstance } from 'fastify';
import { ZodError } from 'zod';
import { describeDbError, isDbUnavailable } from '../db/unavailable';
import { AppError, fromZod } from '../lib/errors';

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
