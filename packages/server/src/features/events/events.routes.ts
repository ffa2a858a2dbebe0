import { Readable } from 'node:stream';
import {
  type EventExportFormat,
  eventSchema,
  eventsExportQuery,
  eventsQuery,
  projectEventsExportQuery,
  projectEventsQuery,
} from '@signalbox/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import { tokenProjects } from '../../access/token-limits';
import type { Deps } from '../../deps';
import { linkNextPage } from '../../http/next-page';
import type { ZodTypeProvider } from '../../http/path-params';
import { exportChunks, exportFileName, exportMediaType } from './events.export';
import { type EventFilter, type EventPage, type EventScope, eventBatches, listEvents } from './events.store';

/** GET …/events/last answers at most this many events, as the peer's "last 200". */
const LAST_EVENTS_MAX = 200;

const eventList = { 200: z.array(eventSchema) };

/**
 * A page of events; when it is full, a `Link: <…?before=ID…>; rel="next"` header names the next one (the same
 * filters, keyset cursor after the last event of this page).
 */
async function sendPage(
  deps: Pick<Deps, 'db'>,
  request: FastifyRequest,
  reply: FastifyReply,
  scope: EventScope,
  filter: EventFilter,
  page: EventPage,
) {
  const events = await listEvents(deps.db, scope, filter, page);
  const last = events[events.length - 1];
  if (last && events.length === page.limit) {
    linkNextPage(request.url, reply, last.id, page.limit);
  }
  return events;
}

/** Streams every matching event as a file: read batch by batch as the client takes it. */
function sendExport(
  deps: Pick<Deps, 'db'>,
  reply: FastifyReply,
  scope: EventScope,
  filter: EventFilter,
  format: EventExportFormat,
) {
  const projectId = 'projectId' in scope ? scope.projectId : null;
  const chunks = exportChunks(format, eventBatches(deps.db, scope, filter));
  return reply
    .type(exportMediaType(format))
    .header('content-disposition', `attachment; filename="${exportFileName(format, projectId)}"`)
    .header('cache-control', 'no-store')
    .send(Readable.from(chunks, { objectMode: false, highWaterMark: 1 }));
}

const filterOf = ({ from, to, user_id, user, object_type, q }: EventFilter): EventFilter => ({
  from,
  to,
  user_id,
  user,
  object_type,
  q,
});

export function eventsRoutes(fastify: FastifyInstance, deps: Deps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const read = { tokenScope: 'read' as const };
  const byQuery = { config: read, schema: { querystring: eventsQuery, response: eventList } };
  // Every project the caller belongs to; admins see every event, those of no project included.
  const userScope = (request: FastifyRequest): EventScope => {
    const user = currentUser(request);
    return { userId: user.id, admin: user.admin === 1, only: tokenProjects(request) };
  };
  for (const [path, max] of [
    ['/api/events', Number.POSITIVE_INFINITY],
    ['/api/events/last', LAST_EVENTS_MAX],
  ] as const) {
    app.get(path, byQuery, async (request, reply) => {
      const { limit, offset, before, project_id, ...filter } = request.query;
      const page = { limit: Math.min(limit, max), offset, before };
      return sendPage(deps, request, reply, userScope(request), { ...filterOf(filter), project_id }, page);
    });
  }
  const exported = { config: read, schema: { querystring: eventsExportQuery } };
  app.get('/api/events/export', exported, async (request, reply) => {
    const { format, project_id, ...filter } = request.query;
    return sendExport(deps, reply, userScope(request), { ...filterOf(filter), project_id }, format);
  });

  projectRoutes(app, deps, async (scope) => {
    const byProjectQuery = { schema: { querystring: projectEventsQuery, response: eventList } };
    for (const [path, max] of [
      ['/events', Number.POSITIVE_INFINITY],
      ['/events/last', LAST_EVENTS_MAX],
    ] as const) {
      scope.get(path, byProjectQuery, async (request, reply) => {
        const { limit, offset, before, ...filter } = request.query;
        const page = { limit: Math.min(limit, max), offset, before };
        return sendPage(deps, request, reply, { projectId: request.project.id }, filterOf(filter), page);
      });
    }
    scope.get(
      '/events/export',
      { schema: { querystring: projectEventsExportQuery } },
      async (request, reply) => {
        const { format, ...filter } = request.query;
        return sendExport(deps, reply, { projectId: request.project.id }, filterOf(filter), format);
      },
    );
  });
}
