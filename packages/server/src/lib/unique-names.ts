import { coded } from '@signalbox/contracts';
import { sql } from 'kysely';
import type { Db } from '../db';
import { fieldError } from './errors';

/**
 * Names are compared the way people read them in a picker: trimmed and without regard to case (SQL `lower` folds
 * ASCII on SQLite; the same expression runs on both sides, so each database compares consistently).
 *
 * The check runs before the write, not under a unique index (names already stored may repeat, and a case-folding
 * expression index is not portable to MariaDB): two requests racing with the same new name can both pass. That
 * window is one request wide and only lets a duplicate name in, which the next rename refuses.
 */
const scoped: Record<Exclude<NamedKind, 'project'>, { table: string; column: string; where?: string }> = {
  // Environment secrets live in access_key too (environment_id set); only the project's keys share the key names.
  key: { table: 'access_key', column: 'name', where: 'environment_id is null' },
  inventory: { table: 'inventory', column: 'name' },
  environment: { table: 'environment', column: 'name' },
  repository: { table: 'repository', column: 'name' },
  view: { table: 'view', column: 'title' },
  option_list: { table: 'option_list', column: 'name' },
};

const takenCodes = {
  key: 'key_name_taken',
  inventory: 'inventory_name_taken',
  environment: 'environment_name_taken',
  repository: 'repository_name_taken',
  view: 'view_title_taken',
  option_list: 'option_list_name_taken',
  project: 'project_name_taken',
} as const;

/** The kinds of objects whose names are unique within their project (a project's among the user's projects). */
export type NamedKind = keyof typeof takenCodes;

const refuse = (kind: NamedKind, field: string) => fieldError(field, coded(takenCodes[kind]));

/** Refuses (400 on the name field) a name another object of `kind` in the project already has. */
export async function assertNameFree(
  db: Db,
  kind: Exclude<NamedKind, 'project'>,
  projectId: number,
  name: string,
  exceptId?: number,
) {
  const { table, column, where } = scoped[kind];
  const { rows } = await sql<{ id: number }>`select id from ${sql.table(table)}
    where project_id = ${projectId}
      and lower(trim(${sql.ref(column)})) = lower(trim(${name}))
      ${exceptId === undefined ? sql`` : sql`and id <> ${exceptId}`}
      ${where ? sql.raw(`and ${where}`) : sql``}
    limit 1`.execute(db);
  if (rows.length > 0) throw refuse(kind, column === 'title' ? 'title' : 'name');
}

/**
 * Refuses (400 on `name`) a project name another project the user belongs to already has: those are the projects
 * the user's project switcher lists side by side. `exceptId` is the project being renamed.
 */
export async function assertProjectNameFree(db: Db, userId: number, name: string, exceptId?: number) {
  const { rows } = await sql<{ id: number }>`select project.id from project
    inner join project_user on project_user.project_id = project.id
    where project_user.user_id = ${userId}
      and lower(trim(project.name)) = lower(trim(${name}))
      ${exceptId === undefined ? sql`` : sql`and project.id <> ${exceptId}`}
    limit 1`.execute(db);
  if (rows.length > 0) throw refuse('project', 'name');
}
