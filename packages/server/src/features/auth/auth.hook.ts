import type { PermissionName } from '@signalbox/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps';
import { SESSION_COOKIE } from '../../http/request-guards';
import { forbidden, unauthorized } from '../../lib/errors';
import { findUserById, type UserRow } from '../users/users.store';
import { recentAccessOf } from './recent-access';
import { createSession, resolveSession } from './sessions.store';
import { findTokenOwner, tokenDigest } from './tokens.store';

type TokenOwner = NonNullable<Awaited<ReturnType<typeof findTokenOwner>>>;

declare module 'fastify' {
  interface FastifyRequest {
    user: UserRow | null;
    sessionId: number | null;
  }
  interface FastifyContextConfig {
    /** Reachable without signing in. */
    public?: boolean;
    /** Only global admins. */
    admin?: boolean;
    /** Project routes: the permission bit this route needs. */
    permission?: PermissionName;
  }
}

/** Resolves the caller from the session cookie or an `Authorization: Bearer` API token. */
export async function identify(deps: Pick<Deps, 'db' | 'bus'>, request: FastifyRequest): Promise<void> {
  request.user = null;
  request.sessionId = null;
  const header = request.headers.authorization;
  if (header && /^bearer\s+/i.test(header)) {
    const digest = tokenDigest(header.replace(/^bearer\s+/i, ''));
    const recent = recentAccessOf<TokenOwner, unknown>(deps.bus);
    let owner = recent.token(digest);
    if (owner?.expires && Date.parse(owner.expires) <= Date.now()) owner = undefined;
    if (!owner) {
      owner = await findTokenOwner(deps.db, digest);
      if (owner) recent.rememberToken(digest, owner);
    }
    request.user = owner?.user ?? null;
    return;
  }
  const cookie = request.cookies[SESSION_COOKIE];
  if (!cookie) return;
  const session = await resolveSession(deps.db, cookie);
  if (!session) return;
  request.user = (await findUserById(deps.db, session.user_id)) ?? null;
  request.sessionId = request.user ? session.id : null;
}

/** Every /api route needs a signed-in user unless its config says `public`. */
export function registerAuth(app: FastifyInstance, deps: Pick<Deps, 'db' | 'bus'>) {
  app.decorateRequest('user', null);
  app.decorateRequest('sessionId', null);
  app.addHook('onRequest', async (request) => {
    if (!request.url.startsWith('/api/')) return;
    await identify(deps, request);
    const config = request.routeOptions.config;
    if (config?.public) return;
    if (!request.user) throw unauthorized();
    if (config?.admin && !request.user.admin) throw forbidden('Only administrators can do this');
  });
}

export async function startSession(
  deps: Pick<Deps, 'db'>,
  request: FastifyRequest,
  reply: FastifyReply,
  userId: number,
) {
  const token = await createSession(deps.db, userId, request.ip, String(request.headers['user-agent'] ?? ''));
  reply.setCookie(SESSION_COOKIE, token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https',
    maxAge: 7 * 24 * 3600,
  });
}

/** The signed-in user; routes behind registerAuth always have one. */
export function currentUser(request: FastifyRequest): UserRow {
  if (!request.user) throw unauthorized();
  return request.user;
}
