import { idParam, keyCreateInput, keyUpdateInput } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps';
import { parse } from '../../lib/errors';
import { projectRoutes } from '../projects/projects.guard';
import { listQuery } from '../refs/list-query';
import { createKey, deleteKey, getKey, keyRefs, listKeys, updateKey } from './keys.service';

const keysQuery = listQuery(['name', 'type']);
const itemId = (params: unknown) => parse(idParam, (params as { id: unknown }).id);

/** The key store: secrets are write-only. */
export function keysRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.get('/keys', async (request) => {
      const { sort, order } = parse(keysQuery, request.query);
      return listKeys(deps, request.project.id, sort, order);
    });
    scope.get('/keys/:id', async (request) => getKey(deps, request.project.id, itemId(request.params)));
    scope.get('/keys/:id/refs', async (request) => keyRefs(deps, request.project.id, itemId(request.params)));
    scope.post('/keys', { config: { permission: 'manageProjectResources' } }, async (request, reply) => {
      const input = parse(keyCreateInput, request.body);
      return reply.status(201).send(await createKey(deps, request.user!, request.project.id, input));
    });
    scope.put('/keys/:id', { config: { permission: 'manageProjectResources' } }, async (request, reply) => {
      const id = itemId(request.params);
      const input = parse(keyUpdateInput, request.body);
      await updateKey(deps, request.user!, request.project.id, id, input);
      return reply.status(204).send();
    });
    scope.delete(
      '/keys/:id',
      { config: { permission: 'manageProjectResources' } },
      async (request, reply) => {
        await deleteKey(deps, request.user!, request.project.id, itemId(request.params));
        return reply.status(204).send();
      },
    );
  });
}
