import { passwordInput, userCreateInput, userSchema, userUpdateInput } from '@signalbox/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { callerSharedAnswer } from '../../access/shared-answers';
import { withRetryAfter } from '../../access/sign-in-throttle';
import type { Deps } from '../../deps';
import { noContentResponse, pathIds, type ZodTypeProvider } from '../../http/path-params';
import { parse } from '../../lib/errors';
import { withTotp } from '../auth';
import { clearSignInLock, viewUser } from './sign-in-lock';
import {
  type Actor,
  assertAdminOrSelf,
  changePassword,
  createUser,
  deleteUser,
  EDIT_OWN,
  PASSWORD_OWN,
  updateUser,
} from './users.service';
import { listUsers, toUser } from './users.store';

const actorOf = (request: FastifyRequest): Actor => ({
  user: currentUser(request),
  sessionId: request.sessionId,
  address: request.ip,
});
const byId = { schema: { params: pathIds('id') } };
/**
 * A user changing someone else is refused (403) before the body is looked at: the handler parses it. A limited API
 * token needs the admin scope to change an account (its own included).
 */
const ownAccount = { config: { parsesInHandler: true, tokenScope: 'admin' as const } };

/** Global user administration: admins manage everyone, a user their own account. */
export function usersRoutes(fastify: FastifyInstance, deps: Deps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/api/users',
    {
      config: { admin: true },
      schema: { response: { 200: z.array(userSchema) } },
      // Kept per caller until a write or an access change (see callerSharedAnswer).
      ...callerSharedAnswer(deps),
    },
    async () => withTotp(deps.db, (await listUsers(deps.db)).map(toUser)),
  );

  app.post(
    '/api/users',
    { config: { admin: true }, schema: { body: userCreateInput, response: { 201: userSchema } } },
    async (request, reply) => reply.status(201).send(await createUser(deps, actorOf(request), request.body)),
  );

  // The peer's Swagger spells these with a trailing slash; the router ignores trailing slashes (app.ts).
  for (const path of ['/api/users/:id']) {
    const view = {
      config: { tokenScope: 'read' as const },
      schema: { ...byId.schema, response: { 200: userSchema } },
    };
    app.get(path, view, async (request) => {
      const [user] = await withTotp(deps.db, [await viewUser(deps, actorOf(request), request.params.id)]);
      return user;
    });

    app.put(
      path,
      { ...ownAccount, schema: { ...byId.schema, body: userUpdateInput, response: noContentResponse } },
      async (request, reply) => {
        const { id } = request.params;
        assertAdminOrSelf(actorOf(request), id, EDIT_OWN);
        const input = parse(userUpdateInput, request.body);
        await withRetryAfter(reply, () => updateUser(deps, actorOf(request), id, input));
        return reply.status(204).send();
      },
    );

    const remove = { config: { admin: true }, schema: { ...byId.schema, response: noContentResponse } };
    app.delete(path, remove, async (request, reply) => {
      await deleteUser(deps, actorOf(request), request.params.id);
      return reply.status(204).send();
    });
  }

  app.post(
    '/api/users/:id/password',
    { ...ownAccount, schema: { ...byId.schema, body: passwordInput, response: noContentResponse } },
    async (request, reply) => {
      const { id } = request.params;
      assertAdminOrSelf(actorOf(request), id, PASSWORD_OWN);
      const input = parse(passwordInput, request.body);
      await withRetryAfter(reply, () => changePassword(deps, actorOf(request), id, input));
      return reply.status(204).send();
    },
  );

  // Clears the sign-in throttle of the user's login (GET users/{id} shows `sign_in_locked_until`).
  const unlock = { config: { admin: true }, schema: { ...byId.schema, response: noContentResponse } };
  app.delete('/api/users/:id/sign-in-lock', unlock, async (request, reply) => {
    await clearSignInLock(deps, actorOf(request), request.params.id);
    return reply.status(204).send();
  });
}
