import {
  type Template,
  templateSchema,
  viewInput,
  viewPositionsInput,
  viewSchema,
} from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { preSerialized } from '../../http/openapi';
import { noContentResponse, pathIds } from '../../http/path-params';
import { templatesListJson } from '../templates';
import { changeView, createView, getView, removeView, reorderViews } from './views.service';
import { listViews } from './views.store';

const manage = { config: { permission: 'manageProjectResources' as const } };
const byId = { schema: { params: pathIds('id') } };

export function viewsRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.get('/views', { schema: { response: { 200: z.array(viewSchema) } } }, async (request) =>
      listViews(deps.db, request.project.id),
    );

    scope.get('/views/:id', { schema: { ...byId.schema, response: { 200: viewSchema } } }, async (request) =>
      getView(deps, request.project.id, request.params.id),
    );

    scope.get(
      '/views/:id/templates',
      { schema: { ...byId.schema, response: { 200: z.array(templateSchema) } } },
      async (request) => {
        const { id } = request.params;
        await getView(deps, request.project.id, id);
        return preSerialized<Template[]>(
          await templatesListJson(deps.db, request.project.id, { viewId: id }),
        );
      },
    );

    scope.post(
      '/views',
      { ...manage, schema: { body: viewInput, response: { 201: viewSchema } } },
      async (request, reply) => {
        const input = request.body;
        const view = await createView(deps, currentUser(request), request.project.id, input);
        return reply.status(201).send(view);
      },
    );

    scope.post(
      '/views/positions',
      { ...manage, schema: { body: viewPositionsInput, response: noContentResponse } },
      async (request, reply) => {
        const positions = request.body;
        await reorderViews(deps, currentUser(request), request.project.id, positions);
        return reply.status(204).send();
      },
    );

    scope.put(
      '/views/:id',
      { ...manage, schema: { ...byId.schema, body: viewInput, response: noContentResponse } },
      async (request, reply) => {
        const { id } = request.params;
        const input = request.body;
        await changeView(deps, currentUser(request), request.project.id, id, input);
        return reply.status(204).send();
      },
    );

    scope.delete(
      '/views/:id',
      { ...manage, schema: { ...byId.schema, response: noContentResponse } },
      async (request, reply) => {
        await removeView(deps, currentUser(request), request.project.id, request.params.id);
        return reply.status(204).send();
      },
    );
  });
}
