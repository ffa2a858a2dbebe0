import {
  idParam,
  integrationExtractValueInput,
  integrationInput,
  integrationMatcherInput,
  type Refs,
} from '@signalbox/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps';
import { parse } from '../../lib/errors';
import { projectRoutes } from '../projects/projects.guard';
import * as service from './integrations.service';
import { toIntegration } from './integrations.store';
import { webhookRoutes } from './webhook.routes';

type Params = { id?: string; alias_id?: string; matcher_id?: string; value_id?: string };

const param = (request: FastifyRequest, name: keyof Params) =>
  parse(idParam, (request.params as Params)[name]);

const noRefs = (): Refs => ({
  templates: [],
  inventories: [],
  repositories: [],
  environments: [],
  integrations: [],
  schedules: [],
});

export function integrationsRoutes(app: FastifyInstance, deps: Deps) {
  webhookRoutes(app, deps);

  /** Where senders reach this server: the configured web root, else the address this request used. */
  const baseUrl = (request: FastifyRequest) => deps.config.webRoot || `${request.protocol}://${request.host}`;
  const actor = (request: FastifyRequest) => ({ deps, user: request.user!, projectId: request.project.id });
  const write = { config: { permission: 'updateProject' as const } };

  projectRoutes(app, deps, async (scope) => {
    scope.get('/integrations', async (request) => service.listIntegrations(deps, request.project.id));
    scope.post('/integrations', write, async (request, reply) => {
      const input = parse(integrationInput, request.body);
      return reply.status(201).send(await service.createIntegration(actor(request), input));
    });

    // Project-level aliases (static segments win over `:id` in the router).
    scope.get('/integrations/aliases', async (request) =>
      service.listAliases(deps, request.project.id, null, baseUrl(request)),
    );
    scope.post('/integrations/aliases', write, async (request, reply) =>
      reply.status(201).send(await service.createAlias(actor(request), null, baseUrl(request))),
    );
    scope.delete('/integrations/aliases/:alias_id', write, async (request, reply) => {
      await service.deleteAlias(actor(request), null, param(request, 'alias_id'));
      return reply.status(204).send();
    });

    scope.get('/integrations/:id', async (request) =>
      toIntegration(await service.getIntegration(deps, request.project.id, param(request, 'id'))),
    );
    scope.put('/integrations/:id', write, async (request, reply) => {
      const id = param(request, 'id');
      const input = parse(integrationInput, request.body);
      await service.updateIntegration(actor(request), id, input);
      return reply.status(204).send();
    });
    scope.delete('/integrations/:id', write, async (request, reply) => {
      await service.deleteIntegration(actor(request), param(request, 'id'));
      return reply.status(204).send();
    });
    scope.get('/integrations/:id/refs', async (request) => {
      await service.getIntegration(deps, request.project.id, param(request, 'id'));
      return noRefs();
    });

    scope.get('/integrations/:id/aliases', async (request) =>
      service.listAliases(deps, request.project.id, param(request, 'id'), baseUrl(request)),
    );
    scope.post('/integrations/:id/aliases', write, async (request, reply) =>
      reply
        .status(201)
        .send(await service.createAlias(actor(request), param(request, 'id'), baseUrl(request))),
    );
    scope.delete('/integrations/:id/aliases/:alias_id', write, async (request, reply) => {
      await service.deleteAlias(actor(request), param(request, 'id'), param(request, 'alias_id'));
      return reply.status(204).send();
    });

    scope.get('/integrations/:id/matchers', async (request) =>
      service.listMatchers(deps, request.project.id, param(request, 'id')),
    );
    scope.post('/integrations/:id/matchers', write, async (request, reply) => {
      const id = param(request, 'id');
      const input = parse(integrationMatcherInput, request.body);
      // Semaphore's Swagger lists 200 (not 201) for a created matcher; values answer 201.
      return reply.status(200).send(await service.createMatcher(actor(request), id, input));
    });
    scope.put('/integrations/:id/matchers/:matcher_id', write, async (request, reply) => {
      const id = param(request, 'id');
      const matcherId = param(request, 'matcher_id');
      const input = parse(integrationMatcherInput, request.body);
      await service.updateMatcher(actor(request), id, matcherId, input);
      return reply.status(204).send();
    });
    scope.delete('/integrations/:id/matchers/:matcher_id', write, async (request, reply) => {
      await service.deleteMatcher(actor(request), param(request, 'id'), param(request, 'matcher_id'));
      return reply.status(204).send();
    });

    scope.get('/integrations/:id/values', async (request) =>
      service.listExtractValues(deps, request.project.id, param(request, 'id')),
    );
    scope.post('/integrations/:id/values', write, async (request, reply) => {
      const id = param(request, 'id');
      const input = parse(integrationExtractValueInput, request.body);
      return reply.status(201).send(await service.createExtractValue(actor(request), id, input));
    });
    scope.put('/integrations/:id/values/:value_id', write, async (request, reply) => {
      const id = param(request, 'id');
      const valueId = param(request, 'value_id');
      const input = parse(integrationExtractValueInput, request.body);
      await service.updateExtractValue(actor(request), id, valueId, input);
      return reply.status(204).send();
    });
    scope.delete('/integrations/:id/values/:value_id', write, async (request, reply) => {
      await service.deleteExtractValue(actor(request), param(request, 'id'), param(request, 'value_id'));
      return reply.status(204).send();
    });
  });
}
