import { idParam, templateInput } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps';
import { parse } from '../../lib/errors';
import { projectRoutes } from '../projects/projects.guard';
import { findRefs } from '../refs/refs.store';
import { listSchedules } from '../schedules/schedules.store';
import {
  changeTemplate,
  createTemplate,
  getTemplate,
  listTemplates,
  removeTemplate,
  templateSorts,
} from './templates.service';

const manage = { config: { permission: 'manageProjectResources' as const } };
const templateId = (params: unknown) => parse(idParam, (params as { id: unknown }).id);

const listQuery = z.object({
  sort: z.enum(templateSorts, { error: `sort must be one of ${templateSorts.join(', ')}` }).optional(),
  order: z.enum(['asc', 'desc'], { error: 'order must be asc or desc' }).optional(),
});

export function templatesRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.get('/templates', async (request) =>
      listTemplates(deps.db, request.project.id, parse(listQuery, request.query)),
    );

    scope.get('/templates/:id', async (request) =>
      getTemplate(deps.db, request.project.id, templateId(request.params)),
    );

    scope.get('/templates/:id/refs', async (request) => {
      const id = templateId(request.params);
      await getTemplate(deps.db, request.project.id, id);
      return findRefs(deps.db, request.project.id, 'template', id);
    });

    scope.get('/templates/:id/schedules', async (request) => {
      const id = templateId(request.params);
      await getTemplate(deps.db, request.project.id, id);
      return listSchedules(deps.db, request.project.id, id);
    });

    scope.post('/templates', manage, async (request, reply) => {
      const input = parse(templateInput, request.body);
      const template = await createTemplate(deps, request.user!, request.project.id, input);
      return reply.status(201).send(template);
    });

    scope.put('/templates/:id', manage, async (request, reply) => {
      const id = templateId(request.params);
      const input = parse(templateInput, request.body);
      await changeTemplate(deps, request.user!, request.project.id, id, input);
      return reply.status(204).send();
    });

    scope.delete('/templates/:id', manage, async (request, reply) => {
      await removeTemplate(deps, request.user!, request.project.id, templateId(request.params));
      return reply.status(204).send();
    });
  });
}
