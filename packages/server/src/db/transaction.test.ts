import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { migratedDb } from '../../test/support/migrated-db';
import type { DbHandle } from '.';
import { afterCommit, transaction } from './transaction';
import { now } from './values';

describe.each(testDialects())('transaction with after-commit hooks on $name', (dialect) => {
  let handle: DbHandle;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ handle, close } = await migratedDb(dialect, 'trx'));
  });
  afterAll(async () => close?.());

  const names = async () =>
    (await handle.db.selectFrom('project').select('name').orderBy('id').execute()).map((r) => r.name);
  const insertProject = (db: DbHandle['db'], name: string) =>
    db
      .insertInto('project')
      .values({ name, created: now(), alert: 0, alert_chat: null, max_parallel_tasks: 0, type: '' })
      .execute();

  it('runs the hooks after the commit, in order, where the committed rows are visible', async () => {
    let visible: Promise<string[]> | undefined;
    const order: string[] = [];
    const result = await transaction(handle.db, async (trx, onCommit) => {
      await insertProject(trx, 'committed');
      onCommit(() => order.push('first'));
      onCommit(() => {
        order.push('second');
        // Read outside the transaction: the hook sees what the commit made visible to everyone.
        visible = names();
      });
      expect(order).toEqual([]);
      return 42;
    });
    expect(result).toBe(42);
    expect(order).toEqual(['first', 'second']);
    expect(await visible).toContain('committed');
  });

  it('never runs the hooks of a transaction that rolled back, and keeps none of its rows', async () => {
    let ran = false;
    await expect(
      transaction(handle.db, async (trx, onCommit) => {
        await insertProject(trx, 'rolled back');
        onCommit(() => {
          ran = true;
        });
        throw new Error('work failed');
      }),
    ).rejects.toThrow('work failed');
    expect(ran).toBe(false);
    expect(await names()).not.toContain('rolled back');
  });

  it('keeps the commit when a hook throws, runs the later hooks, then reports the error', async () => {
    const order: string[] = [];
    await expect(
      transaction(handle.db, async (trx, onCommit) => {
        await insertProject(trx, 'kept');
        onCommit(() => {
          throw new Error('listener failed');
        });
        onCommit(() => order.push('after the failure'));
      }),
    ).rejects.toThrow('listener failed');
    expect(order).toEqual(['after the failure']);
    expect(await names()).toContain('kept');
  });

  it('afterCommit runs at once on a plain handle, after the commit in a transaction, never after a rollback', async () => {
    const order: string[] = [];
    afterCommit(handle.db, () => order.push('plain'));
    expect(order).toEqual(['plain']);
    await transaction(handle.db, async (trx) => {
      await insertProject(trx, 'deferred');
      afterCommit(trx, () => order.push('committed'));
      expect(order).toEqual(['plain']);
    });
    expect(order).toEqual(['plain', 'committed']);
    await expect(
      transaction(handle.db, async (trx) => {
        afterCommit(trx, () => order.push('rolled back'));
        throw new Error('work failed');
      }),
    ).rejects.toThrow('work failed');
    expect(order).toEqual(['plain', 'committed']);
  });
});
