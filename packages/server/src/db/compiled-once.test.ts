import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { insertProjects, migratedDb } from '../../test/support/migrated-db';
import type { DbHandle } from '.';
import { compiledOnce, rowById, rowInProject } from './compiled-once';
import { insertReturningId } from './values';

describe.each(testDialects())('reads compiled once per shape on $name', (dialect) => {
  let handle: DbHandle;
  let close: (() => Promise<void>) | undefined;
  const ids: number[] = [];

  beforeAll(async () => {
    ({ handle, close } = await migratedDb(dialect, 'compiled-once'));
    ids.push(...(await insertProjects(handle, ['one', 'two', 'three', 'four'])));
  });
  afterAll(async () => close?.());

  /** Project names above an id, up to a count: run through compiledOnce, counting the builds. */
  const namesAbove = async (key: string, above: number, limit: number, parameters = [above, limit]) => {
    let builds = 0;
    const build = () => {
      builds++;
      return handle.db
        .selectFrom('project')
        .select('name')
        .where('id', '>', above)
        .orderBy('id')
        .limit(limit);
    };
    const result = await handle.db.executeQuery(compiledOnce(handle.db, key, parameters, build));
    return { names: (result.rows as { name: string }[]).map((r) => r.name), builds };
  };

  it('builds a shape once and runs it with each call’s own values', async () => {
    expect(await namesAbove('names above', ids[0]!, 2)).toEqual({ names: ['two', 'three'], builds: 1 });
    expect(await namesAbove('names above', ids[1]!, 1)).toEqual({ names: ['three'], builds: 0 });
    expect(await namesAbove('names above', ids[0]!, 10)).toEqual({
      names: ['two', 'three', 'four'],
      builds: 0,
    });
  });

  it('builds anew every time when the values given are not in the order the query takes them', async () => {
    // Each limit differs from its id, so the swapped values never happen to be the right ones.
    for (const [above, limit] of [
      [ids[0]!, ids[0]! + 1],
      [ids[1]!, ids[1]! + 1],
    ] as const) {
      const swapped = await namesAbove('names above, swapped', above, limit, [limit, above]);
      expect(swapped.builds).toBe(1);
      expect(swapped.names).toEqual((await namesAbove('names above', above, limit)).names);
    }
  });

  it('finds a row by id with all its columns, in each table by its own read, and nothing for an unknown id', async () => {
    for (const [i, name] of ['one', 'two', 'three'].entries()) {
      const row = await rowById(handle.db, 'project', ids[i]!);
      expect(row).toEqual(
        await handle.db.selectFrom('project').selectAll().where('id', '=', ids[i]!).executeTakeFirst(),
      );
      expect(row?.name).toBe(name);
    }
    expect(await rowById(handle.db, 'project', Math.max(...ids) + 1000)).toBeUndefined();
    // Another table with the same id is read from that table, not from the project read kept above.
    expect(await rowById(handle.db, 'template', ids[0]!)).toBeUndefined();
  });

  it("finds a project's row by id, and nothing for another project's row, whatever the first read was", async () => {
    const view = (projectId: number, title: string) =>
      insertReturningId(handle.db, handle.dialect, 'view', { project_id: projectId, title, position: 0 });
    // On a fresh database the first view gets the first project's id, so the first read has the same value for both
    // of its parameters: a read kept with its values in the wrong order would pass it and then read the others wrong.
    const [first, second] = [ids[0]!, ids[1]!];
    const views = new Map<number, number>();
    for (const projectId of [first, second])
      views.set(projectId, await view(projectId, `view of ${projectId}`));
    const firstView = views.get(first)!;
    const secondView = views.get(second)!;
    expect((await rowInProject(handle.db, 'view', first, firstView))?.title).toBe(`view of ${first}`);
    expect((await rowInProject(handle.db, 'view', second, secondView))?.title).toBe(`view of ${second}`);
    expect(await rowInProject(handle.db, 'view', first, secondView)).toBeUndefined();
    expect(await rowInProject(handle.db, 'view', second, firstView)).toBeUndefined();
    expect(await rowInProject(handle.db, 'view', first, secondView + 1000)).toBeUndefined();
    expect(await rowInProject(handle.db, 'view', first, firstView)).toEqual(
      await handle.db.selectFrom('view').selectAll().where('id', '=', firstView).executeTakeFirst(),
    );
  });
});
