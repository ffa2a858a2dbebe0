import {
  ALL_PERMISSIONS,
  coded,
  Permission,
  type PermissionName,
  type TokenScope,
  tokenScopes,
} from '@signalbox/contracts';
import type { FastifyRequest } from 'fastify';
import { permissionScopes, routeScope } from '../http/route-scopes';
import { forbidden } from '../lib/errors';

/**
 * What an API token may reach within its owner's rights: its scopes (null: every scope) and its projects (null:
 * every project of its owner). A token limited in neither has its owner's full rights, as every token made before
 * scopes existed.
 */
export type TokenLimits = { scopes: readonly TokenScope[] | null; projectIds: readonly number[] | null };

declare module 'fastify' {
  interface FastifyRequest {
    /** The limits of the API token the request came with; null for a session (or a request without a caller). */
    tokenLimits: TokenLimits | null;
  }
}

/**
 * The project permission bits a token's scopes leave (every bit for a session or a token of every scope): a project's
 * `permissions` as the request sees them (its role info, what a task may pass, what a backup holds).
 */
export function scopePermissions(limits: TokenLimits | null): number {
  if (!limits || limits.scopes === null) return ALL_PERMISSIONS;
  let mask = 0;
  for (const [name, scope] of Object.entries(permissionScopes) as [PermissionName, TokenScope][])
    if (limits.scopes.includes(scope)) mask |= Permission[name];
  return mask;
}

export const isLimited = (limits: TokenLimits | null): limits is TokenLimits =>
  limits !== null && (limits.scopes !== null || limits.projectIds !== null);

export const hasScope = (limits: TokenLimits | null, scope: TokenScope) =>
  !limits || limits.scopes === null || limits.scopes.includes(scope);

/** Whether a project is one the request's token reaches (always, for a session or a token of every project). */
export const reachesProject = (request: FastifyRequest, projectId: number) =>
  !request.tokenLimits?.projectIds || request.tokenLimits.projectIds.includes(projectId);

/** The projects the request's token is limited to, or undefined when it reaches every project of its owner. */
export const tokenProjects = (request: FastifyRequest): readonly number[] | undefined =>
  request.tokenLimits?.projectIds ?? undefined;

/**
 * Refuses a request of a limited token that the route's scope does not allow (403 with the missing scope). Routes
 * that answer without signing in (`public`) and unknown routes (answered 404) are not checked.
 */
export function checkTokenScope(request: FastifyRequest) {
  const limits = request.tokenLimits;
  if (!isLimited(limits)) return;
  const { config, url, method } = request.routeOptions;
  if (config?.public || url === undefined) return;
  const scope = routeScope(method === undefined ? request.method : String(method), url, config);
  if (scope === undefined || scope === 'account') throw forbidden(coded('token_needs_full_rights'));
  if (!hasScope(limits, scope)) throw forbidden(coded('missing_token_scope', { scope }));
}

/** Scopes as stored: comma-separated in the catalogue's order; null when every scope is given (full rights). */
export function storedScopes(scopes: readonly TokenScope[] | null | undefined): string | null {
  if (!scopes) return null;
  const given = tokenScopes.filter((scope) => scopes.includes(scope));
  return given.length === tokenScopes.length ? null : given.join(',');
}

/** Scopes as read back: null (full rights) for a token stored without them; unknown names are dropped. */
export function readScopes(stored: string | null): TokenScope[] | null {
  if (stored === null) return null;
  const names = stored.split(',');
  return tokenScopes.filter((scope) => names.includes(scope));
}

/** Project ids as read back: null for a token of every project; anything but ids reads as no project at all. */
export function readProjectIds(stored: string | null): number[] | null {
  if (stored === null) return null;
  try {
    const ids: unknown = JSON.parse(stored);
    return Array.isArray(ids) ? ids.filter((id): id is number => Number.isSafeInteger(id)) : [];
  } catch {
    return [];
  }
}
