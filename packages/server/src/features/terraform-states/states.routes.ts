import {
  coded,
  idParam,
  lockInfoInput,
  Permission,
  stateDetailSchema,
  stateDiffQuery,
  stateDiffSchema,
  stateNameSchema,
  stateSummarySchema,
} from '@signalbox/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { noContentResponse, type ZodTypeProvider } from '../../http/path-params';
import { forbidden, notFound } from '../../lib/errors';
import { rawBodyParser } from './state-document';
import {
  deleteStateOf,
  diffVersions,
  forceUnlock,
  listStateSummaries,
  lockState,
  readState,
  rollbackState,
  stateDetail,
  unlockState,
  writeState,
} from './states.service';
import type { StateActor } from './states.store';

const byName = z.object({ name: stateNameSchema });
const byVersion = z.object({ name: stateNameSchema, version_id: idParam });
const lockQuery = z.object({
  ID: z
    .string()
    .max(200)
    .optional()
    .describe("The lock's ID, when the state is locked (Terraform sends it)."),
});
const done = z.strictObject({}).describe('Done');
const STATES = '/terraform/states';

/** Who acts: the running task (and the user who started it), or the signed-in user or token owner. */
function actorOf(request: FastifyRequest): StateActor {
  if (request.runningTask) return { userId: request.runningTask.userId, taskId: request.runningTask.taskId };
  return { userId: currentUser(request).id, taskId: null };
}

/**
 * Reading a state (and a diff, which shows its values) needs the right to run tasks: a state holds every secret
 * Terraform manages. Guests see the list of states, their versions and locks, never their content. A token's
 * `read` scope is enough for this read; its owner's role still decides.
 */
function requireStateReader(request: FastifyRequest) {
  if (request.runningTask) return;
  const user = currentUser(request);
  if (user.admin || ['owner', 'manager', 'task_runner'].includes(request.projectRole)) return;
  throw forbidden(coded('missing_permission', { permission: 'runProjectTasks' }));
}

/**
 * The built-in Terraform state backend. Terraform's `http` backend protocol at /terraform/states/{name} (GET,
 * POST ?ID=, DELETE, LOCK, UNLOCK), taking HTTP basic auth as Terraform sends it: a running task's own credentials
 * or an API token as the password; and the console's routes over it: the list, versions, a diff, rollback and
 * force-unlock (managers).
 */
export function terraformStatesRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    const manage = { permission: 'manageProjectResources' as const };
    scope.get(STATES, { schema: { response: { 200: z.array(stateSummarySchema) } } }, async (request) =>
      listStateSummaries(deps, request.project.id),
    );
    scope.get(
      `${STATES}/:name/versions`,
      { schema: { params: byName, response: { 200: stateDetailSchema } } },
      async (request) => stateDetail(deps, request.project.id, request.params.name),
    );
    scope.get(
      `${STATES}/:name/diff`,
      { schema: { params: byName, querystring: stateDiffQuery, response: { 200: stateDiffSchema } } },
      async (request) => {
        requireStateReader(request);
        return diffVersions(
          deps,
          request.project.id,
          request.params.name,
          request.query.from,
          request.query.to,
        );
      },
    );
    scope.post(
      `${STATES}/:name/versions/:version_id/rollback`,
      { config: manage, schema: { params: byVersion, response: noContentResponse } },
      async (request, reply) => {
        const { name, version_id } = request.params;
        await rollbackState(deps, currentUser(request), request.project.id, name, version_id);
        return reply.status(204).send();
      },
    );
    scope.delete(
      `${STATES}/:name/lock`,
      { config: manage, schema: { params: byName, response: noContentResponse } },
      async (request, reply) => {
        await forceUnlock(deps, currentUser(request), request.project.id, request.params.name);
        return reply.status(204).send();
      },
    );

    // Terraform's protocol: the bodies are read as they are sent (a state is kept byte for byte), within the
    // size limit.
    await scope.register(async (plain) => {
      const backend = plain.withTypeProvider<ZodTypeProvider>();
      backend.removeAllContentTypeParsers();
      backend.addContentTypeParser('*', rawBodyParser(deps.config.terraformStateMaxMb * 1_048_576));
      const basic = { basicAuth: true };
      const body = (request: FastifyRequest) => (Buffer.isBuffer(request.body) ? request.body : undefined);
      backend.get(
        `${STATES}/:name`,
        {
          config: { ...basic, tokenScope: 'read' },
          schema: {
            params: byName,
            response: {
              200: {
                description: 'The current state, as Terraform wrote it',
                content: { 'application/json': { schema: { type: 'object' } } },
              },
            },
          },
        },
        async (request, reply) => {
          requireStateReader(request);
          const state = await readState(deps, request.project.id, request.params.name);
          // None written yet: 404, which Terraform's http backend reads as "no state" (as it does 204).
          if (!state) throw notFound('terraform_state');
          return reply
            .header('content-type', 'application/json')
            .header('content-md5', state.md5)
            .header('cache-control', 'no-store')
            .send(state.bytes);
        },
      );
      backend.post(
        `${STATES}/:name`,
        {
          config: { ...basic, permission: 'runProjectTasks' },
          schema: { params: byName, querystring: lockQuery, response: { 200: done } },
        },
        async (request) => {
          const bytes = body(request) ?? Buffer.alloc(0);
          await writeState(
            deps,
            request.project.id,
            request.params.name,
            request.query.ID,
            bytes,
            actorOf(request),
          );
          return {};
        },
      );
      backend.delete(
        `${STATES}/:name`,
        { config: { ...basic, ...manage }, schema: { params: byName, response: { 200: done } } },
        async (request) => {
          await deleteStateOf(deps, currentUser(request), request.project.id, request.params.name);
          return {};
        },
      );
      backend.route({
        method: 'LOCK',
        url: `${STATES}/:name`,
        config: { ...basic, permission: 'runProjectTasks' },
        schema: { hide: true, params: byName, response: { 200: lockInfoInput } },
        handler: async (request) => {
          const { name } = request.params as { name: string };
          await lockState(deps, request.project.id, name, body(request), actorOf(request));
          return JSON.parse(body(request)?.toString('utf8') ?? '{}');
        },
      });
      backend.route({
        method: 'UNLOCK',
        url: `${STATES}/:name`,
        config: { ...basic, permission: 'runProjectTasks' },
        schema: { hide: true, params: byName, querystring: lockQuery, response: { 200: done } },
        handler: async (request) => {
          const { name } = request.params as { name: string };
          const { ID } = request.query as { ID?: string };
          const bytes = body(request);
          // `terraform force-unlock` sends UNLOCK without the lock's info: a manager's force-unlock, audited.
          if (!bytes?.length && !ID && !request.runningTask) {
            if ((request.permissions & Permission.manageProjectResources) === 0)
              throw forbidden(coded('missing_permission', { permission: 'manageProjectResources' }));
            await forceUnlock(deps, currentUser(request), request.project.id, name);
            return {};
          }
          await unlockState(deps, request.project.id, name, bytes, ID);
          return {};
        },
      });
    });
  });
}
