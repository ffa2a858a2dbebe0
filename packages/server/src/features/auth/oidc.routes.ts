import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { startSession } from '../../access/auth-hook';
import type { Deps } from '../../deps';
import { applyGroupMappings } from './oidc.groups';
import {
  beginSignIn,
  checkCallback,
  createOidcClients,
  findProvider,
  finishSignIn,
  PENDING_TTL_MS,
  type PendingSignIn,
  safeLocalPath,
  userForClaims,
  webBasePath,
} from './oidc.service';

/** Holds the sealed (AES-GCM: encrypted and tamper-proof) state between the login redirect and the callback. */
export const OIDC_COOKIE = 'signalbox_oidc';
const COOKIE_PATH = '/api/auth/oidc';

type ProviderParams = { provider: string; '*'?: string };
/** A provider is named by its configured id; an unknown one is a 404 (findProvider). */
const providerParams = z.object({ provider: z.string() });
type CallbackRoute = { Params: ProviderParams; Querystring: Record<string, unknown> };

/** GET /api/auth/oidc/{id}/login and its redirect callback (authorization code flow with PKCE, state and nonce). */
export function oidcRoutes(app: FastifyInstance, deps: Deps) {
  const clients = createOidcClients();

  /** The callback address the provider sends the browser back to. */
  const redirectUriFor = (request: FastifyRequest, id: string, configured?: string) => {
    if (configured) return configured;
    const root = deps.config.webRoot;
    const origin = /^https?:\/\//.test(root) ? new URL(root).origin : `${request.protocol}://${request.host}`;
    return `${origin}${webBasePath(root)}/api/auth/oidc/${encodeURIComponent(id)}/redirect`;
  };

  const readPending = (request: FastifyRequest): PendingSignIn | null => {
    const sealed = request.cookies[OIDC_COOKIE];
    if (!sealed) return null;
    try {
      return JSON.parse(deps.box.open(sealed)) as PendingSignIn;
    } catch {
      return null;
    }
  };

  const clearPending = (reply: FastifyReply) => reply.clearCookie(OIDC_COOKIE, { path: COOKIE_PATH });

  app.get<{ Params: ProviderParams; Querystring: { redirect?: unknown } }>(
    '/api/auth/oidc/:provider/login',
    { config: { public: true }, schema: { params: providerParams } },
    async (request, reply) => {
      const { provider: id } = request.params;
      const provider = findProvider(deps, id);
      const config = await clients.get(id, provider);
      const { redirect } = request.query;
      const { url, pending } = await beginSignIn(
        config,
        provider,
        id,
        redirectUriFor(request, id, provider.redirect_url),
        typeof redirect === 'string' ? redirect.slice(0, 2000) : '/',
      );
      reply.setCookie(OIDC_COOKIE, deps.box.seal(JSON.stringify(pending)), {
        path: COOKIE_PATH,
        httpOnly: true,
        // Lax: the provider sends the browser back with a top-level GET, which carries Lax cookies.
        sameSite: 'lax',
        secure: request.protocol === 'https',
        maxAge: PENDING_TTL_MS / 1000,
      });
      return reply.redirect(url.href, 302);
    },
  );

  const callback = async (request: FastifyRequest<CallbackRoute>, reply: FastifyReply) => {
    const { provider: id, '*': rest } = request.params;
    const provider = findProvider(deps, id);
    const { query } = request;
    const pending = checkCallback(id, provider, readPending(request), query);
    clearPending(reply);
    const config = await clients.get(id, provider);
    const claims = await finishSignIn(config, id, provider, pending, query, request.log);
    const user = await applyGroupMappings(
      deps,
      id,
      provider,
      await userForClaims(deps, id, provider, claims),
      claims,
    );
    await startSession(deps, request, reply, user.id);
    // A path after /redirect/ (the peer's form) wins over the one kept since the login.
    const to = rest ? safeLocalPath(rest) : pending.to;
    return reply.redirect(`${webBasePath(deps.config.webRoot)}${to}`, 302);
  };

  const redirect = { config: { public: true }, schema: { params: providerParams } };
  app.get<CallbackRoute>('/api/auth/oidc/:provider/redirect', redirect, callback);
  // The rest of the path after /redirect/ is where to go once signed in.
  const redirectTo = {
    config: { public: true },
    schema: { params: providerParams.extend({ '*': z.string() }) },
  };
  app.get<CallbackRoute>('/api/auth/oidc/:provider/redirect/*', redirectTo, callback);
}
