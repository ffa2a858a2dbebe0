import {
  projectUserSchema,
  teamCandidateSchema,
  teamListQuery,
  teamMemberInput,
  teamRoleInput,
} from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { noContentResponse, pathIds } from '../../http/path-params';
import { addMember, changeRole, leaveProject, listTeam, removeMember } from './team.service';
import { listCandidates } from './team.store';

const manageUsers = { config: { permission: 'manageProjectUsers' as const } };
const byUserId = { schema: { params: pathIds('user_id'), response: noContentResponse } };

/** The project team: members may read; changes need manageProjectUsers; anyone but an owner may leave. */
export function teamRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.get(
      '/users',
      { schema: { querystring: teamListQuery, response: { 200: z.array(projectUserSchema) } } },
      async (request) => listTeam(deps, request.project.id, request.query),
    );

    // Who can be added: GET /api/users is for administrators, but an owner who is not one must pick users too.
    const candidates = { ...manageUsers, schema: { response: { 200: z.array(teamCandidateSchema) } } };
    scope.get('/users/candidates', candidates, async (request) =>
      listCandidates(deps.db, request.project.id),
    );

    scope.post(
      '/users',
      { ...manageUsers, schema: { body: teamMemberInput, response: noContentResponse } },
      async (request, reply) => {
        const input = request.body;
        // The peer answers 204 (Swagger lists only 204); the list route shows the new member.
        await addMember(deps, currentUser(request), request.project.id, input);
        return reply.status(204).send();
      },
    );

    scope.put(
      '/users/:user_id',
      { ...manageUsers, schema: { ...byUserId.schema, body: teamRoleInput } },
      async (request, reply) => {
        const { role } = request.body;
        await changeRole(deps, currentUser(request), request.project.id, request.params.user_id, role);
        return reply.status(204).send();
      },
    );

    scope.delete('/users/:user_id', { ...manageUsers, ...byUserId }, async (request, reply) => {
      await removeMember(deps, currentUser(request), request.project.id, request.params.user_id);
      return reply.status(204).send();
    });

    const leave = { config: { tokenScope: 'write' as const }, schema: { response: noContentResponse } };
    scope.delete('/me', leave, async (request, reply) => {
      await leaveProject(deps, currentUser(request), request.project.id);
      return reply.status(204).send();
    });
  });
}
