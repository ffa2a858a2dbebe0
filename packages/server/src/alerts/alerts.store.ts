import type { Db } from '../db';

/** What an alert about one task needs: the task, its template and project, and who started it. */
export async function taskAlertContext(db: Db, taskId: number) {
  return db
    .selectFrom('task')
    .innerJoin('template', 'template.id', 'task.template_id')
    .innerJoin('project', 'project.id', 'task.project_id')
    .leftJoin('user', 'user.id', 'task.user_id')
    .select([
      'task.id as task_id',
      'task.project_id',
      'task.template_id',
      'task.version',
      'task.message',
      'task.schedule_id',
      'task.integration_id',
      'template.name as template_name',
      'template.suppress_success_alerts',
      'project.name as project_name',
      'project.alert',
      'project.alert_chat',
      'user.name as user_name',
      'user.username as user_username',
    ])
    .where('task.id', '=', taskId)
    .executeTakeFirst();
}

/** The status of the template's last finished run before `taskId` (undefined when there is none). */
export async function previousFinishedStatus(db: Db, templateId: number, taskId: number) {
  const row = await db
    .selectFrom('task')
    .select('status')
    .where('template_id', '=', templateId)
    .where('id', '<', taskId)
    .where('status', 'in', ['success', 'error', 'stopped'])
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.status;
}

/** Members of the project (admins included when they are members) whose user `alert` flag is on. */
export async function alertRecipients(db: Db, projectId: number) {
  return db
    .selectFrom('project_user')
    .innerJoin('user', 'user.id', 'project_user.user_id')
    .select(['user.email', 'user.name'])
    .where('project_user.project_id', '=', projectId)
    .where('user.alert', '=', 1)
    .where('user.email', '!=', '')
    .orderBy('user.id')
    .execute();
}
