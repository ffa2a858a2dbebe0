import { type Compilable, CompiledQuery, type Kysely, type Selectable } from 'kysely';
import type { Database, Db } from './index';
import { namePrepared } from './prepared';

/** The SQL of each shape of read, per database (its dialect writes it). */
const sqlByDb = new WeakMap<Db, Map<string, string>>();

/** The most shapes kept per database: a fixed set of list reads, not one per value. */
const MAX_SHAPES = 256;

const sameValues = (a: readonly unknown[], b: readonly unknown[]) =>
  a.length === b.length && a.every((value, i) => value === b[i]);

/**
 * A read run on every request, built and compiled once per shape and database and then run with this call's
 * parameters: building a Kysely query (its nodes, their freezing, the compiler's walk) cost as much CPU as the
 * SQLite statement itself for a task list page. `key` names the shape (which optional conditions it has);
 * `parameters` are this call's values in the order the built query takes them, checked against the first compile
 * of the shape, so a shape whose parameters come in another order is compiled anew every time rather than run wrong.
 * On PostgreSQL the kept SQL runs as a named prepared statement (see `namePrepared`): values that change the plan's
 * shape (a LIMIT, whose generic plan PostgreSQL estimates at a tenth of the table) belong in the SQL and the key.
 */
export function compiledOnce(
  db: Db,
  key: string,
  parameters: readonly unknown[],
  build: () => Compilable,
): CompiledQuery {
  let shapes = sqlByDb.get(db);
  if (!shapes) {
    shapes = new Map();
    sqlByDb.set(db, shapes);
  }
  const sql = shapes.get(key);
  if (sql !== undefined) return CompiledQuery.raw(sql, [...parameters]);
  const compiled = build().compile();
  if (sameValues(compiled.parameters, parameters) && shapes.size < MAX_SHAPES) {
    shapes.set(key, compiled.sql);
    namePrepared(compiled.sql);
  }
  return compiled;
}

/** The rows of a read compiled once per shape (see compiledOnce), run with this call's `parameters`. */
export async function rowsOnce<R>(
  db: Db,
  key: string,
  parameters: readonly unknown[],
  build: () => Compilable<R>,
): Promise<R[]> {
  return (await db.executeQuery(compiledOnce(db, key, parameters, build) as CompiledQuery<R>)).rows;
}

/** Tables whose rows are found by an integer `id`. */
type TableWithId = {
  [T in keyof Database]: Database[T] extends { id: unknown } ? T : never;
}[keyof Database];

/**
 * The row of `table` with this id, all its columns (undefined: none), its SQL compiled once per table and database
 * (see compiledOnce): a task's start reads its task, template and project rows by id a dozen times, and building
 * each of those reads cost more than running it.
 */
export async function rowById<T extends TableWithId>(
  db: Db,
  table: T,
  id: number,
): Promise<Selectable<Database[T]> | undefined> {
  const query = compiledOnce(db, `${table} by id`, [id], () =>
    // The one table is not known to Kysely's types here; its query is the same for every table.
    (db as unknown as Kysely<Record<string, { id: number }>>)
      .selectFrom(table as string)
      .selectAll()
      .where('id', '=', id),
  );
  const result = await db.executeQuery<Selectable<Database[T]>>(query);
  return result.rows[0];
}

/** Tables whose rows belong to a project: an integer `id` and a `project_id`. */
type ProjectTableWithId = {
  [T in keyof Database]: Database[T] extends { id: unknown; project_id: unknown } ? T : never;
}[keyof Database];

/**
 * The row of `table` with this id in this project, all its columns (undefined: none, or another project's), its SQL
 * compiled once per table and database like rowById's: a task's start reads its repository, environment, inventory
 * and keys this way.
 */
export async function rowInProject<T extends ProjectTableWithId>(
  db: Db,
  table: T,
  projectId: number,
  id: number,
): Promise<Selectable<Database[T]> | undefined> {
  // The parameters in the order the query takes them: the id, then the project.
  const query = compiledOnce(db, `${table} by id in project`, [id, projectId], () =>
    (db as unknown as Kysely<Record<string, { id: number; project_id: number }>>)
      .selectFrom(table as string)
      .selectAll()
      .where('id', '=', id)
      .where('project_id', '=', projectId),
  );
  const result = await db.executeQuery<Selectable<Database[T]>>(query);
  return result.rows[0];
}
