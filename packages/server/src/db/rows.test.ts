import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { insertProjects, migratedDb } from '../../test/support/migrated-db';
import type { DbHandle } from '.';
import { deleteRows, findRow, listRows, updateRows } from './rows';

describe.each(testDialects())('rows picked by a key on $name', (dialect) => {
  let handle: DbHandle;
  let close: (() => Promise<void>) | undefined;
  const ids: number[] = [];

  beforeAll(async () => {
    ({ handle, close } = await migratedDb(dialect, 'rows'));
    ids.push(...(await insertProjects(handle, ['alpha', 'beta', 'gamma'])));
  });
  afterAll(async () => close?.());

  it('finds, lists, updates and deletes exactly the rows the key names', async () => {
    const [alpha, beta, gamma] = ids as [number, number, number];
    expect((await findRow(handle.db, 'project', { id: beta }))?.name).toBe('beta');
    expect(await findRow(handle.db, 'project', { id: beta, name: 'alpha' })).toBeUndefined();
    expect((await listRows(handle.db, 'project', { id: [gamma, alpha] })).map((p) => p.name)).toEqual([
      'alpha',
      'gamma',
    ]);
    await updateRows(handle.db, 'project', { id: alpha }, { name: 'alpha 2' });
    await deleteRows(handle.db, 'project', { id: [gamma] });
    expect((await listRows(handle.db, 'project', { id: ids })).map((p) => p.name)).toEqual([
      'alpha 2',
      'beta',
    ]);
  });

  it('refuses a key that would pick every row or is not SQL, before touching the database', async () => {
    await expect(deleteRows(handle.db, 'project', {})).rejects.toThrow('at least one column');
    await expect(updateRows(handle.db, 'project', { id: undefined }, { name: 'x' })).rejects.toThrow(
      'has no value',
    );
    await expect(listRows(handle.db, 'project', { id: [] })).rejects.toThrow('empty list');
    expect((await listRows(handle.db, 'project', { id: ids })).length).toBe(2);
  });
});
