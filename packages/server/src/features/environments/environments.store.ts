import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import { deleteRows, findRow, listRows, listRowsByName, updateRows } from '../../db/rows';
import type { AccessKeyTable, EnvironmentTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';

export type EnvironmentRow = Selectable<EnvironmentTable>;
export type SecretRow = Selectable<AccessKeyTable>;
type EnvironmentValues = { name: string; json: string; env: string };

/** Environment secrets are access_key rows owned by their environment: 'variable' (extra var) or 'environment'. */
export const secretOwners = ['variable', 'environment'] as const;

export function listEnvironmentRows(db: Db, projectId: number, order: 'asc' | 'desc') {
  return listRowsByName(db, 'environment', { project_id: projectId }, 'name', order);
}

export function findEnvironmentRow(db: Db, projectId: number, id: number) {
  return findRow(db, 'environment', { id, project_id: projectId });
}

export function insertEnvironmentRow(db: Db, dialect: Dialect, projectId: number, values: EnvironmentValues) {
  return insertReturningId(db, dialect, 'environment', { project_id: projectId, ...values });
}

export function updateEnvironmentRow(db: Db, projectId: number, id: number, values: EnvironmentValues) {
  return updateRows(db, 'environment', { id, project_id: projectId }, values);
}

/** Deletes the environment and its secrets. */
export async function deleteEnvironmentRows(db: Db, projectId: number, id: number) {
  await deleteRows(db, 'access_key', { project_id: projectId, environment_id: id, owner: secretOwners });
  await deleteRows(db, 'environment', { id, project_id: projectId });
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
  return listRows(db, 'access_key', { environment_id: environmentId, owner: secretOwners });
}

export function insertSecretRow(
  db: Db,
  dialect: Dialect,
  row: { project_id: number; environment_id: number; name: string; owner: string; secret: string },
) {
  return insertReturningId(db, dialect, 'access_key', { ...row, type: 'string' });
}

export function updateSecretRow(
  db: Db,
  environmentId: number,
  id: number,
  patch: { name: string; owner: string; secret?: string },
) {
  return updateRows(db, 'access_key', { id, environment_id: environmentId, owner: secretOwners }, patch);
}

export function deleteSecretRow(db: Db, environmentId: number, id: number) {
  return deleteRows(db, 'access_key', { id, environment_id: environmentId, owner: secretOwners });
}
