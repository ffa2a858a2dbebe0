import { idParam, inventoryInput } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps';
import { parse } from '../../lib/errors';
import { projectRoutes } from '../projects/projects.guard';
import { listQuery } from '../refs/list-query';
import {
  createInventory,
  deleteInventory,
  getInventory,
  inventoryRefs,
  listInventories,
  updateInventory,
} from './inventory.service';

const inventoryQuery = listQuery(['name', 'type']);
const itemId = (params: unknown) => parse(idParam, (params as { id: unknown }).id);

export function inventoryRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    const write = { config: { permission: 'manageProjectResources' as const } };
    scope.get('/inventory', async (request) => {
      const { sort, order } = parse(inventoryQuery, request.query);
      return listInventories(deps, request.project.id, sort, order);
    });
    scope.get('/inventory/:id', async (request) =>
      getInventory(deps, request.project.id, itemId(request.params)),
    );
    scope.get('/inventory/:id/refs', async (request) =>
      inventoryRefs(deps, request.project.id, itemId(request.params)),
    );
    scope.post('/inventory', write, async (request, reply) => {
      const input = parse(inventoryInput, request.body);
      return reply.status(201).send(await createInventory(deps, request.user!, request.project.id, input));
    });
    scope.put('/inventory/:id', write, async (request, reply) => {
      const id = itemId(request.params);
      const input = parse(inventoryInput, request.body);
      await updateInventory(deps, request.user!, request.project.id, id, input);
      return reply.status(204).send();
    });
    scope.delete('/inventory/:id', write, async (request, reply) => {
      await deleteInventory(deps, request.user!, request.project.id, itemId(request.params));
      return reply.status(204).send();
    });
  });
}
