import type { FastifyInstance } from 'fastify';
import { sendTestAlert } from '../../alerts/alerts';
import type { Deps } from '../../deps';
import { noContentResponse } from '../../http/path-params';
import { conflict } from '../../lib/errors';
import { currentUser } from '../auth/auth.hook';
import { projectRoutes } from '../projects/projects.guard';

/** POST /api/project/{id}/notifications/test: a test alert through every enabled channel (204; 409 when alerts are off). */
export function alertsRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.post(
      '/notifications/test',
      { config: { permission: 'updateProject' }, schema: { response: noContentResponse } },
      async (request, reply) => {
        if (request.project.alert !== 1) throw conflict('Alerts are disabled for this project');
        const user = currentUser(request);
        await sendTestAlert(deps, request.project, user.name || user.username);
        return reply.status(204).send();
      },
    );
  });
}
