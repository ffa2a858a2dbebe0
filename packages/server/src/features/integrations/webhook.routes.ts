import { coded } from '@signalbox/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps';
import { noContentResponse } from '../../http/path-params';
import { errorBody } from '../../lib/errors';
import { WebhookRequest } from './webhook.match';
import { handleWebhook, type WebhookOutcome } from './webhook.service';

/** GitHub sends up to 25 MB; anything larger is answered 413 by Fastify before it reaches the handler. */
export const WEBHOOK_BODY_LIMIT = 25 * 1024 * 1024;

/** The metric label of a webhook request: started a task, accepted without one, or refused. */
const deliveryResult = (outcome: WebhookOutcome) =>
  outcome.status === 404
    ? 'not_found'
    : outcome.status === 401
      ? 'unauthorized'
      : outcome.started.length > 0
        ? 'started'
        : 'ignored';

/**
 * `GET|POST /api/integrations/{alias}`, reachable without signing in. Signatures are computed over the exact
 * bytes sent, so this route keeps the raw body: its own scope replaces every body parser with one that hands
 * over the buffer untouched (JSON parsing of every other route is unaffected).
 */
const aliasParams = z.object({ alias: z.string() });

export function webhookRoutes(app: FastifyInstance, deps: Deps) {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT },
      (_request, body, done) => done(null, body),
    );
    const handler = async (request: FastifyRequest<{ Params: { alias: string } }>, reply: FastifyReply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const { alias } = request.params;
      const outcome = await handleWebhook(deps, alias, new WebhookRequest(request.headers, raw));
      deps.metrics.webhookDeliveries.inc({ result: deliveryResult(outcome) });
      if (outcome.status === 404) return reply.status(404).send(errorBody(coded('webhook_not_found')));
      if (outcome.status === 401) return reply.status(401).send(errorBody(coded('webhook_unauthorized')));
      return reply.status(204).send();
    };
    scope.route({
      method: ['GET', 'POST'],
      url: '/api/integrations/:alias',
      config: { public: true },
      // Every request the alias accepts is answered 204, whether or not it started a task.
      schema: { params: aliasParams, response: noContentResponse },
      bodyLimit: WEBHOOK_BODY_LIMIT,
      handler,
    });
  });
}
