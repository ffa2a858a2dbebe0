import { coded } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  failAttempt,
  passAttempt,
  signInAttempt,
  startAttempt,
  withRetryAfter,
} from '../../access/sign-in-throttle';
import { insertReturningId, now } from '../../db/values';
import type { Deps } from '../../deps';
import { noContentResponse } from '../../http/path-params';
import { parse, unauthorized } from '../../lib/errors';
import { runnerClose, runnerRegistrationSchema, runnerTokenHeader } from '../../runner-protocol/protocol';
import { findRemoteRunnerByToken } from '../../runners/server/runners.store';
import {
  checkRunnerPublicKey,
  globalRegistration,
  newRunnerToken,
  oneTimeRegistration,
  runnerTokenOf,
} from './runner-link.service';

const registeredSchema = z.strictObject({
  id: z.number().int(),
  token: z
    .string()
    .describe("The runner's own token: shown only in this answer, kept by the server as a hash"),
});

/**
 * The routes a `signalbox runner` process talks to: registration (a registration token gets the runner its own
 * token), unregistration, and its WebSocket (runners/protocol.ts). None takes a session or API token: the runner's
 * token (X-Runner-Token) names it, and the server keeps only its SHA-256.
 */
export function runnerLinkRoutes(app: FastifyInstance, deps: Deps) {
  app.post(
    '/api/internal/runners',
    {
      config: { public: true, parsesInHandler: true },
      schema: {
        summary: 'Register a remote runner',
        body: runnerRegistrationSchema,
        response: { 200: registeredSchema },
      },
    },
    async (request, reply) => {
      const input = parse(runnerRegistrationSchema, request.body);
      checkRunnerPublicKey(input);
      // A valid one-time token (made by the console, unguessable) is taken whatever failed before from the
      // caller's address: only wrong guesses, and the global token an admin chose, are throttled.
      let accepted = await oneTimeRegistration(deps, input);
      if (!accepted) {
        // Guessing registration tokens is throttled like guessing passwords, by the caller's address.
        const attempt = signInAttempt('runner registration', null, request.ip);
        await withRetryAfter(reply, () => startAttempt(deps, attempt));
        accepted = await globalRegistration(deps, input);
        if (!accepted) {
          failAttempt(deps, attempt);
          throw unauthorized(coded('registration_token_invalid'));
        }
        await passAttempt(deps, attempt);
      }
      const token = newRunnerToken();
      const id = await insertReturningId(deps.db, deps.dialect, 'remote_runner', {
        project_id: accepted.projectId,
        name: input.name ?? `runner-${token.slice(0, 6)}`,
        tags: JSON.stringify([...new Set(input.tags ?? [])]),
        token_hash: runnerTokenOf(token),
        public_key: input.public_key,
        max_parallel_tasks: input.max_parallel_tasks ?? 1,
        active: 1,
        webhook: input.webhook ?? '',
        created: now(),
      });
      request.log.info({ runnerId: id, projectId: accepted.projectId }, 'remote runner registered');
      return { id, token };
    },
  );

  app.delete(
    '/api/internal/runners',
    {
      config: { public: true },
      schema: {
        summary: 'Unregister a remote runner',
        description: "The runner's own token (from its registration) in the X-Runner-Token header names it.",
        response: noContentResponse,
      },
    },
    async (request, reply) => {
      const token = request.headers[runnerTokenHeader];
      const runner =
        typeof token === 'string' && token
          ? await findRemoteRunnerByToken(deps.db, runnerTokenOf(token))
          : null;
      if (!runner) throw unauthorized(coded('runner_token_refused'));
      await deps.db.deleteFrom('remote_runner').where('id', '=', runner.id).execute();
      await deps.tasks.runners.unregistered(runner.id);
      request.log.info({ runnerId: runner.id }, 'remote runner unregistered');
      return reply.status(204).send();
    },
  );

  app.get('/api/internal/runners/ws', { websocket: true, config: { public: true } }, (socket, request) => {
    const token = request.headers[runnerTokenHeader];
    // Nothing is read until the token is checked: the runner's first message waits in the socket.
    socket.pause();
    void (async () => {
      const runner =
        typeof token === 'string' && token
          ? await findRemoteRunnerByToken(deps.db, runnerTokenOf(token))
          : null;
      // Reading again before a close: the closing handshake needs the runner's answer.
      socket.resume();
      if (!runner) return socket.close(runnerClose.unauthorized.code, runnerClose.unauthorized.reason);
      if (socket.readyState !== socket.OPEN) return;
      deps.tasks.runners.connect(socket, runner);
    })().catch((err) => {
      request.log.warn({ err }, 'opening a runner socket failed');
      socket.resume();
      socket.close(1011, 'Internal error');
    });
  });
}
