import {
  totpConfirmedSchema,
  totpDisableInput,
  totpEnrollmentSchema,
  totpPasscodeInput,
  totpRecoveryInput,
  totpStatusSchema,
} from '@signalbox/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentUser, startSession } from '../../access/auth-hook';
import { expireSession } from '../../access/sessions.store';
import { withRetryAfter } from '../../access/sign-in-throttle';
import type { Deps } from '../../deps';
import { noContentResponse, pathIds, type ZodTypeProvider } from '../../http/path-params';
import { forbidden, parse } from '../../lib/errors';
import type { Actor } from '../users';
import {
  confirmTotp,
  disableTotp,
  SET_UP_OWN,
  startTotp,
  totpQrPng,
  totpStatus,
  VIEW_OWN_TOTP,
  verifyPasscode,
  verifyRecoveryCode,
} from './totp.service';

const actorOf = (request: FastifyRequest): Actor => ({
  user: currentUser(request),
  sessionId: request.sessionId,
  address: request.ip,
});
const byUser = pathIds('id');
const byTotp = pathIds('id', 'totp_id');
/** Answers that carry the secret or recovery codes are kept by no cache. */
const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');
const png = {
  description: 'The QR code of the otpauth:// URI, 256×256 pixels',
  content: { 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } } },
};

/**
 * Two-factor sign-in (TOTP), at the peer's paths: setting it up under /api/users/{id}/2fas/totp, and the second
 * step of signing in (/api/auth/verify, /api/auth/recovery), which only a session waiting for it reaches.
 */
export function totpRoutes(fastify: FastifyInstance, deps: Deps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();

  /** The session waiting for its second factor ends; a new one, fully signed in, takes its place (new cookie). */
  async function completeSignIn(
    request: FastifyRequest,
    reply: FastifyReply,
    userId: number,
    sessionId: number,
  ) {
    await expireSession(deps.db, sessionId);
    await startSession(deps, request, reply, userId, { secondFactorDone: true });
    return reply.status(204).send();
  }

  // A signed-in session reaching these has nothing more to give: 204, as the peer answers.
  const secondStep = { secondFactor: true, tokenScope: 'account' as const };
  // A second factor is the account's own: no limited API token sets one up, reads its secret or turns it off.
  const account = { tokenScope: 'account' as const };
  app.post(
    '/api/auth/verify',
    { config: secondStep, schema: { body: totpPasscodeInput, response: noContentResponse } },
    async (request, reply) => {
      const pending = request.halfSignedIn;
      if (!pending) return reply.status(204).send();
      const { passcode } = request.body;
      await withRetryAfter(reply, () => verifyPasscode(deps, pending.userId, request.ip, passcode));
      return completeSignIn(request, reply, pending.userId, pending.sessionId);
    },
  );

  app.post(
    '/api/auth/recovery',
    { config: secondStep, schema: { body: totpRecoveryInput, response: noContentResponse } },
    async (request, reply) => {
      const pending = request.halfSignedIn;
      if (!pending) return reply.status(204).send();
      const code = request.body.recovery_code;
      await withRetryAfter(reply, () => verifyRecoveryCode(deps, pending.userId, request.ip, code));
      return completeSignIn(request, reply, pending.userId, pending.sessionId);
    },
  );

  app.get(
    '/api/users/:id/2fas/totp',
    { config: account, schema: { params: byUser, response: { 200: totpStatusSchema } } },
    async (request) => totpStatus(deps, actorOf(request), request.params.id),
  );

  // No body: the new secret is made by the server.
  app.post(
    '/api/users/:id/2fas/totp',
    { config: account, schema: { params: byUser, response: { 200: totpEnrollmentSchema } } },
    async (request, reply) => {
      const enrollment = await startTotp(deps, actorOf(request), request.params.id);
      return noStore(reply).send(enrollment);
    },
  );

  app.get(
    '/api/users/:id/2fas/totp/:totp_id/qr',
    { config: account, schema: { params: byTotp, response: { 200: png } } },
    async (request, reply) => {
      const { id, totp_id } = request.params;
      const image = await totpQrPng(deps, actorOf(request), id, totp_id);
      return noStore(reply).type('image/png').send(image);
    },
  );

  // Someone else's set-up is refused (403) before the body is looked at: the handlers parse it.
  app.post(
    '/api/users/:id/2fas/totp/:totp_id/confirm',
    {
      config: { ...account, parsesInHandler: true },
      schema: { params: byTotp, body: totpPasscodeInput, response: { 200: totpConfirmedSchema } },
    },
    async (request, reply) => {
      const { id, totp_id } = request.params;
      const actor = actorOf(request);
      if (actor.user?.id !== id) throw forbidden(SET_UP_OWN);
      const { passcode } = parse(totpPasscodeInput, request.body);
      const confirmed = await confirmTotp(deps, actor, id, totp_id, passcode);
      return noStore(reply).send(confirmed);
    },
  );

  app.delete(
    '/api/users/:id/2fas/totp/:totp_id',
    {
      config: { ...account, parsesInHandler: true },
      schema: { params: byTotp, body: totpDisableInput, response: noContentResponse },
    },
    async (request, reply) => {
      const { id, totp_id } = request.params;
      const actor = actorOf(request);
      if (!actor.user?.admin && actor.user?.id !== id) throw forbidden(VIEW_OWN_TOTP);
      const proof = parse(totpDisableInput, request.body);
      await withRetryAfter(reply, () => disableTotp(deps, actor, id, totp_id, proof));
      return reply.status(204).send();
    },
  );
}
