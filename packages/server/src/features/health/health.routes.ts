import { type LivenessReport, livenessReportSchema, readinessReportSchema } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps';
import { readiness } from './health.service';

/**
 * Probes for load balancers and orchestrators, public (they carry no secrets): `live` answers while the process
 * does; `ready` says whether this instance can serve (503 with the failing checks otherwise).
 */
export function healthRoutes(app: FastifyInstance, deps: Deps) {
  app.get(
    '/api/health/live',
    { config: { public: true }, schema: { response: { 200: livenessReportSchema } } },
    async (): Promise<LivenessReport> => ({ status: 'ok' }),
  );

  const ready = {
    config: { public: true },
    schema: {
      response: {
        200: readinessReportSchema.describe('Ready: every check is ok'),
        503: readinessReportSchema.describe('Not ready: the failing checks say why'),
      },
    },
  };
  app.get('/api/health/ready', ready, async (_request, reply) => {
    const report = await readiness(deps);
    return reply.status(report.status === 'ready' ? 200 : 503).send(report);
  });
}
