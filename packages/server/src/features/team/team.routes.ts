import { idParam, teamListQuery, teamMemberInput, teamRoleInput } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps';
import { parse } from '../../lib/errors';
import { projectRoutes } from '../projects/projects.guard';
import { addMember, changeRole, leaveProject, listTeam, removeMember } from './team.service';
import { listCandidates } from './team.store';

/** The project team: members may read; changes need manageProjectUsers; anyone but an owner may leave. */
export function teamRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.get('/users', async (request) =>
      listTeam(deps, request.project.id, parse(teamListQuery, request.query)),
    );

    // Who can be added: GET /api/users is for administrators, but an owner who is not one must pick users too.
    scope.get('/users/candidates', { config: { permission: 'manageProjectUsers' } }, async (request) =>
      listCandidates(deps.db, request.project.id),
    );

    scope.post('/users', { config: { permission: 'manageProjectUsers' } }, async (request, reply) => {
      const input = parse(teamMemberInput, request.body);
      // The peer answers 204 (Swagger lists only 204); the list route shows the new member.
      await addMember(deps, request.user!, request.project.id, input);
      return reply.status(204).send();
    });

    scope.put('/users/:user_id', { config: { permission: 'manageProjectUsers' } }, async (request, reply) => {
      const userId = parse(idParam, (request.params as { user_id: unknown }).user_id);
      const { role } = parse(teamRoleInput, request.body);
      await changeRole(deps, request.user!, request.project.id, userId, role);
      return reply.status(204).send();
    });

    scope.delete(
      '/users/:user_id',
      { config: { permission: 'manageProjectUsers' } },
      async (request, reply) => {
        const userId = parse(idParam, (request.params as { user_id: unknown }).user_id);
        await removeMember(deps, request.user!, request.project.id, userId);
        return reply.status(204).send();
      },
    );

    scope.delete('/me', async (request, reply) => {
      await leaveProject(deps, request.user!, request.project.id);
      return reply.status(204).send();
    });
  });
}
