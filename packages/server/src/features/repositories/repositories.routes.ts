import { idParam, repositoryInput } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps';
import { parse } from '../../lib/errors';
import { projectRoutes } from '../projects/projects.guard';
import { listQuery } from '../refs/list-query';
import {
  createRepository,
  deleteRepository,
  getRepository,
  listRepositories,
  repositoryRefs,
  updateRepository,
} from './repositories.service';

const repositoriesQuery = listQuery(['name', 'git_url', 'ssh_key']);
const itemId = (params: unknown) => parse(idParam, (params as { id: unknown }).id);

export function repositoriesRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    const write = { config: { permission: 'manageProjectResources' as const } };
    scope.get('/repositories', async (request) => {
      const { sort, order } = parse(repositoriesQuery, request.query);
      return listRepositories(deps, request.project.id, sort, order);
    });
    scope.get('/repositories/:id', async (request) =>
      getRepository(deps, request.project.id, itemId(request.params)),
    );
    scope.get('/repositories/:id/refs', async (request) =>
      repositoryRefs(deps, request.project.id, itemId(request.params)),
    );
    scope.post('/repositories', write, async (request, reply) => {
      const input = parse(repositoryInput, request.body);
      return reply.status(201).send(await createRepository(deps, request.user!, request.project.id, input));
    });
    scope.put('/repositories/:id', write, async (request, reply) => {
      const id = itemId(request.params);
      const input = parse(repositoryInput, request.body);
      await updateRepository(deps, request.user!, request.project.id, id, input);
      return reply.status(204).send();
    });
    scope.delete('/repositories/:id', write, async (request, reply) => {
      await deleteRepository(deps, request.user!, request.project.id, itemId(request.params));
      return reply.status(204).send();
    });
  });
}
