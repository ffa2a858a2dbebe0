import { optionListInput, optionListSchema } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { listQuery } from '../../http/list-query';
import { noContentResponse, pathIds } from '../../http/path-params';
import { refsRoute } from '../../http/refs-route';
import {
  createOptionList,
  deleteOptionList,
  getOptionList,
  listOptionLists,
  optionListRefs,
  updateOptionList,
} from './option-lists.service';

const optionListsQuery = listQuery(['name']);
const byId = { schema: { params: pathIds('id') } };

/** Option lists: named lists of options a survey's choice variables may offer. Members read, managers write. */
export function optionListsRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    const write = { config: { permission: 'manageProjectResources' as const } };
    scope.get(
      '/option_lists',
      { schema: { querystring: optionListsQuery, response: { 200: z.array(optionListSchema) } } },
      async (request) => listOptionLists(deps, request.project.id, request.query.order),
    );
    scope.get(
      '/option_lists/:id',
      { schema: { ...byId.schema, response: { 200: optionListSchema } } },
      async (request) => getOptionList(deps, request.project.id, request.params.id),
    );
    scope.get('/option_lists/:id/refs', refsRoute, async (request) =>
      optionListRefs(deps, request.project.id, request.params.id),
    );
    scope.post(
      '/option_lists',
      { ...write, schema: { body: optionListInput, response: { 201: optionListSchema } } },
      async (request, reply) =>
        reply
          .status(201)
          .send(await createOptionList(deps, currentUser(request), request.project.id, request.body)),
    );
    scope.put(
      '/option_lists/:id',
      { ...write, schema: { ...byId.schema, body: optionListInput, response: noContentResponse } },
      async (request, reply) => {
        await updateOptionList(
          deps,
          currentUser(request),
          request.project.id,
          request.params.id,
          request.body,
        );
        return reply.status(204).send();
      },
    );
    scope.delete(
      '/option_lists/:id',
      { ...write, schema: { ...byId.schema, response: noContentResponse } },
      async (request, reply) => {
        await deleteOptionList(deps, currentUser(request), request.project.id, request.params.id);
        return reply.status(204).send();
      },
    );
  });
}
