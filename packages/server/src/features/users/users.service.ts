import {
  type Coded,
  CURRENT_PASSWORD_INCORRECT,
  CURRENT_PASSWORD_REQUIRED,
  coded,
  type User,
  type UserCreateInput,
  type UserUpdateInput,
} from '@signalbox/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Updateable } from 'kysely';
import { findUserById, type UserRow } from '../../access/principals.store';
import { failAttempt, passAttempt, signInAttempt, startAttempt } from '../../access/sign-in-throttle';
import { deleteUserThrottles } from '../../access/sign-in-throttle.store';
import { deleteUserTokens } from '../../access/tokens.store';
import { type EventKind, namedKind, recordEvent } from '../../audit/audit.store';
import type { Db } from '../../db';
import type { Dialect } from '../../db/dialect';
import type { UserTable } from '../../db/tables';
import { type OnCommit, transaction } from '../../db/transaction';
import { fromBool, insertReturningId, isUniqueViolation, now } from '../../db/values';
import { randomAlnum } from '../../lib/crypto';
import { AppError, badRequest, conflict, fieldError, forbidden, found, notFound } from '../../lib/errors';
import { hashPassword, passwordMatches } from '../../lib/password-hash';
import type { EventBus } from '../../live/bus';
import { claimEmailInvites } from '../team';
import {
  countAdmins,
  countUsers,
  deleteUserRows,
  expireOtherSessions,
  findOtherUserByLogin,
  findUserByLogin,
  projectsOnlyOwnedBy,
  toUser,
  updateUserRow,
} from './users.store';

/**
 * What user services need: the HTTP app passes its Deps, the CLI its open database. `bus` and `log` are absent
 * on the command line: there is no socket to tell.
 */
export type UsersContext = { db: Db; dialect: Dialect; bus?: EventBus; log?: FastifyBaseLogger };

/**
 * The caller of a user operation: `user` null when it is the server console (CLI); `sessionId` the session
 * they call with, `address` the client address (a wrong current password counts against it).
 */
export type Actor = { user: UserRow | null; sessionId?: number | null; address?: string };

export const isAdmin = (actor: Actor) => actor.user === null || actor.user.admin === 1;
const isSelf = (actor: Actor, id: number) => actor.user?.id === id;

export const VIEW_OWN = coded('view_own_account');
export const EDIT_OWN = coded('edit_own_account');
export const PASSWORD_OWN = coded('change_own_password');

/** Admins act on anyone; other users only on themselves. Checked before the body is read. */
export function assertAdminOrSelf(actor: Actor, id: number, error: Coded) {
  if (!isAdmin(actor) && !isSelf(actor, id)) throw forbidden(error);
}

/**
 * Creates a user; a taken username or e-mail is a 409 naming which. Invites of the new user's e-mail address made
 * while no account had it become the user's own, to answer in the console (however the account is created: by an
 * administrator, the command line, or LDAP or OIDC at the first sign-in).
 */
/**
 * Stores a new user (and gives them the email invites waiting for their address). `passwordHash`, when given,
 * is the input password already hashed, so a caller's transaction does not wait for the hash.
 */
export async function insertUser(
  db: Db,
  dialect: Dialect,
  input: UserCreateInput,
  passwordHash?: string,
): Promise<number> {
  if (await findUserByLogin(db, input.username))
    throw conflict(coded('username_taken', { username: input.username }));
  if (await findUserByLogin(db, input.email)) throw conflict(coded('email_taken', { email: input.email }));
  let id: number;
  try {
    id = await insertReturningId(db, dialect, 'user', {
      created: now(),
      username: input.username,
      name: input.name,
      email: input.email,
      // No password (an external user, or one created without): no password signs in to the account.
      password: passwordHash ?? (await passwordColumn(input)),
      admin: fromBool(input.admin),
      alert: fromBool(input.alert),
      external: fromBool(input.external),
      can_create_project: fromBool(input.can_create_project),
    });
  } catch (err) {
    // Two requests racing for the same name pass the check above; the unique index decides.
    if (isUniqueViolation(err)) throw conflict(coded('username_or_email_taken'));
    throw err;
  }
  await claimEmailInvites(db, id, input.email);
  return id;
}

/** What a new user's password column holds. */
const passwordColumn = async (input: UserCreateInput) =>
  input.external || !input.password ? '' : await hashPassword(input.password);

/** Records a user event in the global event log (on `db` when it runs in a transaction). */
export async function event(
  ctx: UsersContext,
  actor: Actor,
  objectId: number,
  description: string,
  kind?: EventKind,
  db: Db = ctx.db,
) {
  await recordEvent(db, {
    project_id: null,
    user_id: actor.user?.id ?? null,
    object_type: 'user',
    object_id: objectId,
    description,
    ...kind,
  });
}

/** POST /api/users and `signalbox user add`. */
export async function createUser(ctx: UsersContext, actor: Actor, input: UserCreateInput): Promise<User> {
  const password = await passwordColumn(input);
  const id = await transaction(ctx.db, async (trx) => {
    const id = await insertUser(trx, ctx.dialect, input, password);
    const kind = namedKind('user', 'created', input.username);
    await event(ctx, actor, id, `User ${input.username} created`, kind, trx);
    return id;
  });
  return toUser(found(await findUserById(ctx.db, id), 'user'));
}

/**
 * Users changing their own password give the current one (an administrator resetting someone else's, and the
 * server console, do not). It is checked as a sign-in is: throttled, and a wrong one counts as a failure.
 */
async function checkCurrentPassword(ctx: UsersContext, actor: Actor, user: UserRow, current?: string) {
  if (!isSelf(actor, user.id)) return;
  if (!current) throw fieldError('current_password', CURRENT_PASSWORD_REQUIRED);
  const attempt = signInAttempt(user.username, user.id, actor.address ?? '');
  await startAttempt(ctx, attempt);
  if (!(await passwordMatches(current, user.password))) {
    failAttempt(ctx, attempt);
    throw fieldError('current_password', CURRENT_PASSWORD_INCORRECT);
  }
  await passAttempt(ctx, attempt);
}

/** Admins see anyone; other users only themselves (403 before revealing whether an id exists). */
export async function getUser(ctx: UsersContext, actor: Actor, id: number): Promise<UserRow> {
  assertAdminOrSelf(actor, id, VIEW_OWN);
  const user = await findUserById(ctx.db, id);
  if (!user) throw notFound('user');
  return user;
}

/**
 * PUT /api/users/{id}. Admins change anything; a user editing themselves changes name, e-mail, alert and
 * password only. External users' username, e-mail and password come from their provider and stay as they are.
 */
export async function updateUser(ctx: UsersContext, actor: Actor, id: number, input: UserUpdateInput) {
  assertAdminOrSelf(actor, id, EDIT_OWN);
  const user = await findUserById(ctx.db, id);
  if (!user) throw notFound('user');
  const admin = isAdmin(actor);

  if (user.external === 1) {
    if (input.username !== user.username) throw fieldError('username', coded('external_username_fixed'));
    if (input.email !== user.email) throw fieldError('email', coded('external_email_fixed'));
    if (input.password !== undefined) throw externalPassword();
  }
  if (!admin) {
    if (input.admin !== undefined && fromBool(input.admin) !== user.admin)
      throw forbidden(coded('admin_flag_admin_only'));
    if (
      input.can_create_project !== undefined &&
      fromBool(input.can_create_project) !== user.can_create_project
    )
      throw forbidden(coded('create_projects_flag_admin_only'));
    if (input.username !== user.username) throw forbidden(coded('username_change_admin_only'));
  }
  if (input.admin === false && user.admin === 1 && (await countAdmins(ctx.db)) <= 1)
    throw badRequest(coded('last_admin'));
  if (await findOtherUserByLogin(ctx.db, input.username, id))
    throw conflict(coded('username_taken', { username: input.username }));
  if (await findOtherUserByLogin(ctx.db, input.email, id))
    throw conflict(coded('email_taken', { email: input.email }));

  if (input.password !== undefined) await checkCurrentPassword(ctx, actor, user, input.current_password);

  const patch: Updateable<UserTable> = { name: input.name, username: input.username, email: input.email };
  if (input.alert !== undefined) patch.alert = fromBool(input.alert);
  if (admin && input.admin !== undefined) patch.admin = fromBool(input.admin);
  if (admin && input.can_create_project !== undefined)
    patch.can_create_project = fromBool(input.can_create_project);
  if (input.password !== undefined) patch.password = await hashPassword(input.password);
  await transaction(ctx.db, async (trx, onCommit) => {
    try {
      await updateUserRow(trx, id, patch);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(coded('username_or_email_taken'));
      throw err;
    }
    // Lost admin rights leave the user's open sockets at once; gained ones are read on the next refresh.
    if (patch.admin === 1 && user.admin === 0) onCommit(() => ctx.bus?.emit('membership', { userId: id }));
    if (patch.admin === 0 && user.admin === 1)
      onCommit(() => ctx.bus?.emit('accessRevoked', { userId: id, projectId: null }));
    if (input.password !== undefined)
      await afterPasswordChange(trx, onCommit, ctx, actor, id, input.revoke_tokens);
    await event(
      ctx,
      actor,
      id,
      `User ${input.username} updated`,
      namedKind('user', 'updated', input.username),
      trx,
    );
  });
}

/**
 * A new password ends the user's other sessions (a user changing their own keeps the one they called with) and,
 * unless `revokeTokens` is false, their API tokens, with the live sockets opened with either. Failed sign-ins
 * counted against the old password are forgotten. Runs in the transaction that stores the new password.
 */
async function afterPasswordChange(
  trx: Db,
  onCommit: OnCommit,
  ctx: UsersContext,
  actor: Actor,
  id: number,
  revokeTokens: boolean,
) {
  const keep = isSelf(actor, id) ? (actor.sessionId ?? null) : null;
  await expireOtherSessions(trx, id, keep);
  if (revokeTokens) await deleteUserTokens(trx, id);
  // One event for both, so every socket opened with them closes together.
  onCommit(() => ctx.bus?.emit('sessionsExpired', { userId: id, keepSessionId: keep, tokens: revokeTokens }));
  await deleteUserThrottles(trx, id);
}

const externalPassword = () => fieldError('password', coded('external_password_fixed'));

/** POST /api/users/{id}/password: the user's other sessions stop working, and their API tokens by default. */
export async function changePassword(
  ctx: UsersContext,
  actor: Actor,
  id: number,
  input: { password: string; current_password?: string; revoke_tokens: boolean },
) {
  assertAdminOrSelf(actor, id, PASSWORD_OWN);
  const user = await findUserById(ctx.db, id);
  if (!user) throw notFound('user');
  if (user.external === 1) throw externalPassword();
  await checkCurrentPassword(ctx, actor, user, input.current_password);
  const password = await hashPassword(input.password);
  await transaction(ctx.db, async (trx, onCommit) => {
    await updateUserRow(trx, id, { password });
    await afterPasswordChange(trx, onCommit, ctx, actor, id, input.revoke_tokens);
    await event(
      ctx,
      actor,
      id,
      `Password of user ${user.username} changed`,
      namedKind('user', 'password', user.username),
      trx,
    );
  });
}

/**
 * DELETE /api/users/{id} and `signalbox user delete`. Nobody deletes themselves; the last administrator and the
 * only owner of a project stay (give the project another owner, or delete it, first).
 */
export async function deleteUser(ctx: UsersContext, actor: Actor, id: number) {
  if (!isAdmin(actor)) throw forbidden(coded('delete_users_admin_only'));
  if (isSelf(actor, id)) throw badRequest(coded('cannot_delete_self'));
  const user = await findUserById(ctx.db, id);
  if (!user) throw notFound('user');
  if (user.admin === 1 && (await countAdmins(ctx.db)) <= 1)
    throw badRequest(coded('cannot_delete_last_admin'));
  const owned = await projectsOnlyOwnedBy(ctx.db, id);
  if (owned.length > 0) {
    const names = owned.map((p) => p.name).join(', ');
    throw new AppError(
      400,
      coded(owned.length === 1 ? 'sole_owner_of_project' : 'sole_owner_of_projects', {
        username: user.username,
        projects: names,
      }),
      undefined,
      {
        projects: owned,
      },
    );
  }
  await transaction(ctx.db, async (trx, onCommit) => {
    await deleteUserRows(trx, id);
    // Their open sockets close at once.
    onCommit(() => ctx.bus?.emit('userDeleted', { userId: id }));
    await event(
      ctx,
      actor,
      id,
      `User ${user.username} deleted`,
      namedKind('user', 'deleted', user.username),
      trx,
    );
  });
  return user;
}

export type AdminSeed = { login?: string; password?: string; email?: string; name?: string };

/**
 * Start-up admin: the configured admin is created when that login does not exist; with no users and no
 * configured admin, an `admin` user with a random password is created and the password returned to print once.
 */
export async function ensureAdmin(
  db: Db,
  dialect: Dialect,
  seed: AdminSeed,
): Promise<{ login: string; password: string } | null> {
  if (seed.login) {
    if (await findUserByLogin(db, seed.login)) return null;
    const password = seed.password || randomAlnum(16);
    await insertUser(db, dialect, {
      username: seed.login,
      name: seed.name || seed.login,
      email: seed.email || `${seed.login}@localhost`,
      password,
      admin: true,
      alert: false,
      external: false,
      can_create_project: true,
    });
    return seed.password ? null : { login: seed.login, password };
  }
  if ((await countUsers(db)) > 0) return null;
  const password = randomAlnum(16);
  await insertUser(db, dialect, {
    username: 'admin',
    name: 'Administrator',
    email: 'admin@localhost',
    password,
    admin: true,
    alert: false,
    external: false,
    can_create_project: true,
  });
  return { login: 'admin', password };
}
