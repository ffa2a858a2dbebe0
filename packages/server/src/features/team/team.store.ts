import type { ProjectRole, ProjectUser, TeamCandidate } from '@signalbox/contracts';
import type { Db } from '../../db';
import { deleteRows, updateRows } from '../../db/rows';
import { now, toCount } from '../../db/values';

/** Every member of a project with the user's name, username and e-mail. */
export async function listMembers(db: Db, projectId: number): Promise<ProjectUser[]> {
  const rows = await db
    .selectFrom('project_user')
    .innerJoin('user', 'user.id', 'project_user.user_id')
    .select(['user.id as user_id', 'user.name', 'user.username', 'user.email', 'project_user.role'])
    .where('project_user.project_id', '=', projectId)
    .orderBy('user.id')
    .execute();
  return rows.map(toMember);
}

type MemberRow = { user_id: number; name: string; username: string; email: string; role: string };

const toMember = (r: MemberRow): ProjectUser => ({
  id: r.user_id,
  user_id: r.user_id,
  name: r.name,
  username: r.username,
  email: r.email,
  role: r.role as ProjectRole,
});

export async function findMember(
  db: Db,
  projectId: number,
  userId: number,
): Promise<ProjectUser | undefined> {
  const r = await db
    .selectFrom('project_user')
    .innerJoin('user', 'user.id', 'project_user.user_id')
    .select(['user.id as user_id', 'user.name', 'user.username', 'user.email', 'project_user.role'])
    .where('project_user.project_id', '=', projectId)
    .where('project_user.user_id', '=', userId)
    .executeTakeFirst();
  return r && toMember(r);
}

/** Project ids the user belongs to (what a live socket may see). */
export async function memberProjects(db: Db, userId: number): Promise<Set<number>> {
  const rows = await db
    .selectFrom('project_user')
    .select('project_id')
    .where('user_id', '=', userId)
    .execute();
  return new Set(rows.map((r) => r.project_id));
}

/** The admin flag of a user, or undefined when the user no longer exists. */
export const findUserAdmin = (db: Db, userId: number) =>
  db.selectFrom('user').select(['admin']).where('id', '=', userId).executeTakeFirst();

export async function insertMember(db: Db, projectId: number, userId: number, role: ProjectRole) {
  await db
    .insertInto('project_user')
    .values({ project_id: projectId, user_id: userId, role, created: now() })
    .execute();
}

export function updateMemberRole(db: Db, projectId: number, userId: number, role: ProjectRole) {
  return updateRows(db, 'project_user', { project_id: projectId, user_id: userId }, { role });
}

export function deleteMember(db: Db, projectId: number, userId: number) {
  return deleteRows(db, 'project_user', { project_id: projectId, user_id: userId });
}

export async function countOwners(db: Db, projectId: number): Promise<number> {
  const row = await db
    .selectFrom('project_user')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('project_id', '=', projectId)
    .where('role', '=', 'owner')
    .executeTakeFirst();
  return toCount(row?.n);
}

/** Users who are not members of the project yet: only what the "Add member" picker shows. */
export async function listCandidates(db: Db, projectId: number): Promise<TeamCandidate[]> {
  const rows = await db
    .selectFrom('user')
    .select(['id', 'name', 'username'])
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('project_user')
            .select('project_user.user_id')
            .whereRef('project_user.user_id', '=', 'user.id')
            .where('project_user.project_id', '=', projectId),
        ),
      ),
    )
    .execute();
  // Sorted here: the dialects' collations disagree on case.
  const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });
  return rows.sort((a, b) => collator.compare(a.name, b.name) || a.id - b.id);
}
