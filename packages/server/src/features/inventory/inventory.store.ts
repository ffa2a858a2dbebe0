import { type Selectable, sql } from 'kysely';
import type { Db, Dialect } from '../../db';
import type { InventoryTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';

export type InventoryRow = Selectable<InventoryTable>;
export type InventoryValues = {
  name: string;
  type: string;
  inventory: string;
  ssh_key_id: number | null;
  become_key_id: number | null;
  repository_id: number | null;
};

export function listInventoryRows(db: Db, projectId: number, sort: 'name' | 'type', order: 'asc' | 'desc') {
  return db
    .selectFrom('inventory')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy(sql`lower(${sql.ref(sort)})`, order)
    .orderBy('name', order)
    .orderBy('id')
    .execute();
}

export function findInventoryRow(db: Db, projectId: number, id: number) {
  return db
    .selectFrom('inventory')
    .selectAll()
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
}

export function insertInventoryRow(db: Db, dialect: Dialect, projectId: number, values: InventoryValues) {
  return insertReturningId(db, dialect, 'inventory', { project_id: projectId, ...values });
}

export async function updateInventoryRow(db: Db, projectId: number, id: number, values: InventoryValues) {
  await db
    .updateTable('inventory')
    .set(values)
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .execute();
}

export async function deleteInventoryRow(db: Db, projectId: number, id: number) {
  await db.deleteFrom('inventory').where('id', '=', id).where('project_id', '=', projectId).execute();
}
