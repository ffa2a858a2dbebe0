import { eventSchema } from '@signalbox/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps';
import type { ZodTypeProvider } from '../../http/path-params';
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

const byLimit = { schema: { querystring: limitQuery, response: { 200: z.array(eventSchema) } } };

export function eventsRoutes(fastify: FastifyInstance, deps: Deps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const handler =
    (all: boolean) => async (request: FastifyRequest<{ Querystring: z.output<typeof limitQuery> }>) => {
      const { limit } = request.query;
      const user = currentUser(request);
      return listUserEvents(deps.db, user.id, user.admin === 1, all ? limit : Math.min(limit, 200));
    };
  app.get('/api/events', byLimit, handler(true));
  app.get('/api/events/last', byLimit, handler(false));

  projectRoutes(app, deps, async (scope) => {
    scope.get('/events', byLimit, async (request) =>
      listProjectEvents(deps.db, request.project.id, request.query.limit),
    );
    scope.get('/events/last', byLimit, async (request) =>
      listProjectEvents(deps.db, request.project.id, Math.min(request.query.limit, 200)),
    );
  });
}
