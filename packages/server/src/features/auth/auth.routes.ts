import {
  apiTokenCreatedSchema,
  apiTokenInput,
  apiTokenSchema,
  coded,
  type LoginOptions,
  loginInput,
  loginOptionsSchema,
  serverInfoSchema,
  userSchema,
} from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser, startSession } from '../../access/auth-hook';
import type { UserRow } from '../../access/principals.store';
import { expireSession } from '../../access/sessions.store';
import {
  failAttempt,
  passAttempt,
  signInAttempt,
  startAttempt,
  withRetryAfter,
} from '../../access/sign-in-throttle';
import { createToken, deleteToken, listTokens, projectsOutOfReach } from '../../access/tokens.store';
import { configuredChannels } from '../../alerts/senders';
import type { Deps } from '../../deps';
import { noContentResponse } from '../../http/path-params';
import { SESSION_COOKIE } from '../../http/request-guards';
import { AppError, fieldError, notFound, parse, unauthorized } from '../../lib/errors';
import { decoyHash, passwordMatches } from '../../lib/password-hash';
import { version } from '../../version';
import { findUserByLogin, toUser } from '../users';
import { ldapSignIn } from './ldap.service';
import { userTotp } from './totp.service';

export function loginOptions(deps: Pick<Deps, 'config'>): LoginOptions {
  const providers = Object.entries(deps.config.oidcProviders ?? {})
    .sort(([, a], [, b]) => a.order - b.order)
    .map(([id, p]) => ({ id, name: p.display_name || id, color: p.color, icon: p.icon }));
  return {
    oidc_providers: providers,
    login_with_password: !deps.config.passwordLoginDisabled,
    auth_methods: deps.config.totpEnabled ? { totp: { allow_recovery: deps.config.totpAllowRecovery } } : {},
  };
}

/**
 * The local user whose own password this is; null otherwise. An unknown login, and a user without a password
 * (created without one), are checked against a decoy hash: the answer takes as long, and is a refusal.
 */
async function passwordSignIn(password: string, user: UserRow | undefined): Promise<UserRow | null> {
  const local = user && user.external !== 1 && user.password !== '' ? user : undefined;
  const ok = await passwordMatches(password, local ? local.password : await decoyHash());
  return local && ok ? local : null;
}

const tokenParams = z.object({ id: z.string() });

export function authRoutes(app: FastifyInstance, deps: Deps) {
  // Plain text, not JSON: the answer is described by its media type (errors stay JSON).
  const pong = { type: 'string', const: 'pong' };
  const ping = {
    config: { public: true },
    schema: {
      response: { 200: { description: 'The server answers', content: { 'text/plain': { schema: pong } } } },
    },
  };
  app.get('/api/ping', ping, async (_request, reply) => reply.type('text/plain').send('pong'));

  app.get(
    '/api/auth/login',
    { config: { public: true }, schema: { response: { 200: loginOptionsSchema } } },
    async () => loginOptions(deps),
  );

  // The body is read after the sign-in method is known to be enabled.
  const login = {
    config: { public: true, parsesInHandler: true },
    schema: { body: loginInput, response: noContentResponse },
  };
  app.post('/api/auth/login', login, async (request, reply) => {
    if (deps.config.passwordLoginDisabled) throw new AppError(403, coded('password_login_disabled'));
    const input = parse(loginInput, request.body);
    const local = await findUserByLogin(deps.db, input.auth);
    const attempt = signInAttempt(input.auth, local?.id ?? null, request.ip);
    // A pair or address that must wait gets 429 before the password is looked at, right or wrong.
    await withRetryAfter(reply, () => startAttempt(deps, attempt));
    // With LDAP on, a login no local password user holds is the directory's to check (ldap.service.ts).
    const user =
      (await ldapSignIn(deps, input, local, request.log)) ?? (await passwordSignIn(input.password, local));
    if (!user) {
      failAttempt(deps, attempt);
      throw unauthorized(coded('incorrect_login'));
    }
    await passAttempt(deps, attempt);
    await startSession(deps, request, reply, user.id);
    return reply.status(204).send();
  });

  const logout = { config: { public: true }, schema: { response: noContentResponse } };
  app.post('/api/auth/logout', logout, async (request, reply) => {
    if (request.sessionId) {
      await expireSession(deps.db, request.sessionId);
      deps.bus.emit('logout', { sessionId: request.sessionId });
    }
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.status(204).send();
  });

  const read = { tokenScope: 'read' as const };
  // A limited token must not make a broader one, nor revoke its owner's other tokens.
  const account = { tokenScope: 'account' as const };
  app.get('/api/user', { config: read, schema: { response: { 200: userSchema } } }, async (request) => {
    const user = currentUser(request);
    const totp = await userTotp(deps.db, user.id);
    return totp ? { ...toUser(user), totp } : toUser(user);
  });

  const info = { config: read, schema: { response: { 200: serverInfoSchema } } };
  app.get('/api/info', info, async (request) => ({
    // How far a task's code reaches is for administrators: it tells an attacker which boundary to try.
    ...(currentUser(request).admin ? { task_sandbox: deps.tasks.sandbox() } : {}),
    version,
    ansible: '',
    web_host: deps.config.webRoot,
    use_remote_runner: deps.config.useRemoteRunner,
    git_client: 'cmd_git',
    schedule_timezone: deps.config.scheduleTimezone,
    task_retention_days: deps.config.taskRetentionDays,
    alert_channels: configuredChannels(deps.config),
    auth_methods: {},
    premium_features: {},
  }));

  const tokenList = { config: read, schema: { response: { 200: z.array(apiTokenSchema) } } };
  app.get('/api/user/tokens', tokenList, async (request) => listTokens(deps.db, currentUser(request).id));
  // An absent body is an empty one: parsed in the handler, which tells the two apart.
  app.post(
    '/api/user/tokens',
    {
      config: { ...account, parsesInHandler: true },
      schema: { body: apiTokenInput, response: { 201: apiTokenCreatedSchema } },
    },
    async (request, reply) => {
      const input = parse(apiTokenInput, request.body ?? {});
      const user = currentUser(request);
      const projectIds = input?.project_ids ?? null;
      const [unreachable] = projectIds ? await projectsOutOfReach(deps.db, user, projectIds) : [];
      if (unreachable !== undefined)
        throw fieldError('project_ids', coded('project_not_found', { id: unreachable }));
      const { token, info } = await createToken(deps.db, user.id, input?.name ?? '', input?.expires_in_days, {
        scopes: input?.scopes ?? null,
        projectIds,
      });
      // The peer's token is its own id, and its clients send the answer's `id` as the bearer: so `id` is the
      // token here too. The list shows the token's non-secret id (`token_id` in this answer).
      return reply.status(201).send({ ...info, id: token, token_id: info.id, token });
    },
  );
  // A token is named by its listed id or by the token itself; any other string is a 404.
  app.delete<{ Params: { id: string } }>(
    '/api/user/tokens/:id',
    { config: account, schema: { params: tokenParams, response: noContentResponse } },
    async (request, reply) => {
      const user = currentUser(request);
      const tokenId = await deleteToken(deps.db, user.id, request.params.id.slice(0, 64));
      if (!tokenId) throw notFound('token');
      // Live sockets opened with the token close at once.
      deps.bus.emit('tokensRevoked', { userId: user.id, tokenIds: [tokenId] });
      return reply.status(204).send();
    },
  );
}
