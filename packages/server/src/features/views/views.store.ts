import type { View, ViewPositionsInput } from '@signalbox/contracts';
import type { Selectable, Transaction } from 'kysely';
import type { Db, Dialect } from '../../db';
import { findRow, updateRows } from '../../db/rows';
import type { Database, ViewTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';

export const toView = (row: Selectable<ViewTable>): View => ({
  id: row.id,
  project_id: row.project_id,
  title: row.title,
  position: row.position,
});

/** A project's view rows in the order the console shows them. */
export const listViewRows = (db: Db, projectId: number) =>
  db
    .selectFrom('view')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('position')
    .orderBy('id')
    .execute();

export async function listViews(db: Db, projectId: number): Promise<View[]> {
  return (await listViewRows(db, projectId)).map(toView);
}

export async function findView(db: Db, projectId: number, id: number): Promise<View | undefined> {
  const row = await findRow(db, 'view', { id, project_id: projectId });
  return row ? toView(row) : undefined;
}

/** The position after the last view of the project. */
export async function nextPosition(db: Db, projectId: number): Promise<number> {
  const row = await db
    .selectFrom('view')
    .select((eb) => eb.fn.max('position').as('max'))
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return row?.max == null ? 0 : Number(row.max) + 1;
}

export function insertView(
  db: Db,
  dialect: Dialect,
  values: { project_id: number; title: string; position: number },
) {
  return insertReturningId(db, dialect, 'view', values);
}

export async function updateView(db: Db, id: number, values: { title: string; position: number }) {
  await db.updateTable('view').set(values).where('id', '=', id).execute();
}

/**
 * Deletes a view; its templates stay, outside any view. Two statements: call it in the transaction that also
 * writes the delete's event (`trx`), so they land together.
 */
export async function deleteView(trx: Transaction<Database>, projectId: number, id: number) {
  await trx
    .updateTable('template')
    .set({ view_id: null })
    .where('project_id', '=', projectId)
    .where('view_id', '=', id)
    .execute();
  await trx.deleteFrom('view').where('id', '=', id).execute();
}

/** Ids among `ids` that are views of the project. */
export async function viewIdsInProject(db: Db, projectId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('view')
    .select('id')
    .where('project_id', '=', projectId)
    .where('id', 'in', ids)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Moves views; `trx` is the caller's transaction (which records the event too). */
export async function setPositions(trx: Db, projectId: number, positions: ViewPositionsInput) {
  for (const { id, position } of positions) {
    await updateRows(trx, 'view', { id, project_id: projectId }, { position });
  }
}
