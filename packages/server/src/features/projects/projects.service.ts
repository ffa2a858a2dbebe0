import type { ProjectInput } from '@signalbox/contracts';
import { coded } from '@signalbox/contracts';
import type { UserRow } from '../../access/principals.store';
import { namedKind, recordEvent, recordNamedEvent } from '../../audit/audit.store';
import type { Db } from '../../db';
import type { Dialect } from '../../db/dialect';
import { transaction } from '../../db/transaction';
import { fromBool, insertReturningId, now } from '../../db/values';
import type { Deps } from '../../deps';
import { forbidden, found } from '../../lib/errors';
import { assertProjectNameFree } from '../../lib/unique-names';
import { forgetRepositoryFiles } from '../../tasks/run/repository-caches';
import { type DemoBuilder, removeDemoRepository } from './demo';
import { deleteProjectCascade, findProject, toProject } from './projects.store';

export function canCreateProject(deps: Pick<Deps, 'config'>, user: UserRow) {
  return user.admin === 1 || user.can_create_project === 1 || deps.config.nonAdminCanCreateProject;
}

/**
 * Creates a project owned by `ownerId` with the objects every project starts with: the `None` key and the
 * `Empty` environment. Runs inside the caller's transaction when given one.
 */
export async function insertProject(
  db: Db,
  dialect: Dialect,
  input: Pick<
    ProjectInput,
    'name' | 'alert' | 'alert_chat' | 'max_parallel_tasks' | 'type' | 'task_retention_days'
  > &
    Partial<Pick<ProjectInput, 'agent_runs_need_approval'>>,
  ownerId: number,
) {
  const projectId = await insertReturningId(db, dialect, 'project', {
    created: now(),
    name: input.name,
    alert: fromBool(input.alert),
    alert_chat: input.alert_chat ?? null,
    max_parallel_tasks: input.max_parallel_tasks ?? 0,
    type: input.type ?? '',
    task_retention_days: input.task_retention_days ?? 0,
    agent_runs_need_approval: fromBool(input.agent_runs_need_approval ?? true),
  });
  await db
    .insertInto('project_user')
    .values({ project_id: projectId, user_id: ownerId, role: 'owner', created: now() })
    .execute();
  const noneKeyId = await insertReturningId(db, dialect, 'access_key', {
    project_id: projectId,
    name: 'None',
    type: 'none',
    secret: null,
    owner: '',
    environment_id: null,
  });
  const emptyEnvironmentId = await insertReturningId(db, dialect, 'environment', {
    project_id: projectId,
    name: 'Empty',
    json: '{}',
    env: '{}',
  });
  return { projectId, noneKeyId, emptyEnvironmentId };
}

/**
 * Stores a project with its default rows (owner, None key, Empty environment), its demo content when asked, and
 * its event in one transaction: a failure on the way leaves no project behind (nor its copy of the demo
 * repository).
 */
export async function createProject(deps: Deps, user: UserRow, input: ProjectInput, demo?: DemoBuilder) {
  if (!canCreateProject(deps, user)) throw forbidden(coded('cannot_create_projects'));
  await assertProjectNameFree(deps.db, user.id, input.name);
  // The id of a project whose transaction began and did not commit (its demo repository is on disk).
  let uncommitted: number | undefined;
  try {
    const projectId = await transaction(deps.db, async (trx) => {
      const ids = await insertProject(trx, deps.dialect, input, user.id);
      uncommitted = ids.projectId;
      if (input.demo && demo) await demo(trx, deps, ids);
      await recordNamedEvent(trx, user, ids.projectId, {
        type: 'project',
        label: 'Project',
        id: ids.projectId,
        name: input.name,
        action: 'created',
      });
      return ids.projectId;
    });
    uncommitted = undefined;
    return toProject(found(await findProject(deps.db, projectId), 'project'));
  } catch (err) {
    if (uncommitted !== undefined && input.demo) removeDemoRepository(deps.config.dataDir, uncommitted);
    throw err;
  }
}

export async function updateProject(
  deps: Pick<Deps, 'db'>,
  user: UserRow,
  projectId: number,
  input: ProjectInput,
) {
  await assertProjectNameFree(deps.db, user.id, input.name, projectId);
  await transaction(deps.db, async (trx) => {
    await trx
      .updateTable('project')
      .set({
        name: input.name,
        alert: fromBool(input.alert),
        alert_chat: input.alert_chat ?? null,
        max_parallel_tasks: input.max_parallel_tasks ?? 0,
        // Absent (a client that predates the field): the project keeps its retention.
        ...(input.task_retention_days === undefined
          ? {}
          : { task_retention_days: input.task_retention_days }),
        ...(input.agent_runs_need_approval === undefined
          ? {}
          : { agent_runs_need_approval: fromBool(input.agent_runs_need_approval) }),
      })
      .where('id', '=', projectId)
      .execute();
    await recordNamedEvent(trx, user, projectId, {
      type: 'project',
      label: 'Project',
      id: projectId,
      name: input.name,
      action: 'updated',
    });
  });
}

export async function deleteProject(
  deps: Pick<Deps, 'config' | 'db' | 'log'>,
  user: UserRow,
  projectId: number,
  name: string,
) {
  await transaction(deps.db, async (trx) => {
    await deleteProjectCascade(trx, projectId);
    await recordEvent(trx, {
      project_id: null,
      user_id: user.id,
      object_type: 'project',
      object_id: projectId,
      description: `Project ${name} deleted`,
      ...namedKind('project', 'deleted', name),
    });
  });
  // Its files only once the rows are gone for good: a failed delete keeps the project whole.
  removeDemoRepository(deps.config.dataDir, projectId);
  await forgetRepositoryFiles(deps);
}
