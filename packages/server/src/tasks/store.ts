import type { PlanSummary } from '@signalbox/contracts';
import {
  type Insertable,
  type Selectable,
  type SelectQueryBuilder,
  sql,
  type Updateable,
  type UpdateObject,
} from 'kysely';
import type { Database, Db, Dialect } from '../db';
import { compiledOnce, rowById, rowInProject, rowsOnce } from '../db/compiled-once';
import { jsonRowsQuery, jsonRowsText } from '../db/json-rows';
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
import { type TaskViewRow, taskViewColumns } from './task-view';

/**
 * SQL on the task table and the rows a task run reads (template, project, resources). The instances' rows are in
 * instances.store.ts, the output lines in output.store.ts.
 */

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

export const findTask = (db: Db, id: number) => rowById(db, 'task', id);

export const findProjectTask = (db: Db, projectId: number, id: number) =>
  rowInProject(db, 'task', projectId, id);

/** A project's task as far as reading its log needs: whether it is finished, and since when. */
export const findTaskLogState = (db: Db, projectId: number, id: number) =>
  db
    .selectFrom('task')
    .select(['id', 'status', 'end'])
    .where('id', '=', id)
    .where('project_id', '=', projectId)
    .executeTakeFirst();

export async function updateTask(db: Db, id: number, fields: Updateable<TaskTable>) {
  await db.updateTable('task').set(fields).where('id', '=', id).execute();
}

/** Moves a task from one status to another only if it still has the expected one (a claim). */
export async function casStatus(
  db: Db,
  id: number,
  from: string[],
  fields: UpdateObject<Database, 'task'>,
  runner?: string | null,
) {
  let q = db.updateTable('task').set(fields).where('id', '=', id).where('status', 'in', from);
  if (runner !== undefined)
    q = runner === null ? q.where('runner', 'is', null) : q.where('runner', '=', runner);
  const res = await q.executeTakeFirst();
  return toCount(res.numUpdatedRows) === 1;
}

export const waitingTasks = (db: Db, limit = 1000) =>
  rowsOnce(db, `waiting tasks limit ${limit}`, ['waiting'], () =>
    db
      .selectFrom('task')
      .select(['id', 'project_id', 'template_id', 'inventory_id'])
      .where('status', '=', 'waiting')
      .orderBy('id')
      .limit(pageLimit(limit)),
  );

/** How many tasks wait in the queue (the metrics gauge; the status column is indexed). */
export const countWaitingTasks = async (db: Db) =>
  Number(
    (
      await db
        .selectFrom('task')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('status', '=', 'waiting')
        .executeTakeFirst()
    )?.n ?? 0,
  );

export const activeTasks = (db: Db) =>
  rowsOnce(db, 'active tasks', activeStatuses, () =>
    db
      .selectFrom('task')
      .select(['id', 'project_id', 'template_id', 'status', 'runner', 'remote_runner_id'])
      .where('status', 'in', activeStatuses),
  );

export const findTemplate = (db: Db, id: number) => rowById(db, 'template', id);

/** The key of a read by a list of ids: one shape per count up to a few (a queue pass mostly names one or two). */
const idsShape = (name: string, ids: readonly number[]) => (ids.length <= 4 ? `${name} ${ids.length}` : null);

export const findTemplates = (db: Db, ids: number[]) => {
  if (!ids.length) return Promise.resolve([]);
  const build = () =>
    db.selectFrom('template').select(['id', 'allow_parallel_tasks', 'name']).where('id', 'in', ids);
  const shape = idsShape('templates by ids', ids);
  return shape ? rowsOnce(db, shape, ids, build) : build().execute();
};

export const findProjects = (db: Db, ids: number[]) => {
  if (!ids.length) return Promise.resolve([]);
  const build = () => db.selectFrom('project').select(['id', 'max_parallel_tasks']).where('id', 'in', ids);
  const shape = idsShape('projects by ids', ids);
  return shape ? rowsOnce(db, shape, ids, build) : build().execute();
};

export const findProject = (db: Db, id: number) => rowById(db, 'project', id);

export const findInventory = (db: Db, projectId: number, id: number) =>
  rowInProject(db, 'inventory', projectId, id);

export const findRepository = (db: Db, projectId: number, id: number) =>
  rowInProject(db, 'repository', projectId, id);

export const findEnvironment = (db: Db, projectId: number, id: number) =>
  rowInProject(db, 'environment', projectId, id);

export const findKey = (db: Db, projectId: number, id: number) =>
  rowInProject(db, 'access_key', projectId, id);

/** Secrets attached to an environment (owner 'variable' = extra var, 'environment' = process env). */
export const environmentSecrets = (db: Db, environmentId: number) =>
  rowsOnce(db, 'environment secrets', [environmentId, 'variable', 'environment'], () =>
    db
      .selectFrom('access_key')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('owner', 'in', ['variable', 'environment']),
  );

export const findUserName = async (db: Db, id: number) =>
  (
    await rowsOnce(db, 'user name by id', [id], () =>
      db.selectFrom('user').select(['username', 'name']).where('id', '=', id),
    )
  )[0];

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
    .select(['id', 'project_id', 'status', 'runner', 'remote_runner_id'])
    .where('status', 'in', activeStatuses)
    .execute();

/** Secret survey values are kept only while a task runs: removes any a finished task still holds. */
export async function clearFinishedSecrets(db: Db) {
  await db
    .updateTable('task')
    .set({ secret: null })
    .where('status', 'in', ['success', 'error', 'stopped'])
    .where('secret', 'is not', null)
    .execute();
}

// ---------------------------------------------------------------------------------------------- controls

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

export type TaskListRow = TaskViewRow & {
  tpl_alias: string | null;
  tpl_type: string | null;
  tpl_app: string | null;
  user_name: string | null;
  /** The name of the remote runner it was given to (null: none, or deleted). */
  runner_name: string | null;
};

/** The list's columns of the tasks `from` yields: each task with its template's name/type/app, starter and runner. */
function withListColumns<Q extends ReturnType<typeof listFrom>>(q: Q) {
  return q
    .leftJoin('template', 'template.id', 'task.template_id')
    .leftJoin('user', 'user.id', 'task.user_id')
    .leftJoin('remote_runner', 'remote_runner.id', 'task.remote_runner_id')
    .select(taskViewColumns.map((column) => `task.${column}` as const))
    .select([
      'template.name as tpl_alias',
      'template.type as tpl_type',
      'template.app as tpl_app',
      'user.name as user_name',
      'remote_runner.name as runner_name',
    ])
    .orderBy('task.id', 'desc');
}
const listFrom = (db: Db) => db.selectFrom('task');
const listQuery = (db: Db) => withListColumns(listFrom(db));

/** What picks a page of a project's tasks, newest first. */
export type TaskPage = {
  templateId?: number;
  status?: string;
  limit: number;
  offset?: number;
  before?: number;
};

/** The conditions a page puts on the project's tasks besides the project, in the order its query applies them. */
function pageFilters(opts: TaskPage) {
  const filters: {
    column: 'task.template_id' | 'task.status' | 'task.id';
    op: '=' | '<';
    value: number | string;
  }[] = [];
  if (opts.templateId) filters.push({ column: 'task.template_id', op: '=', value: opts.templateId });
  if (opts.status) filters.push({ column: 'task.status', op: '=', value: opts.status });
  if (opts.before !== undefined) filters.push({ column: 'task.id', op: '<', value: opts.before });
  return filters;
}

/**
 * A page's size, written into its SQL rather than passed as a value: PostgreSQL plans a prepared statement's
 * `LIMIT $n` for a tenth of the table, and then keeps planning it anew for each request (the same cost as the read).
 */
function pageLimit(limit: number) {
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw new TypeError(`a page size is a whole number, not ${limit}`);
  return sql.lit(limit);
}

/**
 * Which tasks of the list a page reads, as the index walks them: `offset` tasks skipped, then `limit` tasks, from the
 * newest (`desc`) or from the oldest (`asc`).
 */
type PageWindow = { order: 'asc' | 'desc'; limit: number; offset: number };

/** Offsets from which a page asks how many tasks its list has: below, the walk from the newest is short anyway. */
const COUNTED_FROM_OFFSET = 1000;

/**
 * How many tasks a page's list has, when the database keeps the count: the project's (the sum of its templates'
 * counters, kept by the task triggers) or one template's. Undefined for a list filtered on status or cut at a task.
 */
async function listCount(db: Db, projectId: number, opts: TaskPage): Promise<number | undefined> {
  if (opts.status || opts.before !== undefined) return undefined;
  const build = () => {
    const q = db
      .selectFrom('template')
      .select(sql<unknown>`SUM(template.task_count)`.as('n'))
      .where('template.project_id', '=', projectId);
    return opts.templateId ? q.where('template.id', '=', opts.templateId) : q;
  };
  const shape = opts.templateId ? 'task list count of a template' : 'task list count';
  const parameters = opts.templateId ? [projectId, opts.templateId] : [projectId];
  const result = await db.executeQuery(compiledOnce(db, shape, parameters, build));
  return toCount((result.rows[0] as { n?: unknown } | undefined)?.n);
}

/**
 * The window of a page: an index walk skips every task before the page, so a page in the older half of a list
 * whose count the database keeps is read from the oldest end instead (the same tasks; the heads' reader puts them
 * newest first): the last page of 1,000,000 tasks skips none instead of 999,800. A page past the end reads nothing.
 * The count is read just before the page: a task started in between shifts the page as it would shift the next one.
 */
export async function taskPageWindow(db: Db, projectId: number, opts: TaskPage): Promise<PageWindow> {
  pageLimit(opts.limit); // a size that is not a whole number is refused whichever way the page is read
  const offset = opts.offset ?? 0;
  const asked: PageWindow = { order: 'desc', limit: opts.limit, offset };
  if (offset < COUNTED_FROM_OFFSET) return asked;
  const count = await listCount(db, projectId, opts);
  if (count === undefined || offset <= count / 2) return asked;
  // Newest first, the page holds the tasks at positions [offset, offset + limit); oldest first, at
  // [count - offset - limit, count - offset).
  const end = Math.max(0, count - offset);
  const start = Math.max(0, end - opts.limit);
  return { order: 'asc', limit: end - start, offset: start };
}

/**
 * The rows of a page of the project's tasks, as the table `task` (the columns its heads show). A page past an
 * offset is found on the task table alone first (an index walk, `window.offset` long) and joined back by id: joined
 * while walking, every skipped row would be joined too. A page with nothing to skip is the table's rows themselves
 * (joining them back by id cost PostgreSQL a fifth of the read).
 */
function taskPageRows(db: Db, projectId: number, opts: TaskPage, window: PageWindow) {
  const page = <O>(q: SelectQueryBuilder<Database, 'task', O>) => {
    let rows = q.where('task.project_id', '=', projectId);
    for (const f of pageFilters(opts)) rows = rows.where(f.column, f.op, f.value);
    return rows.orderBy('task.id', window.order).limit(pageLimit(window.limit));
  };
  if (!window.offset) {
    const columns = [
      'id',
      'rev',
      'status',
      'template_id',
      'user_id',
      'remote_runner_id',
      'build_task_id',
    ] as const;
    return db.selectFrom(page(db.selectFrom('task').select(columns)).as('task'));
  }
  const ids = page(db.selectFrom('task').select('task.id')).offset(window.offset).as('page');
  return db.selectFrom(ids).innerJoin('task', 'task.id', 'page.id');
}

/** The scope of `task_list_rev` that counts the renames and removals of users and remote runners. */
export const NAMES_SCOPE = 0;

/**
 * The revisions of what a page of the project's tasks may show besides the tasks' own heads: its tasks (added,
 * changed, removed), its templates, and the names of users and runners. Read as the same stamp, nothing a page of
 * the project shows has changed since.
 */
const stampColumns = (db: Db, projectId: number) =>
  [
    db
      .selectFrom('task_list_rev')
      .select('task_list_rev.rev')
      .where('task_list_rev.scope', '=', projectId)
      .as('tasks_rev'),
    db
      .selectFrom('task_list_rev as names')
      .select('names.rev')
      .where('names.scope', '=', sql.lit(NAMES_SCOPE))
      .as('names_rev'),
    db
      .selectFrom('project_template_rev')
      .select('project_template_rev.rev')
      .where('project_template_rev.project_id', '=', projectId)
      .as('templates_rev'),
  ] as const;

type StampRow = { tasks_rev?: unknown; names_rev?: unknown; templates_rev?: unknown } | undefined;
const stampText = (row: StampRow) =>
  `${row?.tasks_rev ?? ''}:${row?.names_rev ?? ''}:${row?.templates_rev ?? ''}`;

/** The stamp of the project's task lists now (see `stampColumns`): one read of three rows by their keys. */
export async function readTaskListStamp(db: Db, projectId: number): Promise<string> {
  const query = compiledOnce(db, 'task list stamp', [projectId, projectId], () =>
    db.selectNoFrom(stampColumns(db, projectId)),
  );
  return stampText((await db.executeQuery(query)).rows[0] as StampRow);
}

/**
 * A page of the project's tasks as a kept list checks it: each task's revision and status, and the revision or name
 * of everything else its view shows (its starter, runner and build task; for its template, the revision of all the
 * project's templates: one row rather than a lookup per task, the dearest part of the read on PostgreSQL), as the
 * JSON text the database built (`parseTaskHeads` reads it). Narrow: no task column a view shows is read. The same
 * heads give the same text. Read with it, in the same statement: the project's stamp (`readTaskListStamp`).
 */
export async function readTaskHeads(
  db: Db,
  projectId: number,
  opts: TaskPage,
): Promise<{ text: string; stamp: string }> {
  const columns = [
    'id',
    'rev',
    'status',
    'template_rev',
    'user_name',
    'runner_name',
    'build_rev',
    'build_status',
  ] as const;
  const window = await taskPageWindow(db, projectId, opts);
  const build = () =>
    jsonRowsQuery(
      db,
      taskPageRows(db, projectId, opts, window)
        .leftJoin(
          db
            .selectFrom('project_template_rev')
            .select('project_template_rev.rev')
            .where('project_template_rev.project_id', '=', projectId)
            .as('templates'),
          (join) => join.onTrue(),
        )
        .leftJoin('user', 'user.id', 'task.user_id')
        .leftJoin('remote_runner', 'remote_runner.id', 'task.remote_runner_id')
        .leftJoin('task as build', 'build.id', 'task.build_task_id')
        .select([
          'task.id',
          'task.rev',
          'task.status',
          'templates.rev as template_rev',
          'user.name as user_name',
          'remote_runner.name as runner_name',
          'build.rev as build_rev',
          'build.status as build_status',
        ]),
      columns,
    ).select(stampColumns(db, projectId));
  // Read on every list request that its project's stamp does not settle: its SQL is built once per shape (which
  // filters the page has), and run with the values of the page's query in their order (the stamp's come first).
  const filters = pageFilters(opts);
  const shape = `task heads ${filters.map((f) => f.column + f.op).join(' ')} ${window.order} limit ${window.limit}${window.offset ? ' offset' : ''}`;
  const parameters = [
    projectId,
    projectId,
    projectId,
    ...filters.map((f) => f.value),
    ...(window.offset ? [window.offset] : []),
    projectId,
  ];
  const result = await db.executeQuery(compiledOnce(db, shape, parameters, build));
  return { text: jsonRowsText(result.rows[0]), stamp: stampText(result.rows[0] as StampRow) };
}

/**
 * The heads of a page (`readTaskHeads`), newest first, as the database gave them (no object per task): the rows
 * of one JSON array, whose order it does not keep.
 */
export const parseTaskHeads = (text: string) => (JSON.parse(text) as TaskHead[]).sort((a, b) => b[0] - a[0]);

/**
 * A task of a page as `readTaskHeads` reads it: id, revision, status, the revision of its project's templates (null
 * until one changes), its starter's and runner's names, its build task's revision and status.
 */
export type TaskHead = readonly [
  id: number,
  rev: number,
  status: string,
  template_rev: number | null,
  user_name: string | null,
  runner_name: string | null,
  build_rev: number | null,
  build_status: string | null,
];

/** The project's tasks of these ids with the list's columns (newest first). */
export const listedTasksByIds = (db: Db, projectId: number, ids: number[]): Promise<TaskListRow[]> =>
  ids.length
    ? (listQuery(db)
        .where('task.project_id', '=', projectId)
        .where('task.id', 'in', ids)
        .execute() as Promise<TaskListRow[]>)
    : Promise.resolve([]);

/** One task of a project with its template's name/type/app and the starter's name (as the list has them). */
export async function findListedTask(db: Db, projectId: number, id: number) {
  const query = compiledOnce(db, 'listed task', [projectId, id], () =>
    listQuery(db).where('task.project_id', '=', projectId).where('task.id', '=', id),
  );
  return (await db.executeQuery(query)).rows[0] as TaskListRow | undefined;
}

/** Tasks by id, with the columns their views show (the builds a task list names). */
export const findTasksByIds = (db: Db, ids: number[]): Promise<TaskViewRow[]> =>
  ids.length
    ? db.selectFrom('task').select(taskViewColumns).where('id', 'in', ids).execute()
    : Promise.resolve([]);

export async function deleteTaskAndOutput(db: Db, id: number) {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('task_output').where('task_id', '=', id).execute();
    await trx.deleteFrom('task_plan').where('task_id', '=', id).execute();
    await trx.updateTable('task').set({ build_task_id: null }).where('build_task_id', '=', id).execute();
    await trx.deleteFrom('task').where('id', '=', id).execute();
  });
}

/** Keeps the newest `keep` tasks of a template (with a 10% dead zone, as the peer does). */
export async function pruneTemplateTasks(db: Db, templateId: number, keep: number) {
  if (keep <= 0) return;
  // The template row counts its tasks (kept by the database as tasks come and go).
  const count = toCount(
    (await db.selectFrom('template').select('task_count').where('id', '=', templateId).executeTakeFirst())
      ?.task_count,
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

/** The variables an integration extracts as environment variables (an empty variable type is that too). */
export async function integrationEnvNames(db: Db, integrationId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('integration_extract_value')
    .select(['variable', 'variable_type'])
    .where('integration_id', '=', integrationId)
    .execute();
  return rows.filter((r) => (r.variable_type || 'environment') === 'environment').map((r) => r.variable);
}

/** The plan summary of a project's task; undefined when the task has none (or is another project's). */
export async function findTaskPlan(
  db: Db,
  projectId: number,
  taskId: number,
): Promise<PlanSummary | undefined> {
  const row = await db
    .selectFrom('task_plan')
    .select('summary')
    .where('task_id', '=', taskId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return row ? (JSON.parse(row.summary) as PlanSummary) : undefined;
}

/** The tasks waiting for a person's approval in the given projects, oldest first (at most `limit`). */
export function tasksWaitingApproval(db: Db, projectIds: readonly number[], limit: number) {
  if (!projectIds.length) return Promise.resolve([] as TaskListRow[]);
  return listQuery(db)
    .where('task.project_id', 'in', [...projectIds])
    .where('task.status', '=', 'waiting_approval')
    .clearOrderBy()
    .orderBy('task.id')
    .limit(limit)
    .execute() as Promise<TaskListRow[]>;
}
