import { finishedStatuses, type TemplateLastTask } from '@signalbox/contracts';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db, Dialect } from '../../db';
import type { TemplateTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';
import { type TaskViewRow, taskFieldsWith, taskViewColumns } from '../../tasks/task-view';
import { deleteTerraformRowsOfTemplates } from '../../tasks/terraform-plans.store';

export type TemplateRow = Selectable<TemplateTable>;

export function findTemplateRow(db: Db, projectId: number, id: number) {
  return db
    .selectFrom('template')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function listTemplateRows(db: Db, projectId: number, viewId?: number) {
  let q = db.selectFrom('template').selectAll().where('project_id', '=', projectId);
  if (viewId !== undefined) q = q.where('view_id', '=', viewId);
  return q.orderBy('name').orderBy('id').execute();
}

export function insertTemplate(db: Db, dialect: Dialect, values: Insertable<TemplateTable>) {
  return insertReturningId(db, dialect, 'template', values);
}

export async function updateTemplate(db: Db, id: number, values: Updateable<TemplateTable>) {
  await db.updateTable('template').set(values).where('id', '=', id).execute();
}

/** Deletes a template with its schedules, its tasks and their output; run it in a transaction (`trx`). */
export async function deleteTemplateCascade(trx: Db, projectId: number, id: number) {
  const tasks = trx.selectFrom('task').select('id').where('template_id', '=', id);
  // Deploy tasks of other templates may point at a build of this one; they keep their own version.
  const taskIds = (await tasks.execute()).map((t) => t.id);
  if (taskIds.length > 0) {
    await trx
      .updateTable('task')
      .set({ build_task_id: null })
      .where('build_task_id', 'in', taskIds)
      .where('template_id', '!=', id)
      .execute();
  }
  await trx.deleteFrom('task_output').where('task_id', 'in', tasks).execute();
  await trx.deleteFrom('task_plan').where('task_id', 'in', tasks).execute();
  await deleteTerraformRowsOfTemplates(trx, [id]);
  await trx.deleteFrom('task').where('template_id', '=', id).execute();
  await trx.deleteFrom('schedule').where('template_id', '=', id).execute();
  await trx.deleteFrom('template').where('project_id', '=', projectId).where('id', '=', id).execute();
}

/** Tasks of the template that have not finished yet. */
export async function unfinishedTaskIds(db: Db, templateId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('task')
    .select('id')
    .where('template_id', '=', templateId)
    .where('status', 'not in', [...finishedStatuses])
    .execute();
  return rows.map((r) => r.id);
}

/** Type and project of the referenced inventory, to check it suits the template's app. */
export function inventoryTypeOf(db: Db, projectId: number, id: number) {
  return db
    .selectFrom('inventory')
    .select('type')
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A task row as the views read it, with its template's and starter's names. */
type TaskWithNames = TaskViewRow & {
  user_name: string | null;
  tpl_alias: string;
  tpl_type: string;
  tpl_app: string;
};

function toLastTask(row: TaskWithNames): TemplateLastTask {
  return taskFieldsWith(row, {
    user_name: row.user_name,
    tpl_alias: row.tpl_alias,
    tpl_type: row.tpl_type,
    tpl_app: row.tpl_app,
  });
}

/**
 * The newest task of each given template (the columns its view shows): the task the template row names
 * (`last_task_id`, kept by the database as tasks come and go), one primary-key read each.
 */
export async function lastTasks(db: Db, projectId: number, templateIds: number[]) {
  const result = new Map<number, TemplateLastTask>();
  if (templateIds.length === 0) return result;
  const rows = await db
    .selectFrom('template')
    .innerJoin('task', 'task.id', 'template.last_task_id')
    .leftJoin('user', 'user.id', 'task.user_id')
    .select(taskViewColumns.map((column) => `task.${column}` as const))
    .select([
      'user.name as user_name',
      'template.name as tpl_alias',
      'template.type as tpl_type',
      'template.app as tpl_app',
    ])
    .where('template.project_id', '=', projectId)
    .where('template.id', 'in', templateIds)
    .where('task.project_id', '=', projectId)
    .execute();
  for (const row of rows) result.set(row.template_id, toLastTask(row));
  return result;
}

/** Names of the project's inventories, environments or repositories by id (for sorting template lists). */
export async function namesById(
  db: Db,
  projectId: number,
  table: 'inventory' | 'environment' | 'repository',
) {
  const rows = await db
    .selectFrom(table)
    .select(['id', 'name'])
    .where('project_id', '=', projectId)
    .execute();
  return new Map(rows.map((r) => [r.id, r.name] as const));
}
