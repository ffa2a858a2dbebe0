import type { InviteStatus, InviteUser, ProjectInvite, ProjectRole } from '@signalbox/contracts';
import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import type { ProjectInviteTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';

export type InviteRow = Selectable<ProjectInviteTable>;

/** What an invite is now: a pending one whose expiry has passed is expired. */
export function inviteStatus(row: Pick<InviteRow, 'status' | 'expires_at'>, at = new Date()): InviteStatus {
  if (row.status === 'pending' && row.expires_at && new Date(row.expires_at).getTime() <= at.getTime())
    return 'expired';
  return row.status as InviteStatus;
}

type Named = { id: number; name: string; username: string; email: string };

const named = (u: Named): InviteUser => ({ id: u.id, name: u.name, username: u.username, email: u.email });

/** The users the invites name (invited and inviters), by id. */
async function usersOf(db: Db, rows: InviteRow[]) {
  const ids = [
    ...new Set(rows.flatMap((r) => [r.user_id, r.inviter_user_id]).filter((x): x is number => x != null)),
  ];
  const users = new Map<number, Named>();
  if (ids.length)
    for (const u of await db
      .selectFrom('user')
      .select(['id', 'name', 'username', 'email'])
      .where('id', 'in', ids)
      .execute())
      users.set(u.id, u);
  return users;
}

/**
 * An invite as the API shows it, with the users it names. An invite of an address nobody has an account for has
 * no user_id and no user, as Semaphore leaves them out.
 */
function view(r: InviteRow, users: Map<number, Named>, at: Date): ProjectInvite {
  const user = r.user_id == null ? undefined : users.get(r.user_id);
  const inviter = r.inviter_user_id == null ? undefined : users.get(r.inviter_user_id);
  return {
    id: r.id,
    project_id: r.project_id,
    ...(r.user_id == null ? {} : { user_id: r.user_id }),
    email: r.email,
    role: r.role as ProjectRole,
    status: inviteStatus(r, at),
    inviter_user_id: inviter ? inviter.id : null,
    created: r.created,
    expires_at: r.expires_at,
    // Semaphore leaves the field out until the invite is accepted (its clients test for presence).
    ...(r.accepted_at ? { accepted_at: r.accepted_at } : {}),
    inviter_user: inviter ? named(inviter) : null,
    // Invites of a deleted user are deleted with the user: the fallback only covers a read racing it.
    ...(r.user_id == null
      ? {}
      : { user: user ? named(user) : { id: r.user_id, name: '', username: '', email: r.email } }),
  };
}

async function withUsers(db: Db, rows: InviteRow[]): Promise<ProjectInvite[]> {
  const users = await usersOf(db, rows);
  const at = new Date();
  return rows.map((r) => view(r, users, at));
}

export async function listProjectInvites(db: Db, projectId: number): Promise<ProjectInvite[]> {
  const rows = await db
    .selectFrom('project_invite')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
  return withUsers(db, rows);
}

export function findInviteRow(db: Db, inviteId: number) {
  return db.selectFrom('project_invite').selectAll().where('id', '=', inviteId).executeTakeFirst();
}

export function findInviteRowByToken(db: Db, tokenHash: string) {
  return db.selectFrom('project_invite').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function toInvite(db: Db, row: InviteRow): Promise<ProjectInvite> {
  return view(row, await usersOf(db, [row]), new Date());
}

/** The user's invites that wait for an answer (not expired), each with its project's name. */
export async function listPendingInvitesOf(db: Db, userId: number) {
  const rows = await db
    .selectFrom('project_invite')
    .selectAll()
    .where('user_id', '=', userId)
    .where('status', '=', 'pending')
    .orderBy('id')
    .execute();
  const live = rows.filter((r) => inviteStatus(r) === 'pending');
  const projects = new Map(
    live.length
      ? (
          await db
            .selectFrom('project')
            .select(['id', 'name'])
            .where(
              'id',
              'in',
              live.map((r) => r.project_id),
            )
            .execute()
        ).map((p) => [p.id, p.name])
      : [],
  );
  const invites = await withUsers(db, live);
  return invites.map((invite) => ({ ...invite, project_name: projects.get(invite.project_id) ?? '' }));
}

/** A pending invite of an e-mail address (nobody's account yet) into the project that has not expired, if any. */
export async function findOpenEmailInvite(db: Db, projectId: number, email: string) {
  const rows = await db
    .selectFrom('project_invite')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('user_id', 'is', null)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.trim().toLowerCase()))
    .where('status', '=', 'pending')
    .execute();
  return rows.find((r) => inviteStatus(r) === 'pending');
}

/**
 * Gives the invites of an e-mail address that had no account to the account now created with it: they become
 * its own, listed among its invites to answer (GET /api/user/invites). Only the address an account is created with
 * counts (by an administrator, the command line, LDAP or OIDC), never one a user later gives themselves.
 */
export async function claimEmailInvites(db: Db, userId: number, email: string): Promise<number> {
  const address = email.trim().toLowerCase();
  if (!address) return 0;
  const result = await db
    .updateTable('project_invite')
    .set({ user_id: userId })
    .where('user_id', 'is', null)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', address))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Makes an invite of an address the given user's (answering it with the token, as that address's account). */
export async function bindInvite(db: Db, inviteId: number, userId: number) {
  await db
    .updateTable('project_invite')
    .set({ user_id: userId })
    .where('id', '=', inviteId)
    .where('user_id', 'is', null)
    .execute();
}

/** A pending invite of the user into the project that has not expired, if any. */
export async function findOpenInvite(db: Db, projectId: number, userId: number) {
  const rows = await db
    .selectFrom('project_invite')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .where('status', '=', 'pending')
    .execute();
  return rows.find((r) => inviteStatus(r) === 'pending');
}

export function insertInvite(
  db: Db,
  dialect: Dialect,
  invite: Omit<InviteRow, 'id' | 'accepted_at' | 'status'>,
): Promise<number> {
  return insertReturningId(db, dialect, 'project_invite', {
    ...invite,
    status: 'pending',
    accepted_at: null,
  });
}

/**
 * Answers a pending invite (accepted or declined); false when it was no longer pending (answered or withdrawn
 * by a request that came first).
 */
export async function answerInvite(db: Db, inviteId: number, status: 'accepted' | 'declined', at: string) {
  const result = await db
    .updateTable('project_invite')
    .set({ status, accepted_at: status === 'accepted' ? at : null })
    .where('id', '=', inviteId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteInvite(db: Db, inviteId: number) {
  await db.deleteFrom('project_invite').where('id', '=', inviteId).execute();
}
