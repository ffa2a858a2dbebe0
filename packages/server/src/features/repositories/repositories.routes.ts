import { repositoryInput, repositorySchema } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { listQuery } from '../../http/list-query';
import { noContentResponse, pathIds } from '../../http/path-params';
import { refsRoute } from '../../http/refs-route';
import {
  createRepository,
  deleteRepository,
  getRepository,
  listRepositories,
  repositoryRefs,
  updateRepository,
} from './repositories.service';

const repositoriesQuery = listQuery(['name', 'git_url', 'ssh_key']);
const byId = { schema: { params: pathIds('id') } };
const getById = { schema: { ...byId.schema, response: { 200: repositorySchema } } };

export function repositoriesRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    const write = { config: { permission: 'manageProjectResources' as const } };
    scope.get(
      '/repositories',
      { schema: { querystring: repositoriesQuery, response: { 200: z.array(repositorySchema) } } },
      async (request) => {
        const { sort, order } = request.query;
        return listRepositories(deps, request.project.id, sort, order);
      },
    );
    scope.get('/repositories/:id', getById, async (request) =>
      getRepository(deps, request.project.id, request.params.id),
    );
    scope.get('/repositories/:id/refs', refsRoute, async (request) =>
      repositoryRefs(deps, request.project.id, request.params.id),
    );
    scope.post(
      '/repositories',
      { ...write, schema: { body: repositoryInput, response: { 201: repositorySchema } } },
      async (request, reply) => {
        const input = request.body;
        return reply
          .status(201)
          .send(await createRepository(deps, currentUser(request), request.project.id, input));
      },
    );
    scope.put(
      '/repositories/:id',
      { ...write, schema: { ...byId.schema, body: repositoryInput, response: noContentResponse } },
      async (request, reply) => {
        const { id } = request.params;
        const input = request.body;
        await updateRepository(deps, currentUser(request), request.project.id, id, input);
        return reply.status(204).send();
      },
    );
    scope.delete(
      '/repositories/:id',
      { ...write, schema: { ...byId.schema, response: noContentResponse } },
      async (request, reply) => {
        await deleteRepository(deps, currentUser(request), request.project.id, request.params.id);
        return reply.status(204).send();
      },
    );
  });
}
