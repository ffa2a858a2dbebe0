import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { insertProjects, migratedDb } from '../../../test/support/migrated-db';
import { insertTemplate, taskRow } from '../../../test/support/task-fixtures';
import { type Db, type DbHandle, openDb } from '../../db';
import { insertReturningId } from '../../db/values';
import { parseTaskHeads, readTaskHeads, taskPageWindow } from '../../tasks/store';

describe.each(testDialects())('a page of task heads on $name', (dialect) => {
  let handle: DbHandle;
  let close: (() => Promise<void>) | undefined;
  let projectId: number;
  const taskIds: number[] = [];

  beforeAll(async () => {
    ({ handle, close } = await migratedDb(dialect, 'task-heads'));
    [projectId] = await insertProjects(handle, ['heads']);
    const templateId = await insertTemplate(handle, projectId!);
    for (let i = 0; i < 7; i++)
      taskIds.push(
        await insertReturningId(handle.db, handle.dialect, 'task', taskRow(projectId!, templateId)),
      );
  });
  afterAll(async () => close?.());

  const idsOf = async (page: Parameters<typeof readTaskHeads>[2]) =>
    parseTaskHeads((await readTaskHeads(handle.db, projectId, page)).text).map((head) => head[0]);

  it('answers each size, offset and boundary of page with its own tasks, newest first', async () => {
    const newest = [...taskIds].reverse();
    expect(await idsOf({ limit: 3 })).toEqual(newest.slice(0, 3));
    expect(await idsOf({ limit: 2 })).toEqual(newest.slice(0, 2));
    expect(await idsOf({ limit: 3, offset: 3 })).toEqual(newest.slice(3, 6));
    expect(await idsOf({ limit: 3, offset: 6 })).toEqual(newest.slice(6));
    expect(await idsOf({ limit: 3, before: newest[1] })).toEqual(newest.slice(2, 5));
    expect(await idsOf({ limit: 0 })).toEqual([]);
  });

  it('gives the same text for the same heads and another once a task of the page changes', async () => {
    const read = async () => (await readTaskHeads(handle.db, projectId, { limit: 5 })).text;
    const before = await read();
    expect(await read()).toBe(before);
    await handle.db
      .updateTable('task')
      .set({ message: 'changed' })
      .where('id', '=', taskIds.at(-2)!)
      .execute();
    const after = await read();
    expect(after).not.toBe(before);
    expect(await read()).toBe(after);
  });

  it('answers right after a client has asked for more page sizes than the shapes kept', async () => {
    const newest = [...taskIds].reverse();
    // Each size is a shape of its own (written into the SQL): far more than are kept, so later ones compile anew.
    for (let limit = 1; limit <= 300; limit++)
      expect(await idsOf({ limit, offset: 1 })).toEqual(newest.slice(1, 1 + limit));
    expect(await idsOf({ limit: 4, status: 'success' })).toEqual(newest.slice(0, 4));
  });

  it('refuses a page size that is not a whole number rather than write it into the SQL', async () => {
    for (const limit of [1.5, -1, Number.NaN, Number.POSITIVE_INFINITY])
      await expect(readTaskHeads(handle.db, projectId, { limit })).rejects.toThrow(/whole number/);
  });
});

describe.each(testDialects())('deep pages of a long task list on $name', (dialect) => {
  let handle: DbHandle;
  let close: (() => Promise<void>) | undefined;
  let projectId: number;
  let templates: number[];
  /** The ids a plain walk from the newest gives: what every page must match. */
  const newest = async (templateId?: number) => {
    let q = handle.db.selectFrom('task').select('id').where('project_id', '=', projectId);
    if (templateId) q = q.where('template_id', '=', templateId);
    return (await q.orderBy('id', 'desc').execute()).map((r) => r.id);
  };
  const idsOf = async (page: Parameters<typeof readTaskHeads>[2]) =>
    parseTaskHeads((await readTaskHeads(handle.db, projectId, page)).text).map((head) => head[0]);

  beforeAll(async () => {
    ({ handle, close } = await migratedDb(dialect, 'task-heads-deep'));
    const [other] = await insertProjects(handle, ['deep', 'other']).then((ids) => {
      projectId = ids[0]!;
      return [ids[1]!];
    });
    templates = [await insertTemplate(handle, projectId), await insertTemplate(handle, projectId)];
    const otherTemplate = await insertTemplate(handle, other!);
    // 2,600 tasks, two in three of the second template, among tasks of another project (which no count may take).
    for (let chunk = 0; chunk < 13; chunk++)
      await handle.db
        .insertInto('task')
        .values(
          Array.from({ length: 220 }, (_, i) =>
            i % 11 === 10
              ? taskRow(other!, otherTemplate)
              : taskRow(projectId, templates[(chunk * 220 + i) % 3 === 0 ? 0 : 1]!),
          ),
        )
        .execute();
  });
  afterAll(async () => close?.());

  it('reads a page in the older half from the oldest end, the same tasks newest first', async () => {
    const all = await newest();
    expect(all).toHaveLength(2600);
    for (const [offset, limit] of [
      [1000, 200],
      [1299, 3],
      [1300, 3],
      [1301, 200],
      [2400, 200],
      [2450, 200],
      [2599, 5],
      [2600, 5],
      [5000, 200],
    ] as const)
      expect(await idsOf({ limit, offset }), `offset ${offset}, limit ${limit}`).toEqual(
        all.slice(offset, offset + limit),
      );
    expect(await taskPageWindow(handle.db, projectId, { limit: 200, offset: 1300 })).toEqual({
      order: 'desc',
      limit: 200,
      offset: 1300,
    });
    expect(await taskPageWindow(handle.db, projectId, { limit: 200, offset: 2450 })).toEqual({
      order: 'asc',
      limit: 150,
      offset: 0,
    });
    expect(await taskPageWindow(handle.db, projectId, { limit: 200, offset: 1800 })).toEqual({
      order: 'asc',
      limit: 200,
      offset: 600,
    });
    expect(await taskPageWindow(handle.db, projectId, { limit: 200, offset: 9000 })).toMatchObject({
      limit: 0,
    });
  });

  it("counts one template's tasks for its own list, and keeps counting as tasks come and go", async () => {
    const second = templates[1]!;
    const ofSecond = await newest(second);
    expect(ofSecond.length).toBeGreaterThan(1500);
    const deep = ofSecond.length - 150;
    expect(await idsOf({ templateId: second, limit: 200, offset: deep })).toEqual(ofSecond.slice(deep));
    expect(
      await taskPageWindow(handle.db, projectId, { templateId: second, limit: 200, offset: deep }),
    ).toMatchObject({ order: 'asc' });
    // Old tasks deleted (as retention does) and new ones started: the counts the triggers keep follow.
    const all = await newest();
    await handle.db.deleteFrom('task').where('id', 'in', all.slice(-300)).execute();
    await handle.db
      .insertInto('task')
      .values(Array.from({ length: 40 }, () => taskRow(projectId, second)))
      .execute();
    const now = await newest();
    expect(now).toHaveLength(2600 - 300 + 40);
    for (const offset of [1500, 2000, 2300, 2339])
      expect(await idsOf({ limit: 200, offset })).toEqual(now.slice(offset, offset + 200));
    const secondNow = await newest(second);
    const near = secondNow.length - 10;
    expect(await idsOf({ templateId: second, limit: 20, offset: near })).toEqual(secondNow.slice(near));
  });

  it('walks from the newest a page filtered on status or cut at a task, however deep', async () => {
    const all = await newest();
    expect(await idsOf({ status: 'success', limit: 100, offset: all.length - 50 })).toEqual(all.slice(-50));
    expect(await idsOf({ before: all[100], limit: 100, offset: all.length - 150 })).toEqual(
      all.slice(101).slice(all.length - 150),
    );
    expect(
      await taskPageWindow(handle.db, projectId, { status: 'success', limit: 100, offset: 2000 }),
    ).toEqual({
      order: 'desc',
      limit: 100,
      offset: 2000,
    });
  });
});

const postgres = testDialects().find((d) => d.name === 'postgres');

/** Runs only where PostgreSQL is configured: prepared statements and their plans are that database's. */
describe.runIf(postgres)('task pages on PostgreSQL', () => {
  const opened: { handle: DbHandle; drop: () => Promise<void> }[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'signalbox-task-heads-pg-'));
  afterAll(async () => {
    for (const { handle, drop } of opened) {
      await handle.destroy();
      await drop();
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A database with one project of 1 + `copies` tasks, opened with the given prepared-statement setting. */
  async function database(preparedStatements: boolean, copies: number) {
    const created = await postgres!.create(dataDir);
    // Made from the migrated template database.
    const seed = openDb(created.url);
    const [projectId] = await insertProjects(seed, ['plans']);
    const templateId = await insertTemplate(seed, projectId!);
    // At 20,000 tasks a plan for a tenth of the table (a hash of every task) costs more than walking the index.
    const first = await insertReturningId(seed.db, 'postgres', 'task', taskRow(projectId!, templateId));
    await sql`insert into task (project_id, template_id, status, message, created, playbook, environment, params,
        debug, dry_run, diff)
      select project_id, template_id, status, message, created, playbook, environment, params, debug, dry_run, diff
      from task, generate_series(1, ${copies}) where task.id = ${first}`.execute(seed.db);
    await sql`analyze task`.execute(seed.db);
    await seed.destroy();
    const handle = openDb(created.url, { preparedStatements });
    opened.push({ handle, drop: created.drop });
    return { handle, projectId: projectId! };
  }

  /** The plans counted for the statements this connection prepared (PostgreSQL's own view of its session). */
  const preparedOn = async (db: Db) =>
    (
      await sql<{ statement: string; generic_plans: string; custom_plans: string }>`
        select statement, generic_plans, custom_plans from pg_prepared_statements`.execute(db)
    ).rows.map((r) => ({
      ...r,
      generic_plans: Number(r.generic_plans),
      custom_plans: Number(r.custom_plans),
    }));

  it('plans a page of tasks once per connection: a prepared statement whose plan serves every page after', async () => {
    const { handle, projectId } = await database(true, 20_000);
    const plans = await handle.db.connection().execute(async (connection) => {
      for (let i = 0; i < 12; i++) {
        const heads = parseTaskHeads((await readTaskHeads(connection, projectId, { limit: 10 })).text);
        expect(heads).toHaveLength(10);
      }
      return (await preparedOn(connection)).filter((p) => /\btask\b/.test(p.statement));
    });
    expect(plans).toHaveLength(1);
    // PostgreSQL plans the first five runs for their values, then keeps one plan when it is as good: with the page
    // size passed as a value it estimates a tenth of the table and plans every run anew.
    expect(plans[0]!.custom_plans).toBeLessThanOrEqual(5);
    expect(plans[0]!.generic_plans).toBeGreaterThanOrEqual(6);
  });

  it('keeps at most 32 statements prepared on a connection, deallocating the least recently used', async () => {
    const { handle, projectId } = await database(true, 60);
    const prepared = await handle.db.connection().execute(async (connection) => {
      // 40 page sizes (each its own SQL), twice over: the first ones come back after they were deallocated.
      for (let round = 0; round < 2; round++)
        for (let limit = 1; limit <= 40; limit++) {
          const heads = parseTaskHeads((await readTaskHeads(connection, projectId, { limit })).text);
          expect(heads).toHaveLength(limit);
        }
      return preparedOn(connection);
    });
    expect(prepared.length).toBeGreaterThan(0);
    expect(prepared.length).toBeLessThanOrEqual(32);
  });

  it('prepares nothing when prepared statements are turned off', async () => {
    const { handle, projectId } = await database(false, 20);
    const prepared = await handle.db.connection().execute(async (connection) => {
      for (let i = 0; i < 3; i++) await readTaskHeads(connection, projectId, { limit: 10 });
      return preparedOn(connection);
    });
    expect(prepared).toEqual([]);
  });
});
