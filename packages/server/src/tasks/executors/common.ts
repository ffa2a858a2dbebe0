import type { Job } from '../job';
import { TaskFailed } from '../job';

/** A JSON array of CLI arguments (template or task); invalid text fails the task with a clear message. */
export function parseArgs(text: string | null | undefined, label: string): string[] {
  if (!text?.trim()) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new TaskFailed(`${label} must be a JSON array of strings`);
  }
  if (!Array.isArray(parsed)) throw new TaskFailed(`${label} must be a JSON array of strings`);
  return parsed.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)));
}

export function stringList(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string' && x.trim() !== '');
  if (typeof v === 'string')
    return v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  return [];
}

export const valueText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

export function templateArgs(job: Job): string[] {
  return parseArgs(job.details.template.arguments, 'Template arguments');
}

/** Task arguments count only when the template allows overriding them. */
export function taskArgs(job: Job): string[] {
  return job.details.template.allow_override_args_in_task
    ? parseArgs(job.task.arguments, 'Task arguments')
    : [];
}

/** semaphore_vars.task_details, as the peer passes it. */
export function taskDetails(job: Job, webRoot: string) {
  const d = job.details;
  const t = d.task;
  return {
    id: t.id,
    ...(t.message ? { message: t.message } : {}),
    username: d.userName,
    url: `${webRoot.replace(/\/$/, '')}/project/${t.project_id}/history?t=${t.id}`,
    commit_hash: t.commit_hash ?? '',
    commit_message: t.commit_message ?? '',
    inventory_name: d.inventory?.name ?? '',
    inventory_id: d.inventory?.id ?? 0,
    repository_name: d.repository?.name ?? '',
    repository_id: d.repository?.id ?? 0,
    ...(d.template.type ? { type: d.template.type } : {}),
    ...(d.incomingVersion ? { incoming_version: d.incomingVersion } : {}),
    ...(d.template.type === 'build' && t.version ? { target_version: t.version } : {}),
  };
}
