import {
  runnerListQuery,
  runnerRegistrationTokenSchema,
  runnerSchema,
  runnerUpdateInput,
} from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { noContentResponse, pathIds, type ZodTypeProvider } from '../../http/path-params';
import { changeRunner, createRegistrationToken, getRunner, removeRunner } from './runners.service';
import { listRunners, projectRunnerTags } from './runners.store';

const admin = { config: { admin: true } };
const owner = { config: { permission: 'updateProject' as const } };

/**
 * Remote runner management: admins manage the global runners (and see every runner with `?all=1`), project
 * owners their project's runners. Members may list their project's runners and the tags tasks can ask for.
 */
export function runnersRoutes(fastify: FastifyInstance, deps: Deps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/api/runners',
    { ...admin, schema: { querystring: runnerListQuery, response: { 200: z.array(runnerSchema) } } },
    async (request) => listRunners(deps.db, request.query.all ? { all: true } : { projectId: null }),
  );

  app.post(
    '/api/runners/registration-tokens',
    { ...admin, schema: { response: { 201: runnerRegistrationTokenSchema } } },
    async (request, reply) =>
      reply.status(201).send(await createRegistrationToken(deps, currentUser(request), null)),
  );

  app.get(
    '/api/runners/:id',
    { ...admin, schema: { params: pathIds('id'), response: { 200: runnerSchema } } },
    async (request) => getRunner(deps, null, request.params.id),
  );

  app.put(
    '/api/runners/:id',
    { ...admin, schema: { params: pathIds('id'), body: runnerUpdateInput, response: { 200: runnerSchema } } },
    async (request) => changeRunner(deps, currentUser(request), null, request.params.id, request.body),
  );

  app.delete(
    '/api/runners/:id',
    { ...admin, schema: { params: pathIds('id'), response: noContentResponse } },
    async (request, reply) => {
      await removeRunner(deps, currentUser(request), null, request.params.id);
      return reply.status(204).send();
    },
  );

  projectRoutes(app, deps, async (scope) => {
    scope.get('/runners', { schema: { response: { 200: z.array(runnerSchema) } } }, async (request) =>
      listRunners(deps.db, { projectId: request.project.id }),
    );

    scope.get('/runner_tags', { schema: { response: { 200: z.array(z.string()) } } }, async (request) =>
      projectRunnerTags(deps.db, request.project.id),
    );

    scope.post(
      '/runners/registration-tokens',
      { ...owner, schema: { response: { 201: runnerRegistrationTokenSchema } } },
      async (request, reply) =>
        reply.status(201).send(await createRegistrationToken(deps, currentUser(request), request.project.id)),
    );

    scope.get(
      '/runners/:runner_id',
      { schema: { params: pathIds('runner_id'), response: { 200: runnerSchema } } },
      async (request) => getRunner(deps, request.project.id, request.params.runner_id),
    );

    scope.put(
      '/runners/:runner_id',
      {
        ...owner,
        schema: { params: pathIds('runner_id'), body: runnerUpdateInput, response: { 200: runnerSchema } },
      },
      async (request) =>
        changeRunner(deps, currentUser(request), request.project.id, request.params.runner_id, request.body),
    );

    scope.delete(
      '/runners/:runner_id',
      { ...owner, schema: { params: pathIds('runner_id'), response: noContentResponse } },
      async (request, reply) => {
        await removeRunner(deps, currentUser(request), request.project.id, request.params.runner_id);
        return reply.status(204).send();
      },
    );
  });
}
