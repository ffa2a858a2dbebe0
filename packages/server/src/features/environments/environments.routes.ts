import { environmentInput, idParam } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps';
import { parse } from '../../lib/errors';
import { projectRoutes } from '../projects/projects.guard';
import { listQuery } from '../refs/list-query';
import {
  createEnvironment,
  deleteEnvironment,
  environmentRefs,
  getEnvironment,
  listEnvironments,
  updateEnvironment,
} from './environments.service';

const environmentsQuery = listQuery(['name']);
const itemId = (params: unknown) => parse(idParam, (params as { id: unknown }).id);

/** Environments (variable groups): extra variables, environment variables and write-only secrets. */
export function environmentsRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    const write = { config: { permission: 'manageProjectResources' as const } };
    scope.get('/environment', async (request) => {
      const { order } = parse(environmentsQuery, request.query);
      return listEnvironments(deps, request.project.id, order);
    });
    scope.get('/environment/:id', async (request) =>
      getEnvironment(deps, request.project.id, itemId(request.params)),
    );
    scope.get('/environment/:id/refs', async (request) =>
      environmentRefs(deps, request.project.id, itemId(request.params)),
    );
    scope.post('/environment', write, async (request, reply) => {
      const input = parse(environmentInput, request.body);
      return reply.status(201).send(await createEnvironment(deps, request.user!, request.project.id, input));
    });
    scope.put('/environment/:id', write, async (request, reply) => {
      const id = itemId(request.params);
      const input = parse(environmentInput, request.body);
      await updateEnvironment(deps, request.user!, request.project.id, id, input);
      return reply.status(204).send();
    });
    scope.delete('/environment/:id', write, async (request, reply) => {
      await deleteEnvironment(deps, request.user!, request.project.id, itemId(request.params));
      return reply.status(204).send();
    });
  });
}
