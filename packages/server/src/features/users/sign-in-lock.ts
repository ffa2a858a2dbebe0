import type { User } from '@signalbox/contracts';
import { coded } from '@signalbox/contracts';
import { findUserById, type UserRow } from '../../access/principals.store';
import { deleteUserThrottles, userBlockedUntil } from '../../access/sign-in-throttle.store';
import { namedKind } from '../../audit/audit.store';
import { now } from '../../db/values';
import { forbidden, notFound } from '../../lib/errors';
import { type Actor, event, getUser, isAdmin, type UsersContext } from './users.service';
import { toUser } from './users.store';

/** GET /api/users/{id}: the user; administrators also see whether the user's sign-in is locked. */
export async function viewUser(ctx: UsersContext, actor: Actor, id: number): Promise<User> {
  const user = toUser(await getUser(ctx, actor, id));
  if (!isAdmin(actor)) return user;
  return { ...user, sign_in_locked_until: await userBlockedUntil(ctx.db, id, now()) };
}

/**
 * DELETE /api/users/{id}/sign-in-lock and `signalbox user unlock`: forgets the failed sign-ins counted against
 * the user's login from every address, so each may try again at once. Administrators only.
 */
export async function clearSignInLock(ctx: UsersContext, actor: Actor, id: number): Promise<UserRow> {
  if (!isAdmin(actor)) throw forbidden(coded('clear_lock_admin_only'));
  const user = await findUserById(ctx.db, id);
  if (!user) throw notFound('user');
  await deleteUserThrottles(ctx.db, id);
  await event(
    ctx,
    actor,
    id,
    `Sign-in lock of user ${user.username} cleared`,
    namedKind('user', 'unlocked', user.username),
  );
  return user;
}
