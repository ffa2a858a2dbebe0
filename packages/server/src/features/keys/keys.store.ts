import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import { deleteRows, findRow, listRowsByName, updateRows } from '../../db/rows';
import type { AccessKeyTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';

export type KeyRow = Selectable<AccessKeyTable>;

/** Key-store keys of a project (owner ''): environment secrets share the table but are not keys. */
export function listKeyRows(db: Db, projectId: number, sort: 'name' | 'type', order: 'asc' | 'desc') {
  return listRowsByName(db, 'access_key', { project_id: projectId, owner: '' }, sort, order);
}

export function findKeyRow(db: Db, projectId: number, id: number) {
  return findRow(db, 'access_key', { id, project_id: projectId, owner: '' });
}

/** The project's key of type none named 'None', which workspace inventories run with. */
export function findNoneKeyRow(db: Db, projectId: number) {
  return db
    .selectFrom('access_key')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('owner', '=', '')
    .where('type', '=', 'none')
    .where('name', '=', 'None')
    .orderBy('id')
    .executeTakeFirst();
}

/** Where a key's secret is read from at task time: nothing (stored), or an environment variable or file. */
type SourceColumns = { source_storage_type: string | null; source_storage_key: string | null };

export function insertKeyRow(
  db: Db,
  dialect: Dialect,
  row: { project_id: number; name: string; type: string; secret: string | null } & SourceColumns,
) {
  return insertReturningId(db, dialect, 'access_key', { ...row, owner: '', environment_id: null });
}

export function updateKeyRow(
  db: Db,
  projectId: number,
  id: number,
  patch: { name: string; type: string; secret?: string | null } & Partial<SourceColumns>,
) {
  return updateRows(db, 'access_key', { id, project_id: projectId, owner: '' }, patch);
}

export function deleteKeyRow(db: Db, projectId: number, id: number) {
  return deleteRows(db, 'access_key', { id, project_id: projectId, owner: '' });
}

/** A key of the project's key store (not an environment secret) that can hold an auth secret. */
export function findStoreKey(db: Db, projectId: number, id: number) {
  return db
    .selectFrom('access_key')
    .select(['id', 'name', 'type', 'secret', 'source_storage_type', 'source_storage_key'])
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .where('owner', '=', '')
    .executeTakeFirst();
}
