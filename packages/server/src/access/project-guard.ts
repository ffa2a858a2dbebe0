import {
  ALL_PERMISSIONS,
  coded,
  idParam,
  Permission,
  type ProjectRole,
  rolePermissions,
} from '@signalbox/contracts';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, RawServerDefault } from 'fastify';
import type { Deps } from '../deps';
import type { ZodTypeProvider } from '../http/path-params';
import { forbidden, notFound, parse } from '../lib/errors';
import { currentUser } from './auth-hook';
import { findProjectWithRole, type ProjectRow } from './principals.store';
import { recentAccessOf } from './recent-access';
import { isLimited, reachesProject, scopePermissions } from './token-limits';

type ProjectWithRole = NonNullable<Awaited<ReturnType<typeof findProjectWithRole>>>;

import { serveSharedAnswers } from './shared-answers';

declare module 'fastify' {
  interface FastifyRequest {
    project: ProjectRow;
    projectRole: ProjectRole | '';
    permissions: number;
  }
}

/**
 * Registers routes under /api/project/:project_id behind one guard: the project must exist, the caller must be
 * a member (admins bypass), and the route's `config.permission` bit must be held. Members may always read. An API
 * token limited to scopes or projects gets 404 for a project it does not reach, or whose owner is no member.
 * The guard runs before the route's own path parameters are validated, so an unknown project or a non-member
 * is answered first.
 */
export function projectRoutes(
  app: FastifyInstance,
  deps: Pick<Deps, 'db' | 'bus'>,
  routes: FastifyPluginAsync<Record<never, never>, RawServerDefault, ZodTypeProvider>,
) {
  app.register(
    async (scope) => {
      scope.decorateRequest('project', null as unknown as ProjectRow);
      scope.decorateRequest('projectRole', '');
      scope.decorateRequest('permissions', 0);
      scope.addHook('preValidation', async (request: FastifyRequest) => {
        const projectId = parse(idParam, (request.params as { project_id: unknown }).project_id);
        if (request.runningTask) {
          // A running task's own credentials: its own project only (any other is none it could know of), and no
          // more than running tasks may do there.
          const found =
            request.runningTask.projectId === projectId
              ? await findProjectWithRole(deps.db, projectId, 0)
              : null;
          if (!found) throw notFound('project');
          request.project = found.project;
          request.projectRole = '';
          request.permissions = Permission.runProjectTasks;
          const needed = request.routeOptions.config?.permission;
          if (needed && (request.permissions & Permission[needed]) === 0)
            throw forbidden(coded('missing_permission', { permission: needed }));
          return;
        }
        const user = currentUser(request);
        // A project a limited token does not reach is none it could know of.
        if (!reachesProject(request, projectId)) throw notFound('project');
        const recent = recentAccessOf<unknown, ProjectWithRole>(deps.bus);
        const found = await recent.projectThrough(
          projectId,
          user.id,
          async () => (await findProjectWithRole(deps.db, projectId, user.id)) ?? undefined,
        );
        if (!found) throw notFound('project');
        if (!found.role && !user.admin) {
          throw isLimited(request.tokenLimits) ? notFound('project') : forbidden(coded('not_project_member'));
        }
        const role = found.role as ProjectRole | '';
        request.project = found.project;
        request.projectRole = role;
        const held = user.admin ? ALL_PERMISSIONS : role ? rolePermissions[role] : 0;
        request.permissions = held & scopePermissions(request.tokenLimits);
        const needed = request.routeOptions.config?.permission;
        if (needed && (request.permissions & Permission[needed]) === 0) {
          throw forbidden(coded('missing_permission', { permission: needed }));
        }
      });
      serveSharedAnswers(scope, deps);
      await routes(scope.withTypeProvider<ZodTypeProvider>(), {});
    },
    { prefix: '/api/project/:project_id' },
  );
}
