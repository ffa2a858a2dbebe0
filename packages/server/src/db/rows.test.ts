import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { type DbHandle, migrate, openDb } from '.';
import { deleteRows, findRow, listRows, updateRows } from './rows';
import { insertReturningId, now } from './values';

describe.each(testDialects())('rows picked by a key on $name', (dialect) => {
  let handle: DbHandle;
  let dataDir: string;
  let drop: () => Promise<void>;
  const ids: number[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'signalbox-rows-'));
    const database = await dialect.create(dataDir);
    drop = database.drop;
    handle = openDb(database.url);
    await migrate(handle);
    for (const name of ['alpha', 'beta', 'gamma'])
      ids.push(
        await insertReturningId(handle.db, handle.dialect, 'project', {
          name,
          type: '',
          created: now(),
          alert: 0,
          max_parallel_tasks: 0,
        }),
      );
  });
  afterAll(async () => {
    await handle?.destroy();
    await drop?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

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
