import {
  integrationAliasSchema,
  integrationExtractValueInput,
  integrationExtractValueSchema,
  integrationInput,
  integrationMatcherInput,
  integrationMatcherSchema,
  integrationSchema,
  noRefs,
} from '@signalbox/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { noContentResponse, pathIds } from '../../http/path-params';
import { refsRoute } from '../../http/refs-route';
import * as service from './integrations.service';
import { toIntegration } from './integrations.store';
import { webhookRoutes } from './webhook.routes';

const byId = { params: pathIds('id') };
const byAlias = { params: pathIds('alias_id') };
const byIdAndAlias = { params: pathIds('id', 'alias_id') };
const byMatcher = { params: pathIds('id', 'matcher_id') };
const byValue = { params: pathIds('id', 'value_id') };

/** The answer of a change that returns nothing: 204 without a body (`send(null)` sends none, as `send()` does). */

export function integrationsRoutes(app: FastifyInstance, deps: Deps) {
  webhookRoutes(app, deps);

  /** Where senders reach this server: the configured web root, else the address this request used. */
  const baseUrl = (request: FastifyRequest) => deps.config.webRoot || `${request.protocol}://${request.host}`;
  const actor = (request: FastifyRequest) => ({
    deps,
    user: currentUser(request),
    projectId: request.project.id,
  });
  const write = { config: { permission: 'updateProject' as const } };
  // An alias URL starts tasks: only members who may run tasks are shown one (not guests).
  const runners = { config: { permission: 'runProjectTasks' as const } };

  projectRoutes(app, deps, async (scope) => {
    scope.get(
      '/integrations',
      { schema: { response: { 200: z.array(integrationSchema) } } },
      async (request) => service.listIntegrations(deps, request.project.id),
    );
    scope.post(
      '/integrations',
      { ...write, schema: { body: integrationInput, response: { 201: integrationSchema } } },
      async (request, reply) => {
        const input = request.body;
        return reply.status(201).send(await service.createIntegration(actor(request), input));
      },
    );

    // Project-level aliases (static segments win over `:id` in the router).
    const aliasList = { response: { 200: z.array(integrationAliasSchema) } };
    const aliasCreated = { response: { 201: integrationAliasSchema } };
    scope.get('/integrations/aliases', { ...runners, schema: aliasList }, async (request) =>
      service.listAliases(deps, request.project.id, null, baseUrl(request)),
    );
    scope.post('/integrations/aliases', { ...write, schema: aliasCreated }, async (request, reply) =>
      reply.status(201).send(await service.createAlias(actor(request), null, baseUrl(request))),
    );
    scope.delete(
      '/integrations/aliases/:alias_id',
      { ...write, schema: { ...byAlias, response: noContentResponse } },
      async (request, reply) => {
        await service.deleteAlias(actor(request), null, request.params.alias_id);
        return reply.status(204).send();
      },
    );

    scope.get(
      '/integrations/:id',
      { schema: { ...byId, response: { 200: integrationSchema } } },
      async (request) =>
        toIntegration(await service.getIntegration(deps, request.project.id, request.params.id)),
    );
    scope.put(
      '/integrations/:id',
      { ...write, schema: { ...byId, body: integrationInput, response: noContentResponse } },
      async (request, reply) => {
        const { id } = request.params;
        const input = request.body;
        await service.updateIntegration(actor(request), id, input);
        return reply.status(204).send();
      },
    );
    scope.delete(
      '/integrations/:id',
      { ...write, schema: { ...byId, response: noContentResponse } },
      async (request, reply) => {
        await service.deleteIntegration(actor(request), request.params.id);
        return reply.status(204).send();
      },
    );
    scope.get('/integrations/:id/refs', refsRoute, async (request) => {
      await service.getIntegration(deps, request.project.id, request.params.id);
      return noRefs();
    });

    scope.get(
      '/integrations/:id/aliases',
      { ...runners, schema: { ...byId, ...aliasList } },
      async (request) => service.listAliases(deps, request.project.id, request.params.id, baseUrl(request)),
    );
    scope.post(
      '/integrations/:id/aliases',
      { ...write, schema: { ...byId, ...aliasCreated } },
      async (request, reply) =>
        reply
          .status(201)
          .send(await service.createAlias(actor(request), request.params.id, baseUrl(request))),
    );
    scope.delete(
      '/integrations/:id/aliases/:alias_id',
      { ...write, schema: { ...byIdAndAlias, response: noContentResponse } },
      async (request, reply) => {
        await service.deleteAlias(actor(request), request.params.id, request.params.alias_id);
        return reply.status(204).send();
      },
    );

    scope.get(
      '/integrations/:id/matchers',
      { schema: { ...byId, response: { 200: z.array(integrationMatcherSchema) } } },
      async (request) => service.listMatchers(deps, request.project.id, request.params.id),
    );
    scope.post(
      '/integrations/:id/matchers',
      {
        ...write,
        schema: { ...byId, body: integrationMatcherInput, response: { 200: integrationMatcherSchema } },
      },
      async (request, reply) => {
        const { id } = request.params;
        const input = request.body;
        // Semaphore's Swagger lists 200 (not 201) for a created matcher; values answer 201.
        return reply.status(200).send(await service.createMatcher(actor(request), id, input));
      },
    );
    scope.put(
      '/integrations/:id/matchers/:matcher_id',
      { ...write, schema: { ...byMatcher, body: integrationMatcherInput, response: noContentResponse } },
      async (request, reply) => {
        const { id, matcher_id } = request.params;
        await service.updateMatcher(actor(request), id, matcher_id, request.body);
        return reply.status(204).send();
      },
    );
    scope.delete(
      '/integrations/:id/matchers/:matcher_id',
      { ...write, schema: { ...byMatcher, response: noContentResponse } },
      async (request, reply) => {
        await service.deleteMatcher(actor(request), request.params.id, request.params.matcher_id);
        return reply.status(204).send();
      },
    );

    scope.get(
      '/integrations/:id/values',
      { schema: { ...byId, response: { 200: z.array(integrationExtractValueSchema) } } },
      async (request) => service.listExtractValues(deps, request.project.id, request.params.id),
    );
    scope.post(
      '/integrations/:id/values',
      {
        ...write,
        schema: {
          ...byId,
          body: integrationExtractValueInput,
          response: { 201: integrationExtractValueSchema },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const input = request.body;
        return reply.status(201).send(await service.createExtractValue(actor(request), id, input));
      },
    );
    scope.put(
      '/integrations/:id/values/:value_id',
      { ...write, schema: { ...byValue, body: integrationExtractValueInput, response: noContentResponse } },
      async (request, reply) => {
        const { id, value_id } = request.params;
        await service.updateExtractValue(actor(request), id, value_id, request.body);
        return reply.status(204).send();
      },
    );
    scope.delete(
      '/integrations/:id/values/:value_id',
      { ...write, schema: { ...byValue, response: noContentResponse } },
      async (request, reply) => {
        await service.deleteExtractValue(actor(request), request.params.id, request.params.value_id);
        return reply.status(204).send();
      },
    );
  });
}
