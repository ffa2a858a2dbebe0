import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  sql,
  TableNode,
  type UnknownRow,
} from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TestDialect, testDialects } from '../../test/support/dialects';
import { ManualClock } from '../../test/support/manual-clock';
import { taskRow, templateRow, waitFor } from '../../test/support/task-fixtures';
import { buildApp } from '../app';
import { type Config, loadConfig } from '../config';
import { migrate, openDb } from '../db';
import { retention as retentionMigration } from '../db/migrations/0003-retention';
import { insertReturningId } from '../db/values';
import type { Deps } from '../deps';
import { EventBus } from '../live/bus';
import { insertOutput } from './output/output.store';
import { createRetention, type RetentionOptions } from './retention';

const DAY = 24 * 60 * 60 * 1000;
const NOW = new Date('2025-06-15T12:00:00.000Z');
const ago = (days: number, from = NOW) => new Date(from.getTime() - days * DAY).toISOString();

/** A fresh, migrated database of the dialect (no app): the job needs only db, config and a logger. */
async function freshDb(dialect: TestDialect) {
  const dataDir = mkdtempSync(join(tmpdir(), 'signalbox-retention-'));
  const database = await dialect.create(dataDir);
  const handle = openDb(database.url);
  await migrate(handle);
  return {
    dataDir,
    url: database.url,
    handle,
    async close() {
      await handle.destroy();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Records the rows every DELETE touched, per table, to check the chunk sizes the job uses. */
function deleteRecorder() {
  const kinds = new Map<object, string>();
  const deletes: Array<{ table: string; rows: number }> = [];
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
      if (node.kind === 'DeleteQueryNode') {
        const from = node.from.froms[0];
        if (from && TableNode.is(from)) kinds.set(queryId, from.table.identifier.name);
      }
      return node;
    },
    async transformResult({ result, queryId }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      const table = kinds.get(queryId);
      if (table) deletes.push({ table, rows: Number(result.numAffectedRows ?? 0) });
      return result;
    },
  };
  return { plugin, deletes };
}

describe.each(testDialects())('task retention on $name', (dialect) => {
  let env: Awaited<ReturnType<typeof freshDb>>;
  let config: Config;
  let clock: ManualClock;
  let logs: Array<{ obj: Record<string, unknown>; msg: string }>;

  const log = {
    info: (obj: Record<string, unknown>, msg: string) => void logs.push({ obj, msg }),
    warn: (obj: Record<string, unknown>, msg: string) => void logs.push({ obj, msg: `WARN ${msg}` }),
  } as unknown as Deps['log'];

  const db = () => env.handle.db;
  /** The projects each run said changed (their cached lists are dropped on every instance). */
  const bus = new EventBus();
  const changed: (number | null)[] = [];
  bus.on('projectChanged', ({ projectId }) => void changed.push(projectId));
  const job = (serverDefault: number, options: RetentionOptions = {}, database = db()) =>
    createRetention(
      { db: database, config: { ...config, taskRetentionDays: serverDefault }, log, bus },
      { clock, ...options },
    );

  let seq = 0;
  const project = async (days = 0) => {
    seq += 1;
    const id = await insertReturningId(db(), dialect.name, 'project', {
      created: ago(1000),
      name: `P${seq}`,
      alert: 0,
      alert_chat: null,
      max_parallel_tasks: 0,
      type: '',
      task_retention_days: days,
    });
    const templateId = await insertReturningId(db(), dialect.name, 'template', templateRow(id));
    return { id, templateId };
  };

  type TaskSpec = { status?: string; end?: string | null; created?: string; lines?: number; build?: number };
  const specRow = (p: { id: number; templateId: number }, t: TaskSpec) =>
    taskRow(p.id, p.templateId, {
      status: t.status ?? 'success',
      created: t.created ?? (t.end ? new Date(new Date(t.end).getTime() - 60_000).toISOString() : ago(0)),
      start: t.end ?? null,
      end: t.end ?? null,
      build_task_id: t.build ?? null,
    });
  /** Inserts a task and `lines` output rows for it. */
  const task = async (p: { id: number; templateId: number }, t: TaskSpec = {}) => {
    const id = await insertReturningId(db(), dialect.name, 'task', specRow(p, t));
    const lines = t.lines ?? 2;
    if (lines > 0) {
      await insertOutput(
        db(),
        dialect.name,
        Array.from({ length: lines }, (_, i) => ({
          task_id: id,
          time: t.end ?? ago(0),
          output: `line ${i}`,
        })),
      );
    }
    return id;
  };
  const taskIds = async (projectId?: number) => {
    let q = db().selectFrom('task').select('id').orderBy('id');
    if (projectId !== undefined) q = q.where('project_id', '=', projectId);
    return (await q.execute()).map((r) => r.id);
  };
  const outputCount = async (ids: number[]) =>
    ids.length
      ? Number(
          (
            await db()
              .selectFrom('task_output')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('task_id', 'in', ids)
              .executeTakeFirstOrThrow()
          ).n,
        )
      : 0;
  const allOutput = async () =>
    Number(
      (
        await db()
          .selectFrom('task_output')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeAll(async () => {
    env = await freshDb(dialect);
    config = loadConfig({}, { dataDir: env.dataDir, dbUrl: env.url, logLevel: 'silent' });
  });
  afterAll(async () => env?.close());
  beforeEach(async () => {
    clock = new ManualClock(NOW);
    logs = [];
    await db().deleteFrom('task_output').execute();
    await db().deleteFrom('event').execute();
    await db().deleteFrom('task').execute();
    await db().deleteFrom('template').execute();
    await db().deleteFrom('project').execute();
  });

  it('deletes old finished tasks with all their output; keeps recent and unfinished ones', async () => {
    const p = await project(0);
    const oldSuccess = await task(p, { status: 'success', end: ago(40), lines: 5 });
    const oldError = await task(p, { status: 'error', end: ago(31), lines: 3 });
    // Stopped before it ever started: no end, judged by its creation time.
    const oldStopped = await task(p, { status: 'stopped', end: null, created: ago(45), lines: 2 });
    const atCutoff = await task(p, { status: 'success', end: ago(30), lines: 1 });
    const recent = await task(p, { status: 'error', end: ago(29), lines: 4 });
    const unfinished = [];
    for (const status of ['waiting', 'starting', 'running', 'waiting_confirmation', 'confirmed', 'stopping'])
      unfinished.push(await task(p, { status, end: null, created: ago(400), lines: 3 }));
    // A deploy task built from a task that goes: the reference is cleared, the deploy task stays.
    const deploy = await task(p, { status: 'success', end: ago(1), lines: 1, build: oldSuccess });
    const deleted = [oldSuccess, oldError, oldStopped];
    const kept = [atCutoff, recent, ...unfinished, deploy];
    const outputBefore = await allOutput();

    const result = await job(30).run();

    expect(result).toEqual({ projects: 1, tasks: 3, output: 10 });
    expect(await taskIds()).toEqual(kept);
    expect(await outputCount(deleted)).toBe(0);
    expect(await allOutput()).toBe(outputBefore - 10);
    expect(await outputCount(unfinished)).toBe(18);
    expect(await outputCount([recent])).toBe(4);
    const deployRow = await db()
      .selectFrom('task')
      .select('build_task_id')
      .where('id', '=', deploy)
      .executeTakeFirstOrThrow();
    expect(deployRow.build_task_id).toBeNull();
    expect(logs).toEqual([
      {
        obj: { tasks: 3, outputRows: 10, projects: 1 },
        msg: 'retention: deleted 3 finished tasks with 10 output lines in 1 projects',
      },
    ]);

    const events = await db()
      .selectFrom('event')
      .select(['project_id', 'user_id', 'object_type', 'description'])
      .where('project_id', '=', p.id)
      .execute();
    expect(events).toEqual([
      {
        project_id: p.id,
        user_id: null,
        object_type: 'task',
        description: 'Retention deleted 3 finished tasks older than 30 days',
      },
    ]);

    // Nothing left to delete: no second log line and no second event.
    expect(await job(30).run()).toEqual({ projects: 0, tasks: 0, output: 0 });
    expect(logs).toHaveLength(1);
    expect(await db().selectFrom('event').select('id').where('project_id', '=', p.id).execute()).toHaveLength(
      1,
    );
    expect(await taskIds()).toEqual(kept);
  });

  it("a project's own limit beats the server default both ways; each project follows its own", async () => {
    const inherits = await project(0);
    const shorter = await project(5);
    const longer = await project(90);
    const ages = [3, 10, 60, 120];
    const made = new Map<number, number[]>();
    for (const p of [inherits, shorter, longer]) {
      made.set(p.id, []);
      for (const days of ages) made.get(p.id)!.push(await task(p, { end: ago(days) }));
    }
    const [i3, i10] = made.get(inherits.id)!;
    const [s3] = made.get(shorter.id)!;
    const [l3, l10, l60] = made.get(longer.id)!;

    changed.length = 0;
    const result = await job(30).run();

    expect(changed.sort()).toEqual([inherits.id, shorter.id, longer.id].sort());
    expect(await taskIds(inherits.id)).toEqual([i3, i10]);
    expect(await taskIds(shorter.id)).toEqual([s3]);
    expect(await taskIds(longer.id)).toEqual([l3, l10, l60]);
    expect(result).toEqual({ projects: 3, tasks: 6, output: 12 });
  });

  it('server default 0 keeps projects without their own limit; 0 and 0 keeps everything', async () => {
    const keepAll = await project(0);
    const own = await project(7);
    const keepIds = [await task(keepAll, { end: ago(5000) }), await task(keepAll, { end: ago(8) })];
    const ownRecent = await task(own, { end: ago(6) });
    await task(own, { end: ago(8) });
    await task(own, { status: 'stopped', end: ago(3000) });

    expect(await job(0).run()).toEqual({ projects: 1, tasks: 2, output: 4 });
    expect(await taskIds(keepAll.id)).toEqual(keepIds);
    expect(await taskIds(own.id)).toEqual([ownRecent]);

    // Only projects at 0 and a default of 0: nothing goes, nothing is logged.
    await db().updateTable('project').set({ task_retention_days: 0 }).execute();
    logs = [];
    clock.advance(10_000 * DAY);
    expect(await job(0).run()).toEqual({ projects: 0, tasks: 0, output: 0 });
    expect(await taskIds()).toEqual([...keepIds, ownRecent]);
    expect(logs).toEqual([]);
  });

  it('works through a backlog in bounded chunks: tasks per transaction and output rows per statement', async () => {
    const p = await project(10);
    const lineCounts = [0, 1, 5, 23, 3, 7, 2, 0, 16, 4, 1];
    const old: number[] = [];
    for (const lines of lineCounts) old.push(await task(p, { end: ago(20), lines }));
    const keep = [
      await task(p, { end: ago(2), lines: 30 }),
      await task(p, { status: 'running', created: ago(50) }),
    ];
    const recorder = deleteRecorder();
    const database = db().withPlugin(recorder.plugin);

    const result = await job(0, { taskChunk: 3, outputChunk: 7 }, database).run();

    const totalLines = lineCounts.reduce((a, b) => a + b, 0);
    expect(result).toEqual({ projects: 1, tasks: old.length, output: totalLines });
    expect(await taskIds()).toEqual(keep);
    expect(await outputCount(old)).toBe(0);
    expect(await outputCount(keep)).toBe(32);
    const taskDeletes = recorder.deletes.filter((d) => d.table === 'task');
    const outputDeletes = recorder.deletes.filter((d) => d.table === 'task_output');
    // 11 tasks at 3 per chunk: at least 4 transactions, none with more than 3 tasks.
    expect(taskDeletes.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...taskDeletes.map((d) => d.rows))).toBeLessThanOrEqual(3);
    expect(taskDeletes.reduce((a, d) => a + d.rows, 0)).toBe(old.length);
    // The 23- and 16-line logs went in slices: no statement removed more than 7 output rows.
    expect(Math.max(...outputDeletes.map((d) => d.rows))).toBeLessThanOrEqual(7);
    expect(outputDeletes.reduce((a, d) => a + d.rows, 0)).toBe(totalLines);
  });

  it('clears a backlog larger than one default chunk (500 tasks)', { timeout: 120_000 }, async () => {
    const p = await project(1);
    const rows = Array.from({ length: 1_203 }, () => specRow(p, { end: ago(3) }));
    for (let i = 0; i < rows.length; i += 100)
      await db()
        .insertInto('task')
        .values(rows.slice(i, i + 100))
        .execute();
    const ids = await taskIds();
    await insertOutput(
      db(),
      dialect.name,
      ids.flatMap((id) => [0, 1, 2].map((n) => ({ task_id: id, time: ago(3), output: `out ${n}` }))),
    );
    const recent = await task(p, { end: ago(0.5) });
    const recorder = deleteRecorder();

    const started = performance.now();
    const result = await job(0, {}, db().withPlugin(recorder.plugin)).run();
    const ms = performance.now() - started;

    expect(result).toEqual({ projects: 1, tasks: 1_203, output: 3_609 });
    expect(await taskIds()).toEqual([recent]);
    expect(await allOutput()).toBe(2);
    const taskDeletes = recorder.deletes.filter((d) => d.table === 'task').map((d) => d.rows);
    expect(taskDeletes).toEqual([500, 500, 203]);
    console.info(`[retention ${dialect.name}] 1203 tasks / 3609 lines deleted in ${ms.toFixed(0)} ms`);
  });

  it('runs shortly after start, then every interval; close() stops it and cuts a run short', async () => {
    const p = await project(0);
    const r = job(3, { firstDelay: 60_000, interval: 3_600_000 });
    const first = await task(p, { end: ago(4) });
    r.start();
    expect(clock.pending).toBe(1);
    clock.advance(59_999);
    expect(await taskIds()).toEqual([first]);
    clock.advance(1);
    await r.run(); // the run the timer started
    expect(await taskIds()).toEqual([]);
    await waitFor(async () => clock.pending === 1, 5_000, 'the next run to be armed');

    // Old by now + 1 h, not yet at the first run's time.
    const second = await task(p, { end: ago(3, new Date(NOW.getTime() + 3_000_000)) });
    clock.advance(3_600_000 - 1);
    expect(await taskIds()).toEqual([second]);
    clock.advance(1);
    await r.run();
    expect(await taskIds()).toEqual([]);
    await waitFor(async () => clock.pending === 1, 5_000, 'the next run to be armed');

    await r.close();
    expect(clock.pending).toBe(0);
    const third = await task(p, { end: ago(400) });
    clock.advance(10 * 3_600_000);
    expect(await taskIds()).toEqual([third]);

    // close() during a run: the run stops between transactions and close() waits for it.
    for (let i = 0; i < 4; i++) await task(p, { end: ago(400) });
    const cut = job(3, { taskChunk: 1 });
    const running = cut.run();
    await cut.close();
    const left = await taskIds();
    expect(left.length).toBeGreaterThan(0);
    await running;
    expect(await taskIds()).toEqual(left);
  });

  it('the app starts the job when ready and stops it on close', { timeout: 60_000 }, async () => {
    const own = await freshDb(dialect);
    const lines: string[] = [];
    try {
      const appConfig = loadConfig(
        {},
        { dataDir: own.dataDir, dbUrl: own.url, logLevel: 'info', taskRetentionDays: 2 },
      );
      const { app } = await buildApp(appConfig, {
        db: own.handle,
        logger: { level: 'info', stream: { write: (line: string) => void lines.push(line) } },
        retention: { firstDelay: 50, interval: 100 },
      });
      const pid = await insertReturningId(own.handle.db, dialect.name, 'project', {
        created: ago(0),
        name: 'App',
        alert: 0,
        alert_chat: null,
        max_parallel_tasks: 0,
        type: '',
      });
      const row = {
        ...specRow({ id: pid, templateId: 1 }, { end: new Date(Date.now() - 3 * DAY).toISOString() }),
      };
      await insertReturningId(own.handle.db, dialect.name, 'task', row);
      const freshId = await insertReturningId(own.handle.db, dialect.name, 'task', {
        ...row,
        end: new Date(Date.now() - DAY).toISOString(),
      });
      await app.ready();
      // The log line comes after the last delete of the run.
      const logged = await waitFor(
        async () => {
          const found = lines
            .map((l) => JSON.parse(l) as { msg: string; tasks?: number })
            .filter((l) => l.msg.startsWith('retention:'));
          return found.length ? found : undefined;
        },
        20_000,
        'the retention run to log',
      );
      expect(logged).toEqual([
        expect.objectContaining({
          msg: 'retention: deleted 1 finished tasks with 0 output lines in 1 projects',
          tasks: 1,
        }),
      ]);
      const remaining = await own.handle.db.selectFrom('task').select('id').execute();
      expect(remaining.map((r) => r.id)).toEqual([freshId]);
      await app.close();
      // Closed: an old task added now stays, though the interval has passed several times. The time is what is
      // tested (no run within five intervals); a slower machine only gives a leftover timer fewer chances, and the
      // assertion is that the task is still there, so it cannot fail for being slow.
      const late = await insertReturningId(own.handle.db, dialect.name, 'task', row);
      await new Promise((r) => setTimeout(r, 500));
      expect((await own.handle.db.selectFrom('task').select('id').execute()).map((r) => r.id)).toEqual([
        freshId,
        late,
      ]);
    } finally {
      await own.close();
    }
  });

  it('a database that already ran a later migration still gets 0003', async () => {
    const own = await freshDb(dialect);
    try {
      await retentionMigration(dialect.name).down(own.handle.db as never);
      await sql`delete from ${sql.table('migrations')} where ${sql.ref('name')} = ${'0003-retention'}`.execute(
        own.handle.db,
      );
      expect(await migrate(own.handle)).toEqual(['0003-retention']);
      const p = await own.handle.db
        .insertInto('project')
        .values({ created: ago(0), name: 'X', alert: 0, alert_chat: null, max_parallel_tasks: 0, type: '' })
        .executeTakeFirst();
      expect(p).toBeDefined();
      const row = await own.handle.db
        .selectFrom('project')
        .select('task_retention_days')
        .executeTakeFirstOrThrow();
      expect(row.task_retention_days).toBe(0);
    } finally {
      await own.close();
    }
  });
});
