import { recordEvent } from '../audit/audit.store';
import type { Db } from '../db';
import { now, toCount } from '../db/values';
import { randomToken, safeEqual, sha256 } from '../lib/crypto';
import { activeStatuses } from './store';

/**
 * The credentials a Terraform/OpenTofu/Terragrunt task uses against the built-in state backend (HTTP basic:
 * TF_HTTP_USERNAME `task-<id>`, TF_HTTP_PASSWORD a random secret). Only the secret's SHA-256 is stored, and a
 * credential is good only while its task runs (starting … stopping) and only for its task's project: the task's
 * end, or any other project in the path, ends what it can reach.
 */
const TASK_USER = /^task-([1-9]\d{0,9})$/;

export type TaskPrincipal = { taskId: number; projectId: number; userId: number | null };

/** Makes the credentials of a task's run (a new secret each time its details are loaded). */
export async function issueTaskCredential(db: Db, task: { id: number; project_id: number }) {
  const password = randomToken(32);
  await db.deleteFrom('task_state_credential').where('task_id', '=', task.id).execute();
  await db
    .insertInto('task_state_credential')
    .values({ task_id: task.id, project_id: task.project_id, secret_hash: sha256(password), created: now() })
    .execute();
  return { username: `task-${task.id}`, password };
}

/** Whether a basic-auth user name is a task's (then only task credentials are tried for it). */
export const isTaskUser = (username: string) => TASK_USER.test(username);

/** The running task these credentials belong to, or null (unknown, wrong secret, task ended). */
export async function taskOfCredential(
  db: Db,
  username: string,
  password: string,
): Promise<TaskPrincipal | null> {
  const match = TASK_USER.exec(username);
  if (!match || password.length > 200) return null;
  const taskId = Number(match[1]);
  if (taskId > 2_147_483_647) return null;
  const row = await db
    .selectFrom('task_state_credential as c')
    .innerJoin('task as t', 't.id', 'c.task_id')
    .select(['c.secret_hash', 'c.project_id', 't.project_id as task_project_id', 't.status', 't.user_id'])
    .where('c.task_id', '=', taskId)
    .executeTakeFirst();
  if (!row || !safeEqual(row.secret_hash, sha256(password))) return null;
  if (row.project_id !== row.task_project_id || !activeStatuses.includes(row.status)) return null;
  return { taskId, projectId: row.project_id, userId: row.user_id };
}

/** Forgets a task's credentials (its run ended). */
export async function dropTaskCredential(db: Db, taskId: number) {
  await db.deleteFrom('task_state_credential').where('task_id', '=', taskId).execute();
}

/**
 * Releases the state locks a task's run still holds once the task has ended: a run that was stopped, killed or
 * lost with its server never said UNLOCK, and its credentials no longer reach the backend, so nothing of it can.
 * Each release is an audit event naming the state, the lock and the task. A lock taken by another holder since is
 * left alone (the update names the lock it read).
 */
export async function releaseStateLocksOf(db: Db, taskId: number) {
  const held = await db
    .selectFrom('terraform_state')
    .select(['id', 'project_id', 'name', 'lock_id'])
    .where('locked_by_task_id', '=', taskId)
    .execute();
  for (const state of held) {
    if (state.lock_id === null) continue;
    const res = await db
      .updateTable('terraform_state')
      .set({
        lock_id: null,
        lock_info: null,
        locked_at: null,
        locked_by_user_id: null,
        locked_by_task_id: null,
      })
      .where('id', '=', state.id)
      .where('lock_id', '=', state.lock_id)
      .where('locked_by_task_id', '=', taskId)
      .executeTakeFirst();
    if (toCount(res.numUpdatedRows) !== 1) continue;
    await recordEvent(db, {
      project_id: state.project_id,
      user_id: null,
      object_type: 'terraform_state',
      object_id: state.id,
      description: `Terraform state ${state.name} unlocked: task ${taskId}, which held its lock ${state.lock_id}, has ended`,
      kind: 'terraform_state.lock_released',
      params: { name: state.name, lock: state.lock_id, task_id: taskId },
    });
  }
}
