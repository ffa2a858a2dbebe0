import { isFinished } from '@signalbox/contracts';
import { recordEvent } from '../audit/audit.store';
import { fromBool, now, parseJson } from '../db/values';
import type { Deps } from '../deps';
import { assertInProject } from '../features/refs/refs.store';
import { badRequest, found } from '../lib/errors';
import { incomingVersion } from './details';
import { findProjectTask, findTemplate, insertTask, lastBuildVersion, pruneTemplateTasks } from './store';
import { guardTaskInput } from './task-input-guard';
import type { NewTask, TaskOrigin } from './types';
import { nextBuildVersion } from './version';

const list = (v: string | string[] | null | undefined): string[] =>
  (Array.isArray(v) ? v : (v ?? '').split(',')).map((s) => s.trim()).filter(Boolean);

/**
 * Validates a new task against its template and the caller's rights (task-input-guard) and stores it as
 * `waiting`. Overrides the template does not allow are not stored (inventory, branch, arguments, playbook) or
 * not honoured by the executors (limit/tags, debug).
 */
export async function insertNewTask(
  deps: Deps,
  projectId: number,
  input: NewTask,
  origin: TaskOrigin,
): Promise<number> {
  await assertInProject(deps.db, 'template', input.template_id, projectId, 'Template');
  const template = found(await findTemplate(deps.db, input.template_id), 'Template');
  const tp = parseJson<Record<string, unknown>>(template.task_params, {});
  const guarded = guardTaskInput(template, input, origin);

  let inventoryId: number | null = null;
  if (input.inventory_id && tp.allow_override_inventory) {
    await assertInProject(deps.db, 'inventory', input.inventory_id, projectId, 'Inventory');
    inventoryId = input.inventory_id;
  }

  let version: string | null = null;
  let buildTaskId: number | null = null;
  if (template.type === 'deploy') {
    if (!input.build_task_id)
      throw badRequest('Build version is required', { build_task_id: 'Build version is required' });
    const build = await findProjectTask(deps.db, projectId, input.build_task_id);
    if (!build || (template.build_template_id && build.template_id !== template.build_template_id))
      throw badRequest(`Build task ${input.build_task_id} is not a build of this template's build template`, {
        build_task_id: 'Build task not found',
      });
    if (build.status !== 'success')
      throw badRequest(`Build task ${build.id} did not succeed`, { build_task_id: 'Build did not succeed' });
    buildTaskId = build.id;
    version = await incomingVersion(deps, build.id);
  } else if (template.type === 'build') {
    version = nextBuildVersion(
      template.start_version || '0.0.0',
      await lastBuildVersion(deps.db, template.id),
    );
  }

  const params: Record<string, unknown> = { ...(input.params ?? {}) };
  const limit = list(input.limit);
  if (limit.length) params.limit = limit;
  if (input.tags?.length) params.tags = list(input.tags);
  if (input.skip_tags?.length) params.skip_tags = list(input.skip_tags);
  params.debug = Boolean(input.debug);
  params.dry_run = Boolean(input.dry_run);
  params.diff = Boolean(input.diff);

  const secret = input.secret?.trim() && input.secret.trim() !== '{}' ? deps.box.seal(input.secret) : null;
  const id = await insertTask(deps.db, deps.dialect, {
    project_id: projectId,
    template_id: template.id,
    status: 'waiting',
    message: (input.message ?? '').slice(0, 500),
    user_id: origin.userId,
    integration_id: origin.integrationId ?? null,
    schedule_id: origin.scheduleId ?? null,
    created: now(),
    start: null,
    end: null,
    version,
    build_task_id: buildTaskId,
    commit_hash: origin.commitHash ?? null,
    commit_message: null,
    playbook: guarded.playbook,
    environment: input.environment?.trim() || '{}',
    secret,
    arguments: guarded.arguments,
    git_branch: input.git_branch && template.allow_override_branch_in_task ? input.git_branch : null,
    inventory_id: inventoryId,
    params: JSON.stringify(params),
    debug: fromBool(input.debug),
    dry_run: fromBool(input.dry_run),
    diff: fromBool(input.diff),
  });
  await recordEvent(deps.db, {
    project_id: projectId,
    user_id: origin.userId,
    object_type: 'task',
    object_id: id,
    description: `Task ID ${id} queued for running`,
  });
  if (deps.config.maxTasksPerTemplate > 0)
    await pruneTemplateTasks(deps.db, template.id, deps.config.maxTasksPerTemplate);
  return id;
}

/** A re-run: the original's parameters and commit, started by the caller (secret survey values are gone). */
export async function rerunInput(deps: Deps, projectId: number, taskId: number) {
  const t = await findProjectTask(deps.db, projectId, taskId);
  if (!t) return null;
  const params = parseJson<Record<string, unknown>>(t.params, {});
  const { limit, tags, skip_tags, ...rest } = params as {
    limit?: string[];
    tags?: string[];
    skip_tags?: string[];
  } & Record<string, unknown>;
  const input: NewTask = {
    template_id: t.template_id,
    message: t.message,
    build_task_id: t.build_task_id,
    debug: t.debug === 1,
    dry_run: t.dry_run === 1,
    diff: t.diff === 1,
    arguments: t.arguments,
    environment: t.environment,
    git_branch: t.git_branch,
    inventory_id: t.inventory_id,
    limit: limit ?? null,
    tags: tags ?? null,
    skip_tags: skip_tags ?? null,
    playbook: t.playbook || null,
    params: rest,
  };
  return { input, commitHash: t.commit_hash, finished: isFinished(t.status) };
}
