import type { OptionList, OptionListEntry } from '@signalbox/contracts';
import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import { deleteRows, findRow, listRowsByName, updateRows } from '../../db/rows';
import type { OptionListTable } from '../../db/tables';
import { insertReturningId, parseJson } from '../../db/values';

export type OptionListRow = Selectable<OptionListTable>;

/** The entries of a stored list; anything but an array of {name, value} text reads as none. */
export function entriesOf(row: Pick<OptionListRow, 'options'>): OptionListEntry[] {
  const parsed = parseJson<unknown>(row.options, []);
  if (!Array.isArray(parsed)) return [];
  return parsed.flatMap((item) =>
    item && typeof item === 'object' && typeof item.name === 'string' && typeof item.value === 'string'
      ? [{ name: item.name, value: item.value }]
      : [],
  );
}

export const toOptionList = (row: OptionListRow): OptionList => ({
  id: row.id,
  project_id: row.project_id,
  name: row.name,
  options: entriesOf(row),
});

export function listOptionListRows(db: Db, projectId: number, order: 'asc' | 'desc') {
  return listRowsByName(db, 'option_list', { project_id: projectId }, 'name', order);
}

export function findOptionListRow(db: Db, projectId: number, id: number) {
  return findRow(db, 'option_list', { id, project_id: projectId });
}

type Values = { name: string; options: OptionListEntry[] };
const stored = (values: Values) => ({ name: values.name, options: JSON.stringify(values.options) });

export function insertOptionListRow(db: Db, dialect: Dialect, projectId: number, values: Values) {
  return insertReturningId(db, dialect, 'option_list', { project_id: projectId, ...stored(values) });
}

export function updateOptionListRow(db: Db, projectId: number, id: number, values: Values) {
  return updateRows(db, 'option_list', { id, project_id: projectId }, stored(values));
}

export function deleteOptionListRow(db: Db, projectId: number, id: number) {
  return deleteRows(db, 'option_list', { id, project_id: projectId });
}
