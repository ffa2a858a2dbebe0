import { legacyLimitOf, type TaskSource, type TaskStatus, taskSources } from '@signalbox/contracts';
import type { Selectable } from 'kysely';
import type { TaskTable } from '../db/tables';
import { parseJson, parseJsonObject, toBool } from '../db/values';

/** A stored task row (the task table's columns). */
type TaskRow = Selectable<TaskTable>;

/**
 * The task columns an answer showing a task reads (taskFields, and the runner a list names). Lists select these
 * alone: the sealed secret, the engine's control columns and the plan links are never read for them, and a row of
 * 200 tasks costs a third of what `task.*` did on SQLite.
 */
export const taskViewColumns = [
  'id',
  'template_id',
  'project_id',
  'status',
  'message',
  'user_id',
  'integration_id',
  'schedule_id',
  'source',
  'created',
  'start',
  'end',
  'version',
  'build_task_id',
  'commit_hash',
  'commit_message',
  'playbook',
  'environment',
  'arguments',
  'git_branch',
  'inventory_id',
  'environment_id',
  'params',
  'debug',
  'dry_run',
  'diff',
  'outputs',
  'secret_outputs',
  'workflow_run_id',
  'workflow_node_id',
  'remote_runner_id',
] as const satisfies readonly (keyof TaskRow)[];

/** A task row as the views read it (see taskViewColumns). */
export type TaskViewRow = Pick<TaskRow, (typeof taskViewColumns)[number]>;

/**
 * The fields every answer showing a task carries (a task, a template's last task), from its stored row. Secret
 * survey values reach the run only: never an answer (the stored, sealed column is not read here).
 */
export function taskFields(t: TaskViewRow) {
  return taskFieldsWith(t, {});
}

/**
 * taskFields with more fields after them, in one object literal (a view built by spreading it into another, or by
 * adding fields to it afterwards, cost most of a cold task list's time on the JavaScript side).
 */
export function taskFieldsWith<Extra extends object>(t: TaskViewRow, extra: Extra) {
  const params = parseJson<Record<string, unknown>>(t.params, {});
  return {
    id: t.id,
    template_id: t.template_id,
    project_id: t.project_id,
    status: t.status as TaskStatus,
    message: t.message,
    user_id: t.user_id,
    integration_id: t.integration_id,
    schedule_id: t.schedule_id,
    source: (taskSources as readonly string[]).includes(t.source ?? '') ? (t.source as TaskSource) : null,
    created: t.created,
    start: t.start,
    end: t.end,
    version: t.version,
    build_task_id: t.build_task_id,
    commit_hash: t.commit_hash,
    commit_message: t.commit_message,
    playbook: t.playbook,
    environment: t.environment,
    arguments: t.arguments,
    git_branch: t.git_branch,
    inventory_id: t.inventory_id,
    environment_id: t.environment_id ?? null,
    params,
    debug: toBool(t.debug),
    dry_run: toBool(t.dry_run),
    diff: toBool(t.diff),
    limit: legacyLimitOf(params),
    secret: '' as const,
    outputs: parseJsonObject(t.outputs),
    secret_outputs: secretOutputNames(t.secret_outputs),
    workflow_run_id: t.workflow_run_id ?? null,
    workflow_node_id: t.workflow_node_id ?? null,
    ...extra,
  };
}

/**
 * task.secret_outputs holds `{"names": [...], "sealed": "<the values as JSON, sealed>"}`: the names are no secret
 * (answered with the task), the values open only with the server's key.
 */
export function secretOutputNames(stored: string | null | undefined): string[] {
  const doc = parseJson<{ names?: unknown }>(stored ?? null, {});
  return Array.isArray(doc.names) ? doc.names.filter((n): n is string => typeof n === 'string') : [];
}

/** The stored form of secret outputs (see secretOutputNames). */
export function sealSecretOutputs(seal: (plain: string) => string, outputs: Record<string, unknown>): string {
  return JSON.stringify({ names: Object.keys(outputs), sealed: seal(JSON.stringify(outputs)) });
}

/** The values of stored secret outputs; {} when none (or unreadable). */
export function openSecretOutputs(
  open: (sealed: string) => string,
  stored: string | null | undefined,
): Record<string, unknown> {
  const doc = parseJson<{ sealed?: unknown }>(stored ?? null, {});
  if (typeof doc.sealed !== 'string') return {};
  try {
    return parseJsonObject(open(doc.sealed));
  } catch {
    return {};
  }
}
