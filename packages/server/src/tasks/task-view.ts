import { legacyLimitOf, type TaskSource, type TaskStatus, taskSources } from '@signalbox/contracts';
import { parseJson, parseJsonObject, toBool } from '../db/values';
import type { TaskRow } from './store';

/**
 * The fields every answer showing a task carries (a task, a template's last task), from its stored row. Secret
 * survey values reach the run only: never an answer (the stored, sealed column is not read here).
 */
export function taskFields(t: Omit<TaskRow, 'secret'>) {
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
    params,
    debug: toBool(t.debug),
    dry_run: toBool(t.dry_run),
    diff: toBool(t.diff),
    limit: legacyLimitOf(params),
    secret: '' as const,
    outputs: parseJsonObject(t.outputs),
  };
}
