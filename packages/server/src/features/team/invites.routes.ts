import {
  inviteListQuery,
  inviteTokenInput,
  projectInviteCreatedSchema,
  projectInviteInput,
  projectInviteSchema,
  userInviteSchema,
} from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { noContentResponse, pathIds, type ZodTypeProvider } from '../../http/path-params';
import {
  answerInviteByToken,
  answerOwnInvite,
  createInvite,
  getInvite,
  listInvites,
  withdrawInvite,
} from './invites.service';
import { listPendingInvitesOf } from './invites.store';

const manageUsers = { config: { permission: 'manageProjectUsers' as const } };
const byInvite = { params: pathIds('invite_id') };

/**
 * Project invites. In a project: members may read them; inviting and withdrawing need manageProjectUsers (the
 * peer's GET/POST project/{id}/invites and GET invites/{invite_id}, plus DELETE to withdraw one). For the invited
 * user: their pending invites, answered by id (GET /api/user/invites, POST …/{invite_id}/accept|decline) or with
 * the invite's token (POST /api/invites/accept|decline, the peer's accept route).
 */
export function invitesRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.get(
      '/invites',
      { schema: { querystring: inviteListQuery, response: { 200: z.array(projectInviteSchema) } } },
      async (request) => listInvites(deps, request.project.id, request.query),
    );

    scope.post(
      '/invites',
      { ...manageUsers, schema: { body: projectInviteInput, response: { 201: projectInviteCreatedSchema } } },
      async (request, reply) => {
        const invite = await createInvite(deps, currentUser(request), request.project, request.body);
        return reply.status(201).send(invite);
      },
    );

    scope.get(
      '/invites/:invite_id',
      { schema: { ...byInvite, response: { 200: projectInviteSchema } } },
      async (request) => getInvite(deps, request.project.id, request.params.invite_id),
    );

    scope.delete(
      '/invites/:invite_id',
      { ...manageUsers, schema: { ...byInvite, response: noContentResponse } },
      async (request, reply) => {
        await withdrawInvite(deps, currentUser(request), request.project.id, request.params.invite_id);
        return reply.status(204).send();
      },
    );
  });

  const own = app.withTypeProvider<ZodTypeProvider>();
  own.get(
    '/api/user/invites',
    { config: { tokenScope: 'read' }, schema: { response: { 200: z.array(userInviteSchema) } } },
    async (request) => listPendingInvitesOf(deps.db, currentUser(request).id),
  );

  for (const [action, status] of [
    ['accept', 'accepted'],
    ['decline', 'declined'],
  ] as const) {
    own.post(
      `/api/user/invites/:invite_id/${action}`,
      { config: { tokenScope: 'write' }, schema: { ...byInvite, response: noContentResponse } },
      async (request, reply) => {
        await answerOwnInvite(deps, currentUser(request), request.params.invite_id, status);
        return reply.status(204).send();
      },
    );
    own.post(
      `/api/invites/${action}`,
      { config: { tokenScope: 'write' }, schema: { body: inviteTokenInput, response: noContentResponse } },
      async (request, reply) => {
        await answerInviteByToken(deps, currentUser(request), request.body.token, status);
        return reply.status(204).send();
      },
    );
  }
}
