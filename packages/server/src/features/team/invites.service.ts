import {
  coded,
  INVITE_DEFAULT_DAYS,
  INVITE_MAX_DAYS,
  type InviteListQuery,
  type ProjectInvite,
  type ProjectInviteInput,
} from '@signalbox/contracts';
import { findUserById, type UserRow } from '../../access/principals.store';
import { recordProjectEvent } from '../../audit/audit.store';
import { transaction } from '../../db/transaction';
import { now } from '../../db/values';
import type { Deps } from '../../deps';
import { randomToken, sha256 } from '../../lib/crypto';
import { AppError, badRequest, conflict, fieldError, forbidden, notFound } from '../../lib/errors';
import { findUserByLogin } from '../users';
import { sendInviteMail } from './invite-mail';
import {
  answerInvite,
  bindInvite,
  deleteInvite,
  findInviteRow,
  findInviteRowByToken,
  findOpenEmailInvite,
  findOpenInvite,
  type InviteRow,
  insertInvite,
  inviteStatus,
  listProjectInvites,
  toInvite,
} from './invites.store';
import { findMember, insertMember } from './team.store';

const DAY_MS = 24 * 60 * 60 * 1000;
const statusOrder = { pending: 0, accepted: 1, declined: 2, expired: 3 } as const;
const roleOrder = { owner: 0, manager: 1, task_runner: 2, guest: 3 } as const;

/** The project's invites, sorted by one column (ties by creation). */
export async function listInvites(
  deps: Pick<Deps, 'db'>,
  projectId: number,
  query: InviteListQuery,
): Promise<ProjectInvite[]> {
  const invites = await listProjectInvites(deps.db, projectId);
  const direction = query.order === 'desc' ? -1 : 1;
  const key = (i: ProjectInvite) =>
    query.sort === 'status' ? statusOrder[i.status] : query.sort === 'role' ? roleOrder[i.role] : 0;
  return invites.sort(
    (a, b) => direction * (key(a) - key(b) || a.created.localeCompare(b.created) || a.id - b.id),
  );
}

export async function getInvite(deps: Pick<Deps, 'db'>, projectId: number, inviteId: number) {
  const row = await findInviteRow(deps.db, inviteId);
  if (!row || row.project_id !== projectId) throw notFound('invite');
  return toInvite(deps.db, row);
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/**
 * Whom an invite names: a user by id, e-mail address or username (the contract lets exactly one through), or an
 * e-mail address nobody has an account for, which is invited as it is.
 */
async function invitee(
  deps: Pick<Deps, 'db'>,
  input: ProjectInviteInput,
): Promise<{ user: UserRow } | { email: string }> {
  if (input.user_id != null) {
    const user = await findUserById(deps.db, input.user_id);
    if (!user)
      throw badRequest(coded('user_not_found', { id: input.user_id }), {
        user_id: coded('not_found', { what: 'user' }),
      });
    return { user };
  }
  const login = input.email ?? input.username ?? '';
  const field = input.email ? 'email' : 'username';
  const user = await findUserByLogin(deps.db, login);
  // A login matches a username or an e-mail address; the field named must match its own kind.
  const matches =
    user && (field === 'email' ? user.email : user.username).toLowerCase() === login.toLowerCase();
  if (user && matches) return { user };
  if (field === 'username')
    throw badRequest(coded('no_user_with_username', { username: login }), {
      username: coded('not_found', { what: 'user' }),
    });
  if (!EMAIL.test(login)) throw fieldError('email', coded('invalid_email', { field: 'email' }));
  return { email: login };
}

/** When a new invite expires: the time asked for (in the future, within INVITE_MAX_DAYS), else in a week. */
function expiryOf(input: ProjectInviteInput, at: Date) {
  if (!input.expires_at) return new Date(at.getTime() + INVITE_DEFAULT_DAYS * DAY_MS).toISOString();
  const expires = new Date(input.expires_at);
  if (expires.getTime() <= at.getTime()) throw fieldError('expires_at', coded('expires_in_past'));
  if (expires.getTime() > at.getTime() + INVITE_MAX_DAYS * DAY_MS)
    throw fieldError('expires_at', coded('expires_too_far', { days: INVITE_MAX_DAYS }));
  return expires.toISOString();
}

/**
 * POST project/{id}/invites: invites a user who is not a member and has no open invite into the project, or an
 * e-mail address nobody has an account for (without an open invite either), which is e-mailed the invite. The
 * token is returned this once; only its hash is stored.
 */
export async function createInvite(
  deps: Pick<Deps, 'db' | 'dialect' | 'config' | 'log'>,
  actor: UserRow,
  project: { id: number; name: string },
  input: ProjectInviteInput,
) {
  const projectId = project.id;
  const who = await invitee(deps, input);
  if ('user' in who) {
    if (await findMember(deps.db, projectId, who.user.id))
      throw conflict(coded('already_member', { username: who.user.username }));
    if (await findOpenInvite(deps.db, projectId, who.user.id))
      throw conflict(coded('already_invited_user', { username: who.user.username }));
  } else if (await findOpenEmailInvite(deps.db, projectId, who.email))
    throw conflict(coded('already_invited_email', { email: who.email }));
  const at = new Date();
  const token = randomToken(32);
  const expires = expiryOf(input, at);
  const name = 'user' in who ? who.user.username : who.email;
  const id = await transaction(deps.db, async (trx) => {
    const inviteId = await insertInvite(trx, deps.dialect, {
      project_id: projectId,
      user_id: 'user' in who ? who.user.id : null,
      email: 'user' in who ? who.user.email : who.email,
      role: input.role,
      token_hash: sha256(token),
      inviter_user_id: actor.id,
      created: at.toISOString(),
      expires_at: expires,
    });
    const description = `${'user' in who ? `User ${name}` : name} invited to the team as ${input.role}`;
    await recordProjectEvent(trx, actor, projectId, 'invite', inviteId, description, {
      kind: 'invite.sent',
      params: { name, role: input.role },
    });
    return inviteId;
  });
  const row = await findInviteRow(deps.db, id);
  if (!row) throw notFound('invite');
  const invite = { ...(await toInvite(deps.db, row)), token };
  if ('user' in who) return invite;
  // Nobody can see it in the console yet: the address is told by e-mail.
  const mail_status = await sendInviteMail(deps, {
    to: who.email,
    projectName: project.name,
    role: input.role,
    inviter: actor.name || actor.username,
    token,
    expiresAt: expires,
  });
  return { ...invite, mail_status };
}

/** DELETE project/{id}/invites/{invite_id}: withdraws an invite (an answered one is removed from the list). */
export async function withdrawInvite(
  deps: Pick<Deps, 'db'>,
  actor: UserRow,
  projectId: number,
  inviteId: number,
) {
  const row = await findInviteRow(deps.db, inviteId);
  if (!row || row.project_id !== projectId) throw notFound('invite');
  await transaction(deps.db, async (trx) => {
    await deleteInvite(trx, row.id);
    const invite = await toInvite(trx, row);
    const name = invite.user?.username || invite.email;
    const description = `Invite of ${invite.user?.username ? `user ${name}` : name} withdrawn`;
    await recordProjectEvent(trx, actor, projectId, 'invite', row.id, description, {
      kind: 'invite.withdrawn',
      params: { name },
    });
  });
}

/** A pending invite that has not expired, or the 400 that says why it cannot be answered. */
function mustBeOpen(row: InviteRow) {
  const status = inviteStatus(row);
  if (status === 'expired') throw badRequest(coded('invite_expired'));
  if (status !== 'pending') throw badRequest(coded('invite_already_answered', { status }));
}

/**
 * The invited user answers: accepting makes them a member with the invite's role, declining closes it. Either
 * answer happens once; a user who became a member another way meanwhile gets 409.
 */
async function answer(
  deps: Pick<Deps, 'db' | 'bus'>,
  actor: UserRow,
  row: InviteRow,
  status: 'accepted' | 'declined',
) {
  mustBeOpen(row);
  if (status === 'accepted' && (await findMember(deps.db, row.project_id, actor.id)))
    throw conflict(coded('self_already_member'));
  try {
    await transaction(deps.db, async (trx, onCommit) => {
      if (!(await answerInvite(trx, row.id, status, now())))
        throw new AppError(409, coded('invite_already_answered', { status: 'answered' }));
      if (status === 'accepted') {
        await insertMember(trx, row.project_id, actor.id, row.role as ProjectInvite['role']);
        onCommit(() => deps.bus.emit('membership', { userId: actor.id }));
      }
      const description =
        status === 'accepted'
          ? `User ${actor.username} accepted the invite and joined the team as ${row.role}`
          : `User ${actor.username} declined the invite`;
      await recordProjectEvent(trx, actor, row.project_id, 'invite', row.id, description, {
        kind: `invite.${status}`,
        params: status === 'accepted' ? { name: actor.username, role: row.role } : { name: actor.username },
      });
    });
  } catch (err) {
    // The user joined another way at the same moment: the unique membership index answers.
    if (status === 'accepted' && (await findMember(deps.db, row.project_id, actor.id)))
      throw conflict(coded('self_already_member'));
    throw err;
  }
}

/** POST /api/user/invites/{invite_id}/accept|decline: only the invited user sees and answers their invite. */
export async function answerOwnInvite(
  deps: Pick<Deps, 'db' | 'bus'>,
  actor: UserRow,
  inviteId: number,
  status: 'accepted' | 'declined',
) {
  const row = await findInviteRow(deps.db, inviteId);
  if (!row || row.user_id !== actor.id) throw notFound('invite');
  await answer(deps, actor, row, status);
}

/**
 * POST /api/invites/accept|decline with the invite's token: the token must be the caller's own invite's. An invite of
 * an e-mail address (no account had it) is the caller's when their account has that address, as in Semaphore: the
 * answer makes it theirs.
 */
export async function answerInviteByToken(
  deps: Pick<Deps, 'db' | 'bus'>,
  actor: UserRow,
  token: string,
  status: 'accepted' | 'declined',
) {
  const row = await findInviteRowByToken(deps.db, sha256(token));
  if (!row) throw notFound('invite');
  if (row.user_id == null) {
    if (row.email.trim().toLowerCase() !== actor.email.trim().toLowerCase())
      throw forbidden(coded('invite_for_other_email'));
    mustBeOpen(row);
    await bindInvite(deps.db, row.id, actor.id);
  } else if (row.user_id !== actor.id) throw forbidden(coded('invite_for_other_user'));
  await answer(deps, actor, row, status);
}
