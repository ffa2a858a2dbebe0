import { accessKeySchema, keyCreateInput, keyUpdateInput } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { listQuery } from '../../http/list-query';
import { noContentResponse, pathIds } from '../../http/path-params';
import { refsRoute } from '../../http/refs-route';
import { createKey, deleteKey, getKey, keyRefs, listKeys, updateKey } from './keys.service';

const keysQuery = listQuery(['name', 'type']);
const byId = { schema: { params: pathIds('id') } };
const getById = { schema: { ...byId.schema, response: { 200: accessKeySchema } } };
const manage = { config: { permission: 'manageProjectResources' as const } };

/** The key store: secrets are write-only. */
export function keysRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.get(
      '/keys',
      { schema: { querystring: keysQuery, response: { 200: z.array(accessKeySchema) } } },
      async (request) => {
        const { sort, order } = request.query;
        return listKeys(deps, request.project.id, sort, order);
      },
    );
    scope.get('/keys/:id', getById, async (request) => getKey(deps, request.project.id, request.params.id));
    scope.get('/keys/:id/refs', refsRoute, async (request) =>
      keyRefs(deps, request.project.id, request.params.id),
    );
    scope.post(
      '/keys',
      { ...manage, schema: { body: keyCreateInput, response: { 201: accessKeySchema } } },
      async (request, reply) => {
        const input = request.body;
        return reply.status(201).send(await createKey(deps, currentUser(request), request.project.id, input));
      },
    );
    scope.put(
      '/keys/:id',
      { ...manage, schema: { ...byId.schema, body: keyUpdateInput, response: noContentResponse } },
      async (request, reply) => {
        const input = request.body;
        await updateKey(deps, currentUser(request), request.project.id, request.params.id, input);
        return reply.status(204).send();
      },
    );
    scope.delete(
      '/keys/:id',
      { ...manage, schema: { ...byId.schema, response: noContentResponse } },
      async (request, reply) => {
        await deleteKey(deps, currentUser(request), request.project.id, request.params.id);
        return reply.status(204).send();
      },
    );
  });
}
