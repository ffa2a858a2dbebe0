import { idParam, passwordInput, userCreateInput, userUpdateInput } from '@signalbox/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps';
import { parse } from '../../lib/errors';
import { currentUser } from '../auth/auth.hook';
import { withRetryAfter } from '../auth/sign-in-throttle';
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
const userId = (request: FastifyRequest) => parse(idParam, (request.params as { id: unknown }).id);

/** Global user administration: admins manage everyone, a user their own account. */
export function usersRoutes(app: FastifyInstance, deps: Deps) {
  app.get('/api/users', { config: { admin: true } }, async () => (await listUsers(deps.db)).map(toUser));

  app.post('/api/users', { config: { admin: true } }, async (request, reply) => {
    const input = parse(userCreateInput, request.body);
    return reply.status(201).send(await createUser(deps, actorOf(request), input));
  });

  // The peer's Swagger spells these with a trailing slash; the router ignores trailing slashes (app.ts).
  for (const path of ['/api/users/:id']) {
    app.get(path, async (request) => viewUser(deps, actorOf(request), userId(request)));

    app.put(path, async (request, reply) => {
      const id = userId(request);
      assertAdminOrSelf(actorOf(request), id, EDIT_OWN);
      const input = parse(userUpdateInput, request.body);
      await withRetryAfter(reply, () => updateUser(deps, actorOf(request), id, input));
      return reply.status(204).send();
    });

    app.delete(path, { config: { admin: true } }, async (request, reply) => {
      await deleteUser(deps, actorOf(request), userId(request));
      return reply.status(204).send();
    });
  }

  app.post('/api/users/:id/password', async (request, reply) => {
    const id = userId(request);
    assertAdminOrSelf(actorOf(request), id, PASSWORD_OWN);
    const input = parse(passwordInput, request.body);
    await withRetryAfter(reply, () => changePassword(deps, actorOf(request), id, input));
    return reply.status(204).send();
  });

  // Clears the sign-in throttle of the user's login (GET users/{id} shows `sign_in_locked_until`).
  app.delete('/api/users/:id/sign-in-lock', { config: { admin: true } }, async (request, reply) => {
    await clearSignInLock(deps, actorOf(request), userId(request));
    return reply.status(204).send();
  });
}
