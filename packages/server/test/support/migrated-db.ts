import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DbHandle, migrate, openDb } from '../../src/db';
import { insertReturningId, now } from '../../src/db/values';
import type { TestDialect } from './dialects';

/**
 * A migrated database of `dialect` of its own (in a temp data dir), for tests of the database layer below the app;
 * `close` ends its pool, drops it and removes the dir.
 */
export async function migratedDb(dialect: TestDialect, prefix: string) {
  const dataDir = mkdtempSync(join(tmpdir(), `signalbox-${prefix}-`));
  const database = await dialect.create(dataDir);
  const handle = openDb(database.url);
  await migrate(handle);
  return {
    handle,
    close: async () => {
      await handle.destroy();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A project row per name (in order, `values` setting any of its other columns); answers their ids. */
export async function insertProjects(
  handle: DbHandle,
  names: readonly string[],
  values: (i: number) => { alert?: number; max_parallel_tasks?: number } = () => ({}),
) {
  const ids: number[] = [];
  for (const [i, name] of names.entries())
    ids.push(
      await insertReturningId(handle.db, handle.dialect, 'project', {
        name,
        type: '',
        created: now(),
        alert: 0,
        max_parallel_tasks: 0,
        ...values(i),
      }),
    );
  return ids;
}
