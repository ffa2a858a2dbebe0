import { coded } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config';
import { safeEqual } from '../lib/crypto';
import { unauthorized } from '../lib/errors';
import type { Metrics } from '../metrics/metrics';

/**
 * Times every request into the HTTP histogram (by route pattern, never the raw URL) and serves
 * `GET /api/metrics` in Prometheus' text format. With SIGNALBOX_METRICS_TOKEN set the scrape must carry
 * `Authorization: Bearer <token>`; without it the endpoint is open (operators firewall it). Registered on the
 * root instance before the routes, so its hook covers all of them.
 */
export function registerMetrics(
  app: FastifyInstance,
  deps: { config: Pick<Config, 'metricsToken'>; metrics: Metrics },
) {
  const { metrics } = deps;
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpDuration.observe(
      {
        method: request.method,
        // Requests no route matched (404s, bad URLs) share one label: their paths are whatever the caller sent.
        route: request.routeOptions.url ?? 'unmatched',
        status_code: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
    done();
  });

  app.get('/api/metrics', { config: { public: true } }, async (request, reply) => {
    const token = deps.config.metricsToken;
    if (token) {
      const given = /^bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
      if (!safeEqual(given, token)) throw unauthorized(coded('metrics_token_required'));
    }
    return reply.header('content-type', metrics.contentType).send(await metrics.exposition());
  });
}
