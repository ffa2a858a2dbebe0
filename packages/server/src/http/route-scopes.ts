import type { PermissionName, TokenScope } from '@signalbox/contracts';
import type { FastifyContextConfig } from 'fastify';

/**
 * The scope a route asks of a limited token, or `account`: only a session or a token with full rights (a token must
 * not mint a broader one, nor change its owner's second factors).
 */
export type RouteScope = TokenScope | 'account';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The scope a limited API token needs for this route, where neither `admin` nor `permission` says it (and for a
     * project route, where a read needs no more than `read`). A route that no rule maps is refused to limited tokens.
     */
    tokenScope?: RouteScope;
  }
}

/** The scope each project permission bit stands for. */
export const permissionScopes: Record<PermissionName, TokenScope> = {
  runProjectTasks: 'run',
  updateProject: 'write',
  manageProjectResources: 'write',
  manageProjectUsers: 'write',
};

export const PROJECT_ROUTES = '/api/project/:project_id';

/**
 * The scope a route needs, from its config: `tokenScope` when it says one, `admin` for administrators' routes, the
 * scope of its project permission bit, `read` for a project route any member may read. Undefined: no rule maps the
 * route, and a limited token is refused (a route added without thought is closed to limited tokens, not open).
 */
export function routeScope(
  method: string,
  url: string,
  config: FastifyContextConfig | undefined,
): RouteScope | undefined {
  if (config?.tokenScope) return config.tokenScope;
  if (config?.admin) return 'admin';
  if (config?.permission) return permissionScopes[config.permission];
  const read = method === 'GET' || method === 'HEAD';
  if (read && (url === PROJECT_ROUTES || url.startsWith(`${PROJECT_ROUTES}/`))) return 'read';
  return undefined;
}
