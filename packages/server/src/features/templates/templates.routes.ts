import { scheduleSchema, type Template, templateInput, templateSchema } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import { findRefs } from '../../access/refs.store';
import type { Deps } from '../../deps';
import { preSerialized } from '../../http/openapi';
import { noContentResponse, pathIds } from '../../http/path-params';
import { refsRoute } from '../../http/refs-route';
import { listSchedules } from '../schedules';
import {
  changeTemplate,
  createTemplate,
  getTemplate,
  removeTemplate,
  templateSorts,
} from './templates.service';
import { templatesListJson } from './templates-list';

const manage = { config: { permission: 'manageProjectResources' as const } };
const byId = { schema: { params: pathIds('id') } };

const listQuery = z.object({
  sort: z.enum(templateSorts).optional(),
  order: z.enum(['asc', 'desc']).optional(),
});

export function templatesRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.get(
      '/templates',
      {
        config: { sharedAnswer: true },
        schema: { querystring: listQuery, response: { 200: z.array(templateSchema) } },
      },
      async (request) =>
        preSerialized<Template[]>(await templatesListJson(deps.db, request.project.id, request.query)),
    );

    scope.get(
      '/templates/:id',
      { schema: { ...byId.schema, response: { 200: templateSchema } } },
      async (request) => getTemplate(deps.db, request.project.id, request.params.id),
    );

    scope.get('/templates/:id/refs', refsRoute, async (request) => {
      const { id } = request.params;
      await getTemplate(deps.db, request.project.id, id);
      return findRefs(deps.db, request.project.id, 'template', id);
    });

    scope.get(
      '/templates/:id/schedules',
      { schema: { ...byId.schema, response: { 200: z.array(scheduleSchema) } } },
      async (request) => {
        const { id } = request.params;
        await getTemplate(deps.db, request.project.id, id);
        return listSchedules(deps.db, request.project.id, id);
      },
    );

    scope.post(
      '/templates',
      { ...manage, schema: { body: templateInput, response: { 201: templateSchema } } },
      async (request, reply) => {
        const input = request.body;
        const template = await createTemplate(deps, currentUser(request), request.project.id, input);
        return reply.status(201).send(template);
      },
    );

    scope.put(
      '/templates/:id',
      { ...manage, schema: { ...byId.schema, body: templateInput, response: noContentResponse } },
      async (request, reply) => {
        const { id } = request.params;
        const input = request.body;
        await changeTemplate(deps, currentUser(request), request.project.id, id, input);
        return reply.status(204).send();
      },
    );

    scope.delete(
      '/templates/:id',
      { ...manage, schema: { ...byId.schema, response: noContentResponse } },
      async (request, reply) => {
        await removeTemplate(deps, currentUser(request), request.project.id, request.params.id);
        return reply.status(204).send();
      },
    );
  });
}
