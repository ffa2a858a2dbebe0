import { type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { Database } from './tables';

/**
 * Single-table statements that pick their rows by a key: columns and the value each must equal (or the list of
 * values it must be one of). A project-scoped row is `{ id, project_id: projectId }`; the project column is part
 * of every key that reaches into a project, so an id of another project never matches.
 */
export type RowKey<T extends keyof Database> = {
  [C in keyof Selectable<Database[T]>]?:
    | NonNullable<Selectable<Database[T]>[C]>
    | readonly NonNullable<Selectable<Database[T]>[C]>[];
};

/** The database seen without its tables' types: Kysely cannot type a where on a column of a generic table. */
// biome-ignore lint/suspicious/noExplicitAny: see above
const untyped = (db: Kysely<Database>) => db as Kysely<any>;
const selectAllFrom = (db: Kysely<Database>, table: string) => untyped(db).selectFrom(table).selectAll();
type Filterable<Q> = { where(column: string, op: '=' | 'in', value: unknown): Q };

/** Adds one condition per key column; an empty key or an undefined value is a bug, never "every row". */
function whereKey<Q extends Filterable<Q>>(query: Q, key: Record<string, unknown>): Q {
  const columns = Object.entries(key);
  if (columns.length === 0) throw new Error('a row key needs at least one column');
  for (const [column, value] of columns) {
    if (value === undefined) throw new Error(`row key column ${column} has no value`);
    // `in ()` is not SQL on any of the three databases; a caller with a possibly empty list answers [] itself.
    if (Array.isArray(value) && value.length === 0)
      throw new Error(`row key column ${column} has an empty list`);
    query = query.where(column, Array.isArray(value) ? 'in' : '=', value);
  }
  return query;
}

/** The first row matching the key (at most one when the key holds the id). */
export async function findRow<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  key: RowKey<T>,
): Promise<Selectable<Database[T]> | undefined> {
  return whereKey(selectAllFrom(db, table), key).executeTakeFirst() as Promise<
    Selectable<Database[T]> | undefined
  >;
}

/** Every row matching the key, in id order. */
export async function listRows<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  key: RowKey<T>,
): Promise<Selectable<Database[T]>[]> {
  return whereKey(selectAllFrom(db, table), key).orderBy('id').execute() as Promise<
    Selectable<Database[T]>[]
  >;
}

/** Sets the values on every row matching the key. */
export async function updateRows<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  key: RowKey<T>,
  values: Updateable<Database[T]>,
) {
  await whereKey(
    untyped(db)
      .updateTable(table as string)
      .set(values as Record<string, unknown>),
    key,
  ).execute();
}

/** Deletes every row matching the key. */
export async function deleteRows<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  key: RowKey<T>,
) {
  await whereKey(untyped(db).deleteFrom(table as string), key).execute();
}

/**
 * The rows matching the key in the lists' order: case-insensitively by the sort column, then by name, then by id
 * so equal names keep a stable order.
 */
export async function listRowsByName<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  key: RowKey<T>,
  sort: keyof Selectable<Database[T]> & string,
  order: 'asc' | 'desc',
): Promise<Selectable<Database[T]>[]> {
  return whereKey(selectAllFrom(db, table), key)
    .orderBy(sql`lower(${sql.ref(sort)})`, order)
    .orderBy('name', order)
    .orderBy('id')
    .execute() as Promise<Selectable<Database[T]>[]>;
}
