import { environmentInput, environmentSchema } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { listQuery } from '../../http/list-query';
import { noContentResponse, pathIds } from '../../http/path-params';
import { refsRoute } from '../../http/refs-route';
import {
  createEnvironment,
  deleteEnvironment,
  environmentRefs,
  getEnvironment,
  listEnvironments,
  updateEnvironment,
} from './environments.service';

const environmentsQuery = listQuery(['name']);
const byId = { schema: { params: pathIds('id') } };
const getById = { schema: { ...byId.schema, response: { 200: environmentSchema } } };

/** Environments (variable groups): extra variables, environment variables and write-only secrets. */
export function environmentsRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    const write = { config: { permission: 'manageProjectResources' as const } };
    scope.get(
      '/environment',
      { schema: { querystring: environmentsQuery, response: { 200: z.array(environmentSchema) } } },
      async (request) => {
        const { order } = request.query;
        return listEnvironments(deps, request.project.id, order);
      },
    );
    scope.get('/environment/:id', getById, async (request) =>
      getEnvironment(deps, request.project.id, request.params.id),
    );
    scope.get('/environment/:id/refs', refsRoute, async (request) =>
      environmentRefs(deps, request.project.id, request.params.id),
    );
    scope.post(
      '/environment',
      { ...write, schema: { body: environmentInput, response: { 201: environmentSchema } } },
      async (request, reply) => {
        const input = request.body;
        return reply
          .status(201)
          .send(await createEnvironment(deps, currentUser(request), request.project.id, input));
      },
    );
    scope.put(
      '/environment/:id',
      { ...write, schema: { ...byId.schema, body: environmentInput, response: noContentResponse } },
      async (request, reply) => {
        const { id } = request.params;
        const input = request.body;
        await updateEnvironment(deps, currentUser(request), request.project.id, id, input);
        return reply.status(204).send();
      },
    );
    scope.delete(
      '/environment/:id',
      { ...write, schema: { ...byId.schema, response: noContentResponse } },
      async (request, reply) => {
        await deleteEnvironment(deps, currentUser(request), request.project.id, request.params.id);
        return reply.status(204).send();
      },
    );
  });
}
