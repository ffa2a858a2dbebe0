import { type Selectable, sql } from 'kysely';
import type { Db, Dialect } from '../../db';
import type { AccessKeyTable, EnvironmentTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';

export type EnvironmentRow = Selectable<EnvironmentTable>;
export type SecretRow = Selectable<AccessKeyTable>;
type EnvironmentValues = { name: string; json: string; env: string };

/** Environment secrets are access_key rows owned by their environment: 'variable' (extra var) or 'environment'. */
export const secretOwners = ['variable', 'environment'] as const;

export function listEnvironmentRows(db: Db, projectId: number, order: 'asc' | 'desc') {
  return db
    .selectFrom('environment')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy(sql`lower(${sql.ref('name')})`, order)
    .orderBy('name', order)
    .orderBy('id')
    .execute();
}

export function findEnvironmentRow(db: Db, projectId: number, id: number) {
  return db
    .selectFrom('environment')
    .selectAll()
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
}

export function insertEnvironmentRow(db: Db, dialect: Dialect, projectId: number, values: EnvironmentValues) {
  return insertReturningId(db, dialect, 'environment', { project_id: projectId, ...values });
}

export async function updateEnvironmentRow(db: Db, projectId: number, id: number, values: EnvironmentValues) {
  await db
    .updateTable('environment')
    .set(values)
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .execute();
}

/** Deletes the environment and its secrets. */
export async function deleteEnvironmentRows(db: Db, projectId: number, id: number) {
  await db
    .deleteFrom('access_key')
    .where('project_id', '=', projectId)
    .where('environment_id', '=', id)
    .where('owner', 'in', secretOwners)
    .execute();
  await db.deleteFrom('environment').where('id', '=', id).where('project_id', '=', projectId).execute();
}

/** Secret rows of the given environments of a project (all of them when no ids are given). */
export function listSecretRows(db: Db, projectId: number, environmentIds?: number[]) {
  let query = db
    .selectFrom('access_key')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('owner', 'in', secretOwners)
    .where('environment_id', 'is not', null);
  if (environmentIds) {
    if (environmentIds.length === 0) return Promise.resolve([] as SecretRow[]);
    query = query.where('environment_id', 'in', environmentIds);
  }
  return query.orderBy('id').execute();
}

/** Secret rows of one environment, whatever its project (the task engine reads them by environment). */
export function listSecretRowsOfEnvironment(db: Db, environmentId: number) {
  return db
    .selectFrom('access_key')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('owner', 'in', secretOwners)
    .orderBy('id')
    .execute();
}

export function insertSecretRow(
  db: Db,
  dialect: Dialect,
  row: { project_id: number; environment_id: number; name: string; owner: string; secret: string },
) {
  return insertReturningId(db, dialect, 'access_key', { ...row, type: 'string' });
}

export async function updateSecretRow(
  db: Db,
  environmentId: number,
  id: number,
  patch: { name: string; owner: string; secret?: string },
) {
  await db
    .updateTable('access_key')
    .set(patch)
    .where('id', '=', id)
    .where('environment_id', '=', environmentId)
    .where('owner', 'in', secretOwners)
    .execute();
}

export async function deleteSecretRow(db: Db, environmentId: number, id: number) {
  await db
    .deleteFrom('access_key')
    .where('id', '=', id)
    .where('environment_id', '=', environmentId)
    .where('owner', 'in', secretOwners)
    .execute();
}
