import type { SelectQueryBuilder } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { insertProjects, migratedDb } from '../../test/support/migrated-db';
import type { DbHandle } from '.';
import { jsonRowsQuery, parseJsonRows } from './json-rows';

/** The rows of `query` as arrays of `columns`, read as one JSON array. */
const jsonRows = async <Row>(
  db: DbHandle['db'],
  // biome-ignore lint/suspicious/noExplicitAny: any query whose rows have the columns
  query: SelectQueryBuilder<any, any, Row>,
  columns: readonly (keyof Row & string)[],
) => parseJsonRows<unknown[]>(await jsonRowsQuery(db, query, columns).executeTakeFirst());

describe.each(testDialects())('rows read as one JSON array on $name', (dialect) => {
  let handle: DbHandle;
  let close: (() => Promise<void>) | undefined;
  const names = ['plain', 'Ünïcödé ✓ 🚀', 'quote " back\\slash \n new line', "it's"];
  const ids: number[] = [];

  beforeAll(async () => {
    ({ handle, close } = await migratedDb(dialect, 'json-rows'));
    ids.push(
      ...(await insertProjects(handle, names, (i) => ({
        alert: i % 2,
        max_parallel_tasks: i === 0 ? 2_147_483_647 : i,
      }))),
    );
  });
  afterAll(async () => close?.());

  it('answers the same values as the rows read one object each, nulls and any text included', async () => {
    const { db } = handle;
    const query = db
      .selectFrom('project')
      .leftJoin('view', 'view.project_id', 'project.id')
      .select(['project.id', 'project.name', 'project.max_parallel_tasks', 'view.title'])
      .where('project.id', 'in', ids);
    const objects = await query.execute();
    const arrays = await jsonRows(db, query, ['id', 'name', 'max_parallel_tasks', 'title']);
    const byId = (rows: readonly (readonly unknown[])[]) =>
      [...rows].sort((a, b) => Number(a[0]) - Number(b[0]));
    expect(byId(arrays)).toEqual(
      byId(objects.map((r) => [r.id, r.name, Number(r.max_parallel_tasks), r.title ?? null])),
    );
    expect(arrays.map((r) => r[1]).sort()).toEqual([...names].sort());
    expect(arrays.map((r) => r[3])).toEqual(names.map(() => null));
  });

  it('answers no rows as an empty list', async () => {
    const none = handle.db.selectFrom('project').select(['id', 'name']).where('id', '=', -1);
    expect(await jsonRows(handle.db, none, ['id', 'name'])).toEqual([]);
  });
});
