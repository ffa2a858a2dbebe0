import type { Project } from '@signalbox/contracts';
import type { ProjectRow } from '../../access/principals.store';
import type { Db } from '../../db';
import { toBool } from '../../db/values';
import { deleteTerraformRowsOfProject } from '../../tasks/terraform-plans.store';

export function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    created: row.created,
    name: row.name,
    alert: toBool(row.alert),
    alert_chat: row.alert_chat,
    max_parallel_tasks: row.max_parallel_tasks,
    type: row.type,
    task_retention_days: row.task_retention_days,
    agent_runs_need_approval: toBool(row.agent_runs_need_approval),
  };
}

export function findProject(db: Db, id: number) {
  return db.selectFrom('project').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Projects the user is a member of; admins see every project. */
export async function listProjects(db: Db, userId: number, isAdmin: boolean, only?: readonly number[]) {
  let q = db.selectFrom('project').selectAll('project').orderBy('project.name').orderBy('project.id');
  if (only) {
    if (only.length === 0) return [];
    q = q.where('project.id', 'in', [...only]);
  }
  if (!isAdmin) {
    q = q
      .innerJoin('project_user', 'project_user.project_id', 'project.id')
      .where('project_user.user_id', '=', userId);
  }
  return (await q.execute()).map(toProject);
}

/** Tables holding rows of one project, children before parents. */
const projectTables = [
  'terraform_state_version',
  'terraform_state',
  'task_state_credential',
  'schedule',
  'integration_alias',
  'integration',
  'template',
  'inventory',
  'repository',
  'environment',
  'access_key',
  'view',
  'option_list',
  'event',
  'project_user',
  'project_invite',
  'remote_runner',
  'runner_registration_token',
] as const;

/** Deletes a project and everything in it; `trx` is the caller's transaction (which records the event too). */
export async function deleteProjectCascade(trx: Db, projectId: number) {
  const integrations = trx.selectFrom('integration').select('id').where('project_id', '=', projectId);
  await trx.deleteFrom('integration_matcher').where('integration_id', 'in', integrations).execute();
  await trx.deleteFrom('integration_extract_value').where('integration_id', 'in', integrations).execute();
  await trx.deleteFrom('integration_delivery').where('integration_id', 'in', integrations).execute();
  const tasks = trx.selectFrom('task').select('id').where('project_id', '=', projectId);
  await trx.deleteFrom('task_output').where('task_id', 'in', tasks).execute();
  await trx.deleteFrom('task_plan').where('project_id', '=', projectId).execute();
  await deleteTerraformRowsOfProject(trx, projectId);
  await trx.deleteFrom('task').where('project_id', '=', projectId).execute();
  for (const table of projectTables) {
    await trx.deleteFrom(table).where('project_id', '=', projectId).execute();
  }
  await trx.deleteFrom('project').where('id', '=', projectId).execute();
}
