import { projectInput, projectRoleInfoSchema, projectSchema } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import { callerSharedAnswer } from '../../access/shared-answers';
import { tokenProjects } from '../../access/token-limits';
import type { Deps } from '../../deps';
import { noContentResponse, type ZodTypeProvider } from '../../http/path-params';
import { createDemoContent } from './demo';
import { createProject, deleteProject, updateProject } from './projects.service';
import { listProjects, toProject } from './projects.store';

export function projectsRoutes(fastify: FastifyInstance, deps: Deps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  // Polled by every console page: kept per caller until a write or an access change (see callerSharedAnswer).
  const list = {
    config: { tokenScope: 'read' as const },
    schema: { response: { 200: z.array(projectSchema) } },
    ...callerSharedAnswer(deps),
  };
  app.get('/api/projects', list, async (request) => {
    const user = currentUser(request);
    return listProjects(deps.db, user.id, user.admin === 1, tokenProjects(request));
  });

  const create = {
    config: { tokenScope: 'write' as const },
    schema: { body: projectInput, response: { 201: projectSchema } },
  };
  app.post('/api/projects', create, async (request, reply) => {
    const project = await createProject(deps, currentUser(request), request.body, createDemoContent);
    return reply.status(201).send(project);
  });

  projectRoutes(app, deps, async (scope) => {
    scope.get('/', { schema: { response: { 200: projectSchema } } }, async (request) =>
      toProject(request.project),
    );
    scope.get('/role', { schema: { response: { 200: projectRoleInfoSchema } } }, async (request) => ({
      role: request.projectRole,
      permissions: request.permissions,
    }));
    scope.put(
      '/',
      {
        config: { permission: 'updateProject' },
        schema: { body: projectInput, response: noContentResponse },
      },
      async (request, reply) => {
        await updateProject(deps, currentUser(request), request.project.id, request.body);
        return reply.status(204).send();
      },
    );
    const remove = {
      config: { permission: 'updateProject' as const },
      schema: { response: noContentResponse },
    };
    scope.delete('/', remove, async (request, reply) => {
      await deleteProject(deps, currentUser(request), request.project.id, request.project.name);
      return reply.status(204).send();
    });
  });
}
