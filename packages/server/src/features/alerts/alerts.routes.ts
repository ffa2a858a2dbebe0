import { coded } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import { sendTestAlert } from '../../alerts/alerts';
import type { Deps } from '../../deps';
import { noContentResponse } from '../../http/path-params';
import { AppError, conflict } from '../../lib/errors';

/** How often one user may send a project's test alert. */
export const TEST_ALERT_INTERVAL_MS = 30_000;

/**
 * POST /api/project/{id}/notifications/test: a test alert through every enabled channel (204; 409 when alerts are
 * off; 429 when the caller sent one for the project within TEST_ALERT_INTERVAL_MS, so it cannot spam the channels).
 */
export function alertsRoutes(app: FastifyInstance, deps: Deps) {
  /** When each user last sent each project's test alert (`project:user`), pruned as entries expire. */
  const lastSent = new Map<string, number>();
  projectRoutes(app, deps, async (scope) => {
    scope.post(
      '/notifications/test',
      { config: { permission: 'updateProject' }, schema: { response: noContentResponse } },
      async (request, reply) => {
        if (request.project.alert !== 1) throw conflict(coded('alerts_disabled'));
        const user = currentUser(request);
        const now = Date.now();
        for (const [k, at] of lastSent) if (now - at >= TEST_ALERT_INTERVAL_MS) lastSent.delete(k);
        const key = `${request.project.id}:${user.id}`;
        const previous = lastSent.get(key);
        if (previous !== undefined) {
          const wait = Math.ceil((TEST_ALERT_INTERVAL_MS - (now - previous)) / 1000);
          reply.header('retry-after', String(wait));
          throw new AppError(
            429,
            coded('test_alert_too_soon', { interval: TEST_ALERT_INTERVAL_MS / 1000, seconds: wait }),
          );
        }
        lastSent.set(key, now);
        await sendTestAlert(deps, request.project, user.name || user.username);
        return reply.status(204).send();
      },
    );
  });
}
