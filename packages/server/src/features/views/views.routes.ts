import { idParam, viewInput, viewPositionsInput } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps';
import { parse } from '../../lib/errors';
import { projectRoutes } from '../projects/projects.guard';
import { listTemplates } from '../templates/templates.service';
import { changeView, createView, getView, removeView, reorderViews } from './views.service';
import { listViews } from './views.store';

const manage = { config: { permission: 'manageProjectResources' as const } };
const viewId = (params: unknown) => parse(idParam, (params as { id: unknown }).id);

export function viewsRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.get('/views', async (request) => listViews(deps.db, request.project.id));

    scope.get('/views/:id', async (request) => getView(deps, request.project.id, viewId(request.params)));

    scope.get('/views/:id/templates', async (request) => {
      const id = viewId(request.params);
      await getView(deps, request.project.id, id);
      return listTemplates(deps.db, request.project.id, { viewId: id });
    });

    scope.post('/views', manage, async (request, reply) => {
      const input = parse(viewInput, request.body);
      const view = await createView(deps, request.user!, request.project.id, input);
      return reply.status(201).send(view);
    });

    scope.post('/views/positions', manage, async (request, reply) => {
      const positions = parse(viewPositionsInput, request.body);
      await reorderViews(deps, request.user!, request.project.id, positions);
      return reply.status(204).send();
    });

    scope.put('/views/:id', manage, async (request, reply) => {
      const id = viewId(request.params);
      const input = parse(viewInput, request.body);
      await changeView(deps, request.user!, request.project.id, id, input);
      return reply.status(204).send();
    });

    scope.delete('/views/:id', manage, async (request, reply) => {
      await removeView(deps, request.user!, request.project.id, viewId(request.params));
      return reply.status(204).send();
    });
  });
}
