import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps';
import { parse } from '../../lib/errors';
import { currentUser } from '../auth/auth.hook';
import { projectRoutes } from '../projects/projects.guard';
import { listProjectEvents, listUserEvents } from './events.store';

const limitQuery = z.object({
  limit: z.coerce
    .number({ error: 'limit must be a number' })
    .int('limit must be an integer')
    .min(1)
    .max(1000)
    .default(200),
});

export function eventsRoutes(app: FastifyInstance, deps: Deps) {
  const handler = (all: boolean) => async (request: FastifyRequest) => {
    const { limit } = parse(limitQuery, request.query);
    const user = currentUser(request);
    return listUserEvents(deps.db, user.id, user.admin === 1, all ? limit : Math.min(limit, 200));
  };
  app.get('/api/events', handler(true));
  app.get('/api/events/last', handler(false));
  projectRoutes(app, deps, async (scope) => {
    scope.get('/events', async (request) =>
      listProjectEvents(deps.db, request.project.id, parse(limitQuery, request.query).limit),
    );
    scope.get('/events/last', async (request) =>
      listProjectEvents(deps.db, request.project.id, Math.min(parse(limitQuery, request.query).limit, 200)),
    );
  });
}
