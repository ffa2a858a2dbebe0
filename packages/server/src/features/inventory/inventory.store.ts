import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import { deleteRows, findRow, listRowsByName, updateRows } from '../../db/rows';
import type { InventoryTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';

export type InventoryRow = Selectable<InventoryTable>;
export type InventoryValues = Omit<InventoryRow, 'id' | 'project_id' | 'runner_tag'> & {
  runner_tag?: string | null;
};

export function listInventoryRows(db: Db, projectId: number, sort: 'name' | 'type', order: 'asc' | 'desc') {
  return listRowsByName(db, 'inventory', { project_id: projectId }, sort, order);
}

export function findInventoryRow(db: Db, projectId: number, id: number) {
  return findRow(db, 'inventory', { id, project_id: projectId });
}

export function insertInventoryRow(db: Db, dialect: Dialect, projectId: number, values: InventoryValues) {
  return insertReturningId(db, dialect, 'inventory', { project_id: projectId, ...values });
}

export function updateInventoryRow(db: Db, projectId: number, id: number, values: InventoryValues) {
  return updateRows(db, 'inventory', { id, project_id: projectId }, values);
}

export function deleteInventoryRow(db: Db, projectId: number, id: number) {
  return deleteRows(db, 'inventory', { id, project_id: projectId });
}
