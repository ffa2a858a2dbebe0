import type { LivenessReport } from '@signalbox/contracts';
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
    { config: { public: true } },
    async (): Promise<LivenessReport> => ({ status: 'ok' }),
  );

  app.get('/api/health/ready', { config: { public: true } }, async (_request, reply) => {
    const report = await readiness(deps);
    return reply.status(report.status === 'ready' ? 200 : 503).send(report);
  });
}
