import type { Selectable } from 'kysely';
import type { Config } from '../config';
import type { Db } from '../db';
import type { ProjectTable, UserTable } from '../db/tables';
import { findTotp } from './totp.store';

/**
 * Who a request acts as and where: the rows the auth hook and the project guard read for every request (a user,
 * a project with the user's role in it, whether the user must give a second factor).
 */

export type UserRow = Selectable<UserTable>;
export type ProjectRow = Selectable<ProjectTable>;

export function findUserById(db: Db, id: number) {
  return db.selectFrom('user').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The project and the user's role in it ('' when not a member), in one query; undefined when no such project. */
export async function findProjectWithRole(db: Db, id: number, userId: number) {
  const row = await db
    .selectFrom('project')
    .leftJoin('project_user', (join) =>
      join.onRef('project_user.project_id', '=', 'project.id').on('project_user.user_id', '=', userId),
    )
    .selectAll('project')
    .select('project_user.role as member_role')
    .where('project.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const { member_role, ...project } = row;
  return { project: project as ProjectRow, role: member_role ?? '' };
}

/** Whether a new session of the user must wait for a code: TOTP is on for the server and for the user. */
export async function secondFactorRequired(
  ctx: { db: Db; config: Pick<Config, 'totpEnabled'> },
  userId: number,
): Promise<boolean> {
  if (!ctx.config.totpEnabled) return false;
  return (await findTotp(ctx.db, userId))?.confirmed === 1;
}
