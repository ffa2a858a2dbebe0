import type { User } from '@signalbox/contracts';
import type { Updateable } from 'kysely';
import type { UserRow } from '../../access/principals.store';
import { deleteTotpRows } from '../../access/totp.store';
import type { Db } from '../../db';
import type { UserTable } from '../../db/tables';
import { toBool, toCount } from '../../db/values';

/** The API shape of a user: never the password hash. */
export function toUser(row: UserRow): User {
  return {
    id: row.id,
    created: row.created,
    name: row.name,
    username: row.username,
    email: row.email,
    admin: toBool(row.admin),
    alert: toBool(row.alert),
    external: toBool(row.external),
    can_create_project: toBool(row.can_create_project),
  };
}

/** A login is a username or an e-mail address, compared case-insensitively. */
export function findUserByLogin(db: Db, login: string) {
  const l = login.trim().toLowerCase();
  return db
    .selectFrom('user')
    .selectAll()
    .where((eb) => eb.or([eb(eb.fn('lower', ['username']), '=', l), eb(eb.fn('lower', ['email']), '=', l)]))
    .executeTakeFirst();
}

/** Another user (not `exceptId`) whose username or e-mail equals `login`, case-insensitively. */
export function findOtherUserByLogin(db: Db, login: string, exceptId: number) {
  const l = login.trim().toLowerCase();
  return db
    .selectFrom('user')
    .select(['id'])
    .where('id', '<>', exceptId)
    .where((eb) => eb.or([eb(eb.fn('lower', ['username']), '=', l), eb(eb.fn('lower', ['email']), '=', l)]))
    .executeTakeFirst();
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db
    .selectFrom('user')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst();
  return toCount(row?.n);
}

export async function countAdmins(db: Db): Promise<number> {
  const row = await db
    .selectFrom('user')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('admin', '=', 1)
    .executeTakeFirst();
  return toCount(row?.n);
}

/** Every user, sorted by name (then id, so equal names keep a stable order). */
export async function listUsers(db: Db) {
  return db.selectFrom('user').selectAll().orderBy('name').orderBy('id').execute();
}

export async function updateUserRow(db: Db, id: number, patch: Updateable<UserTable>) {
  await db.updateTable('user').set(patch).where('id', '=', id).execute();
}

/** Projects in which the user is the only owner (deleting them would leave the project without one). */
export async function projectsOnlyOwnedBy(db: Db, userId: number) {
  return db
    .selectFrom('project_user as mine')
    .innerJoin('project', 'project.id', 'mine.project_id')
    .select(['project.id', 'project.name'])
    .where('mine.user_id', '=', userId)
    .where('mine.role', '=', 'owner')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('project_user as other')
            .select('other.id')
            .whereRef('other.project_id', '=', 'mine.project_id')
            .where('other.role', '=', 'owner')
            .where('other.user_id', '<>', userId),
        ),
      ),
    )
    .orderBy('project.name')
    .execute();
}

/**
 * Removes a user with their memberships, invites, sessions, API tokens, sign-in failures and TOTP; tasks and events
 * keep the id.
 * The caller runs it in a transaction (the service publishes the deletion once it is committed).
 */
export async function deleteUserRows(trx: Db, id: number) {
  await trx.deleteFrom('project_user').where('user_id', '=', id).execute();
  await trx.deleteFrom('project_invite').where('user_id', '=', id).execute();
  await trx
    .updateTable('project_invite')
    .set({ inviter_user_id: null })
    .where('inviter_user_id', '=', id)
    .execute();
  await trx.deleteFrom('session').where('user_id', '=', id).execute();
  await trx.deleteFrom('api_token').where('user_id', '=', id).execute();
  await trx.deleteFrom('sign_in_throttle').where('user_id', '=', id).execute();
  await deleteTotpRows(trx, id);
  await trx.deleteFrom('user').where('id', '=', id).execute();
}

/** Expires every live session of the user except `keepSessionId` (the caller's own, when changing theirs). */
export async function expireOtherSessions(db: Db, userId: number, keepSessionId: number | null) {
  let q = db
    .updateTable('session')
    .set({ expired: 1 })
    .where('user_id', '=', userId)
    .where('expired', '=', 0);
  if (keepSessionId) q = q.where('id', '<>', keepSessionId);
  await q.execute();
}
