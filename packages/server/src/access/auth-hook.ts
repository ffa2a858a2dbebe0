import { coded, type PermissionName, TOTP_REQUIRED } from '@signalbox/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps';
import { SESSION_COOKIE } from '../http/request-guards';
import { sha256 } from '../lib/crypto';
import { forbidden, unauthorized } from '../lib/errors';
import { isTaskUser, type TaskPrincipal, taskOfCredential } from '../tasks/state-credentials.store';
import { findUserById, secondFactorRequired, type UserRow } from './principals.store';
import { recentAccessOf } from './recent-access';
import { createSession, resolveSession } from './sessions.store';
import { checkTokenScope, hasScope } from './token-limits';
import { findTokenOwner, tokenDigest } from './tokens.store';

type TokenOwner = NonNullable<Awaited<ReturnType<typeof findTokenOwner>>>;
/** A signed-in session (its second factor given, if it needs one) and its user. */

declare module 'fastify' {
  interface FastifyRequest {
    user: UserRow | null;
    sessionId: number | null;
    /** A session signed in with a password that still waits for its second factor (TOTP): no `user` until then. */
    halfSignedIn: { sessionId: number; userId: number } | null;
    /** The API token the request came with (its id and name, never its value); null for a session. */
    apiToken: { id: string; name: string } | null;
    /** A running task that signed in with its own credentials (routes with `basicAuth` only); no `user` then. */
    runningTask: TaskPrincipal | null;
  }
  interface FastifyContextConfig {
    /** Reachable without signing in. */
    public?: boolean;
    /** Only global admins. */
    admin?: boolean;
    /** Project routes: the permission bit this route needs. */
    permission?: PermissionName;
    /** Reachable by a session that still waits for its second factor: the routes that complete it. */
    secondFactor?: boolean;
    /**
     * Takes HTTP basic auth too, as Terraform's http backend sends it: a running task's own credentials
     * (`task-<id>` and its secret), or any user name with an API token as the password. Other routes ignore it.
     */
    basicAuth?: boolean;
  }
}

/** User name and password of an `Authorization: Basic` header; null for another scheme or a malformed one. */
function basicCredentials(header: string): { username: string; password: string } | null {
  const match = /^basic\s+([A-Za-z0-9+/=]{1,2000})$/i.exec(header.trim());
  if (!match) return null;
  const text = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon < 0 ? null : { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

/**
 * Resolves the caller from the session cookie or an `Authorization: Bearer` API token (and, on routes that take
 * HTTP basic auth, from a task's credentials or an API token given as the password).
 */
export async function identify(deps: Pick<Deps, 'db' | 'bus'>, request: FastifyRequest): Promise<void> {
  request.user = null;
  request.sessionId = null;
  request.halfSignedIn = null;
  request.tokenLimits = null;
  request.apiToken = null;
  request.runningTask = null;
  const header = request.headers.authorization;
  const basic = header && request.routeOptions.config?.basicAuth ? basicCredentials(header) : null;
  if (basic && isTaskUser(basic.username)) {
    request.runningTask = await taskOfCredential(deps.db, basic.username, basic.password);
    if (!request.runningTask) throw unauthorized(coded('state_credentials_invalid'));
    return;
  }
  const bearer = header && /^bearer\s+/i.test(header) ? header.replace(/^bearer\s+/i, '') : basic?.password;
  if (bearer !== undefined) {
    const digest = tokenDigest(bearer);
    const recent = recentAccessOf<TokenOwner, unknown, SessionLookup>(deps.bus);
    const owner = await recent.tokenThrough(
      digest,
      async () => (await findTokenOwner(deps.db, digest)) ?? undefined,
    );
    // A remembered token's own expiry is checked on every use (the read leaves expired tokens out).
    if (!owner || (owner.expires && Date.parse(owner.expires) <= Date.now())) return;
    request.tokenLimits = owner.limits;
    request.apiToken = owner.token;
    // The owner as this request sees them, read now: a token without the admin scope acts as a user who is no
    // administrator, wherever a route asks (project access included).
    request.user =
      owner.user.admin && !hasScope(owner.limits, 'admin') ? { ...owner.user, admin: 0 } : owner.user;
    return;
  }
  const cookie = request.cookies[SESSION_COOKIE];
  if (!cookie) return;
  const digest = sha256(cookie);
  const recent = recentAccessOf<TokenOwner, unknown, SessionLookup>(deps.bus);
  // Remembered only with its user; forgotten with every sign-out, ended session, access change or API write (see
  // RecentAccess).
  const found = await recent.sessionThrough(
    digest,
    () => lookUpSession(deps, cookie),
    (s) => s.user !== null,
  );
  if (!found) return;
  request.sessionId = found.sessionId;
  if (found.user) request.user = found.user;
  // Signed out by its id like any session; nothing else is reached until the second factor is given.
  else request.halfSignedIn = { sessionId: found.sessionId, userId: found.userId };
}

/** A session cookie's session, with its user once the session is fully signed in (null while it waits for a code). */
type SessionLookup = { sessionId: number; userId: number; user: UserRow | null };

async function lookUpSession(deps: Pick<Deps, 'db'>, cookie: string): Promise<SessionLookup | undefined> {
  const session = await resolveSession(deps.db, cookie);
  if (!session) return undefined;
  if (session.verified === 0) return { sessionId: session.id, userId: session.user_id, user: null };
  const user = await findUserById(deps.db, session.user_id);
  return user ? { sessionId: session.id, userId: session.user_id, user } : undefined;
}

/**
 * Every /api route needs a signed-in user unless its config says `public`; an API token limited to scopes needs the
 * route's scope too (token-limits.ts). A session still waiting for its second factor gets 401 `TOTP_REQUIRED` (as
 * the peer answers) everywhere but the routes marked `secondFactor`.
 */
export function registerAuth(app: FastifyInstance, deps: Pick<Deps, 'db' | 'bus'>) {
  app.decorateRequest('user', null);
  app.decorateRequest('sessionId', null);
  app.decorateRequest('halfSignedIn', null);
  app.decorateRequest('tokenLimits', null);
  app.decorateRequest('apiToken', null);
  app.decorateRequest('runningTask', null);
  app.addHook('onRequest', async (request) => {
    if (!request.url.startsWith('/api/')) return;
    await identify(deps, request);
    const config = request.routeOptions.config;
    if (config?.public) return;
    // A task's credentials reach only the routes that take them; the project guard checks its project.
    if (request.runningTask) return;
    if (!request.user) {
      if (!request.halfSignedIn) throw unauthorized();
      if (config?.secondFactor) return;
      throw unauthorized(TOTP_REQUIRED);
    }
    // A limited token's scope first: an admin route answers a token without the admin scope 403 for the scope.
    checkTokenScope(request);
    if (config?.admin && !request.user.admin) throw forbidden(coded('admin_only'));
  });
}

/**
 * Starts a session for a user who gave their password (or signed in with a provider): one that waits for a code
 * first when the user has two-factor sign-in on, unless `secondFactorDone` (it was just given).
 */
export async function startSession(
  deps: Pick<Deps, 'db' | 'config'>,
  request: FastifyRequest,
  reply: FastifyReply,
  userId: number,
  { secondFactorDone = false } = {},
) {
  const verified = secondFactorDone || !(await secondFactorRequired(deps, userId));
  const userAgent = String(request.headers['user-agent'] ?? '');
  const token = await createSession(deps.db, userId, request.ip, userAgent, verified);
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
