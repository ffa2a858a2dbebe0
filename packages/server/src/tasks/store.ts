import SQLite from 'better-sqlite3';
import { CompiledQuery, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db, Dialect } from '../db';
import type {
  AccessKeyTable,
  EnvironmentTable,
  InventoryTable,
  ProjectTable,
  RepositoryTable,
  TaskTable,
  TemplateTable,
} from '../db/tables';
import { insertReturningId, toCount } from '../db/values';

/** Every SQL statement of the task engine lives here (only *.store.ts files touch Kysely). */

export type TaskRow = Selectable<TaskTable>;
export type TemplateRow = Selectable<TemplateTable>;
export type ProjectRow = Selectable<ProjectTable>;
export type InventoryRow = Selectable<InventoryTable>;
export type RepositoryRow = Selectable<RepositoryTable>;
export type EnvironmentRow = Selectable<EnvironmentTable>;
export type KeyRow = Selectable<AccessKeyTable>;

/** Statuses that hold a slot in the pool. */
export const activeStatuses = ['starting', 'running', 'waiting_confirmation', 'confirmed', 'stopping'];

export const insertTask = (db: Db, dialect: Dialect, row: Insertable<TaskTable>) =>
  insertReturningId(db, dialect, 'task', row);

export const findTask = (db: Db, id: number) =>
  db.selectFrom('task').selectAll().where('id', '=', id).executeTakeFirst();

export const findProjectTask = (db: Db, projectId: number, id: number) =>
  db
    .selectFrom('task')
    .selectAll()
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();

export async function updateTask(db: Db, id: number, fields: Updateable<TaskTable>) {
  await db.updateTable('task').set(fields).where('id', '=', id).execute();
}

/** Moves a task from one status to another only if it still has the expected one (a claim). */
export async function casStatus(db: Db, id: number, from: string[], fields: Updateable<TaskTable>) {
  const res = await db
    .updateTable('task')
    .set(fields)
    .where('id', '=', id)
    .where('status', 'in', from)
    .executeTakeFirst();
  return toCount(res.numUpdatedRows) === 1;
}

export const waitingTasks = (db: Db, limit = 1000) =>
  db
    .selectFrom('task')
    .select(['id', 'project_id', 'template_id'])
    .where('status', '=', 'waiting')
    .orderBy('id')
    .limit(limit)
    .execute();

export const activeTasks = (db: Db) =>
  db
    .selectFrom('task')
    .select(['id', 'project_id', 'template_id', 'status', 'runner'])
    .where('status', 'in', activeStatuses)
    .execute();

export const findTemplate = (db: Db, id: number) =>
  db.selectFrom('template').selectAll().where('id', '=', id).executeTakeFirst();

export const findTemplates = (db: Db, ids: number[]) =>
  ids.length
    ? db
        .selectFrom('template')
        .select(['id', 'allow_parallel_tasks', 'name'])
        .where('id', 'in', ids)
        .execute()
    : Promise.resolve([]);

export const findProjects = (db: Db, ids: number[]) =>
  ids.length
    ? db.selectFrom('project').select(['id', 'max_parallel_tasks']).where('id', 'in', ids).execute()
    : Promise.resolve([]);

export const findProject = (db: Db, id: number) =>
  db.selectFrom('project').selectAll().where('id', '=', id).executeTakeFirst();

export const findInventory = (db: Db, projectId: number, id: number) =>
  db
    .selectFrom('inventory')
    .selectAll()
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();

export const findRepository = (db: Db, projectId: number, id: number) =>
  db
    .selectFrom('repository')
    .selectAll()
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();

export const findEnvironment = (db: Db, projectId: number, id: number) =>
  db
    .selectFrom('environment')
    .selectAll()
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();

export const findKey = (db: Db, projectId: number, id: number) =>
  db
    .selectFrom('access_key')
    .selectAll()
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();

/** Secrets attached to an environment (owner 'variable' = extra var, 'environment' = process env). */
export const environmentSecrets = (db: Db, environmentId: number) =>
  db
    .selectFrom('access_key')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('owner', 'in', ['variable', 'environment'])
    .execute();

export const findUserName = (db: Db, id: number) =>
  db.selectFrom('user').select(['username', 'name']).where('id', '=', id).executeTakeFirst();

/** The version of the template's newest build task that has one. */
export async function lastBuildVersion(db: Db, templateId: number): Promise<string | null> {
  const row = await db
    .selectFrom('task')
    .select('version')
    .where('template_id', '=', templateId)
    .where('version', 'is not', null)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.version ?? null;
}

/** Deploy templates that run when a build of `buildTemplateId` succeeds. */
export const autorunTemplates = (db: Db, projectId: number, buildTemplateId: number) =>
  db
    .selectFrom('template')
    .select(['id'])
    .where('project_id', '=', projectId)
    .where('build_template_id', '=', buildTemplateId)
    .where('autorun', '=', 1)
    .orderBy('id')
    .execute();

/** Tasks in a state only a live process can be in, with the instance that claimed each (reconciliation). */
export const runningTasks = (db: Db) =>
  db
    .selectFrom('task')
    .select(['id', 'project_id', 'status', 'runner'])
    .where('status', 'in', activeStatuses)
    .execute();

// ---------------------------------------------------------------------------------------------- instances

/** The process that holds an instance id: its host name and pid. */
export type RunnerOwner = { host: string; pid: number };

/** Records an instance's heartbeat and the process holding it (inserting its row on the first one). */
export async function beatRunner(db: Db, id: string, time: string, holder: RunnerOwner) {
  const values = { heartbeat: time, host: holder.host.slice(0, 255), pid: holder.pid };
  const res = await db.updateTable('task_runner').set(values).where('id', '=', id).executeTakeFirst();
  if (toCount(res.numUpdatedRows) > 0) return;
  try {
    await db
      .insertInto('task_runner')
      .values({ id, ...values })
      .execute();
  } catch {
    // Inserted meanwhile by a concurrent start of the same instance id: set it once more.
    await db.updateTable('task_runner').set(values).where('id', '=', id).execute();
  }
}

export function findRunner(db: Db, id: string) {
  return db
    .selectFrom('task_runner')
    .select(['heartbeat', 'host', 'pid'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function removeRunner(db: Db, id: string) {
  await db.deleteFrom('task_runner').where('id', '=', id).execute();
}

/** Instances whose last heartbeat is at or after `since`. */
export async function liveRunners(db: Db, since: string): Promise<Set<string>> {
  const rows = await db.selectFrom('task_runner').select('id').where('heartbeat', '>=', since).execute();
  return new Set(rows.map((r) => r.id));
}

export async function removeStaleRunners(db: Db, before: string) {
  await db.deleteFrom('task_runner').where('heartbeat', '<', before).execute();
}

/** Takes (or extends) the queue lease unless another instance holds an unexpired one. */
export async function takeQueueLease(db: Db, holder: string, time: string, expires: string) {
  const res = await db
    .updateTable('task_queue_lock')
    .set({ holder, expires })
    .where('id', '=', 1)
    .where((eb) => eb.or([eb('holder', 'is', null), eb('holder', '=', holder), eb('expires', '<', time)]))
    .executeTakeFirst();
  return toCount(res.numUpdatedRows) === 1;
}

export async function releaseQueueLease(db: Db, holder: string) {
  await db
    .updateTable('task_queue_lock')
    .set({ holder: null, expires: '' })
    .where('id', '=', 1)
    .where('holder', '=', holder)
    .execute();
}

/** Leaves a control request for the instance running the task; false when that instance no longer holds it. */
export async function requestControl(db: Db, id: number, runner: string, action: string) {
  const res = await db
    .updateTable('task')
    .set({ control: action })
    .where('id', '=', id)
    .where('runner', '=', runner)
    .where('status', 'in', activeStatuses)
    .executeTakeFirst();
  return toCount(res.numUpdatedRows) === 1;
}

/** Status and pending control request of the tasks this instance runs. */
export const controlsOf = (db: Db, ids: number[]) =>
  ids.length
    ? db.selectFrom('task').select(['id', 'status', 'control']).where('id', 'in', ids).execute()
    : Promise.resolve([]);

/** Clears a control request if it is still the one read (a newer request stays for the next look). */
export async function takeControl(db: Db, id: number, action: string) {
  const res = await db
    .updateTable('task')
    .set({ control: null })
    .where('id', '=', id)
    .where('control', '=', action)
    .executeTakeFirst();
  return toCount(res.numUpdatedRows) === 1;
}

export const unfinishedOfTemplate = (db: Db, projectId: number, templateId: number) =>
  db
    .selectFrom('task')
    .select(['id'])
    .where('project_id', '=', projectId)
    .where('template_id', '=', templateId)
    .where('status', 'not in', ['success', 'error', 'stopped'])
    .execute();

// ---------------------------------------------------------------------------------------------- listing

export type TaskListRow = TaskRow & {
  tpl_alias: string | null;
  tpl_type: string | null;
  tpl_app: string | null;
  user_name: string | null;
};

function listQuery(db: Db) {
  return db
    .selectFrom('task')
    .leftJoin('template', 'template.id', 'task.template_id')
    .leftJoin('user', 'user.id', 'task.user_id')
    .selectAll('task')
    .select([
      'template.name as tpl_alias',
      'template.type as tpl_type',
      'template.app as tpl_app',
      'user.name as user_name',
    ])
    .orderBy('task.id', 'desc');
}

export function listTasks(
  db: Db,
  projectId: number,
  opts: { templateId?: number; status?: string; limit: number; offset?: number },
): Promise<TaskListRow[]> {
  let q = listQuery(db).where('task.project_id', '=', projectId);
  if (opts.templateId) q = q.where('task.template_id', '=', opts.templateId);
  if (opts.status) q = q.where('task.status', '=', opts.status);
  return q
    .limit(opts.limit)
    .offset(opts.offset ?? 0)
    .execute() as Promise<TaskListRow[]>;
}

/** One task of a project with its template's name/type/app and the starter's name (as the list has them). */
export const findListedTask = (db: Db, projectId: number, id: number) =>
  listQuery(db)
    .where('task.project_id', '=', projectId)
    .where('task.id', '=', id)
    .executeTakeFirst() as Promise<TaskListRow | undefined>;

export const findTasksByIds = (db: Db, ids: number[]) =>
  ids.length ? db.selectFrom('task').selectAll().where('id', 'in', ids).execute() : Promise.resolve([]);

export async function deleteTaskAndOutput(db: Db, id: number) {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('task_output').where('task_id', '=', id).execute();
    await trx.updateTable('task').set({ build_task_id: null }).where('build_task_id', '=', id).execute();
    await trx.deleteFrom('task').where('id', '=', id).execute();
  });
}

/** Keeps the newest `keep` tasks of a template (with a 10% dead zone, as the peer does). */
export async function pruneTemplateTasks(db: Db, templateId: number, keep: number) {
  if (keep <= 0) return;
  const count = toCount(
    (
      await db
        .selectFrom('task')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('template_id', '=', templateId)
        .executeTakeFirst()
    )?.n,
  );
  if (count < keep + Math.floor(keep / 10)) return;
  const old = await db
    .selectFrom('task')
    .select('id')
    .where('template_id', '=', templateId)
    .where('status', 'in', ['success', 'error', 'stopped'])
    .orderBy('id', 'desc')
    .offset(keep)
    .limit(100_000)
    .execute();
  for (const { id } of old) await deleteTaskAndOutput(db, id);
}

// ---------------------------------------------------------------------------------------------- output

export type OutputRow = { task_id: number; time: string; output: string };

const ROWS_PER_STATEMENT = 500;
const statementCache = new Map<string, string>();

function insertSql(dialect: Dialect, rows: number): string {
  const key = `${dialect}:${rows}`;
  let text = statementCache.get(key);
  if (text) return text;
  const q = dialect === 'mysql' ? '`' : '"';
  const values: string[] = [];
  for (let i = 0; i < rows; i++) {
    values.push(dialect === 'postgres' ? `($${i * 3 + 1}, $${i * 3 + 2}, $${i * 3 + 3})` : '(?, ?, ?)');
  }
  text = `insert into ${q}task_output${q} (${q}task_id${q}, ${q}time${q}, ${q}output${q}) values ${values.join(', ')}`;
  statementCache.set(key, text);
  return text;
}

type SqliteWriter = { conn: SQLite.Database; write: (rows: OutputRow[]) => void };
const sqliteWriters = new Map<string, SqliteWriter>();

/** Rows per prepared multi-row insert on SQLite (measured: twice the rows/s of single-row inserts). */
const SQLITE_ROWS = 50;

/**
 * SQLite: a dedicated connection to the same file with prepared inserts run inside one transaction per batch
 * (WAL and busy_timeout serialise it with the main connection): 50 rows per statement, the rest one by one.
 */
function sqliteWriter(dbUrl: string): SqliteWriter | null {
  const path = dbUrl.slice('sqlite://'.length);
  if (!path || path === ':memory:') return null;
  let writer = sqliteWriters.get(path);
  if (!writer) {
    const conn = new SQLite(path);
    conn.pragma('busy_timeout = 5000');
    conn.pragma('synchronous = NORMAL');
    const insert = 'insert into "task_output" ("task_id", "time", "output") values ';
    const one = conn.prepare(`${insert}(?, ?, ?)`);
    const many = conn.prepare(insert + Array(SQLITE_ROWS).fill('(?, ?, ?)').join(', '));
    const params: unknown[] = new Array(SQLITE_ROWS * 3);
    const write = conn.transaction((rows: OutputRow[]) => {
      let i = 0;
      for (; i + SQLITE_ROWS <= rows.length; i += SQLITE_ROWS) {
        for (const [j, r] of rows.slice(i, i + SQLITE_ROWS).entries()) {
          params[j * 3] = r.task_id;
          params[j * 3 + 1] = r.time;
          params[j * 3 + 2] = r.output;
        }
        many.run(params);
      }
      for (const r of rows.slice(i)) one.run(r.task_id, r.time, r.output);
    });
    writer = { conn, write };
    sqliteWriters.set(path, writer);
  }
  return writer;
}

export function closeOutputWriter(dbUrl: string) {
  const path = dbUrl.slice('sqlite://'.length);
  const writer = sqliteWriters.get(path);
  if (writer) {
    sqliteWriters.delete(path);
    writer.conn.close();
  }
}

/**
 * Stores a batch of lines in one transaction: on SQLite through the prepared-statement writer, elsewhere with
 * multi-row inserts of prebuilt SQL (no per-row query compilation).
 */
export async function insertOutput(db: Db, dialect: Dialect, rows: OutputRow[], dbUrl?: string) {
  if (!rows.length) return;
  if (dialect === 'sqlite' && dbUrl) {
    const writer = sqliteWriter(dbUrl);
    if (writer) {
      writer.write(rows);
      return;
    }
  }
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      const chunk = rows.slice(i, i + ROWS_PER_STATEMENT);
      const params: unknown[] = new Array(chunk.length * 3);
      for (const [j, r] of chunk.entries()) {
        params[j * 3] = r.task_id;
        params[j * 3 + 1] = r.time;
        params[j * 3 + 2] = r.output;
      }
      await trx.executeQuery(CompiledQuery.raw(insertSql(dialect, chunk.length), params));
    }
  });
}

/** A stored output line as the API returns it. */
export type OutputLine = { id: number; task_id: number; time: string; output: string };

/**
 * Up to `limit` lines of a task with an id above `afterId`, oldest first: keyset paging on the (task_id, id)
 * index, so a page deep in a log costs what the first one does. Ids are numbers on every database (PostgreSQL
 * returns bigserial values as strings).
 */
export async function outputAfter(
  db: Db,
  taskId: number,
  afterId: number,
  limit: number,
): Promise<OutputLine[]> {
  const rows = await db
    .selectFrom('task_output')
    .select(['id', 'task_id', 'time', 'output'])
    .where('task_id', '=', taskId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
  for (const row of rows) row.id = Number(row.id);
  return rows;
}

/**
 * The id of the `n`-th line (n ≥ 1) of a task after the line `afterId`, or undefined when there are fewer:
 * reads the (task_id, id) index only, never the lines.
 */
export async function outputIdAfter(db: Db, taskId: number, afterId: number, n: number) {
  const row = await db
    .selectFrom('task_output')
    .select('id')
    .where('task_id', '=', taskId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(1)
    .offset(n - 1)
    .executeTakeFirst();
  return row ? Number(row.id) : undefined;
}

// ---------------------------------------------------------------------------------------------- sockets

/** Project ids the user belongs to. */
export async function memberProjects(db: Db, userId: number): Promise<Set<number>> {
  const rows = await db
    .selectFrom('project_user')
    .select('project_id')
    .where('user_id', '=', userId)
    .execute();
  return new Set(rows.map((r) => r.project_id));
}

export const findUserAdmin = (db: Db, userId: number) =>
  db.selectFrom('user').select(['admin']).where('id', '=', userId).executeTakeFirst();

// ---------------------------------------------------------------------------------------------- integrations

/** Waiting tasks an integration started for a template, oldest first (the webhook receiver's debounce). */
export const waitingIntegrationTasks = (db: Db, templateId: number, integrationId: number, limit = 100) =>
  db
    .selectFrom('task')
    .select(['id', 'environment', 'params'])
    .where('template_id', '=', templateId)
    .where('integration_id', '=', integrationId)
    .where('status', '=', 'waiting')
    .orderBy('id')
    .limit(limit)
    .execute();
