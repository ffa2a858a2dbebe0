import { inventoryInput, inventorySchema } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { listQuery } from '../../http/list-query';
import { noContentResponse, pathIds } from '../../http/path-params';
import { refsRoute } from '../../http/refs-route';
import {
  createInventory,
  deleteInventory,
  getInventory,
  inventoryRefs,
  listInventories,
  updateInventory,
} from './inventory.service';

const inventoryQuery = listQuery(['name', 'type']);
const byId = { schema: { params: pathIds('id') } };
const getById = { schema: { ...byId.schema, response: { 200: inventorySchema } } };

export function inventoryRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    const write = { config: { permission: 'manageProjectResources' as const } };
    scope.get(
      '/inventory',
      { schema: { querystring: inventoryQuery, response: { 200: z.array(inventorySchema) } } },
      async (request) => {
        const { sort, order } = request.query;
        return listInventories(deps, request.project.id, sort, order);
      },
    );
    scope.get('/inventory/:id', getById, async (request) =>
      getInventory(deps, request.project.id, request.params.id),
    );
    scope.get('/inventory/:id/refs', refsRoute, async (request) =>
      inventoryRefs(deps, request.project.id, request.params.id),
    );
    scope.post(
      '/inventory',
      { ...write, schema: { body: inventoryInput, response: { 201: inventorySchema } } },
      async (request, reply) => {
        const input = request.body;
        return reply
          .status(201)
          .send(await createInventory(deps, currentUser(request), request.project.id, input));
      },
    );
    scope.put(
      '/inventory/:id',
      { ...write, schema: { ...byId.schema, body: inventoryInput, response: noContentResponse } },
      async (request, reply) => {
        const { id } = request.params;
        const input = request.body;
        await updateInventory(deps, currentUser(request), request.project.id, id, input);
        return reply.status(204).send();
      },
    );
    scope.delete(
      '/inventory/:id',
      { ...write, schema: { ...byId.schema, response: noContentResponse } },
      async (request, reply) => {
        await deleteInventory(deps, currentUser(request), request.project.id, request.params.id);
        return reply.status(204).send();
      },
    );
  });
}
