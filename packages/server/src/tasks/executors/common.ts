import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { errorMessage, playbookPathProblem } from '@signalbox/contracts';
import { parseJson } from '../../db/values';
import type { Job } from '../run/job';
import { TaskFailed } from '../run/job';

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

/** The playbook (file or sub-directory) a task runs: the task's own only when its template allows overriding. */
export function chosenPlaybook(job: Job): string {
  const template = job.details.template;
  return (template.allow_override_args_in_task && job.task.playbook) || template.playbook || '';
}

/**
 * Resolves the playbook (a file for ansible and bash, a sub-directory for terraform/tofu/pulumi, where empty
 * means the repository itself) inside the checkout. The real path, symbolic links followed, must exist and lie
 * inside the checkout's real path; otherwise the task fails before anything runs. This also catches templates
 * saved before paths were checked and repositories that commit a link pointing outside. Returns the real path.
 */
export function resolveInCheckout(job: Job, kind: 'file' | 'directory'): string {
  const path = chosenPlaybook(job);
  const what = kind === 'file' ? 'Playbook' : 'Playbook directory';
  if (kind === 'file' && !path) throw new TaskFailed('The template has no playbook');
  const problem = playbookPathProblem(path);
  if (problem) throw new TaskFailed(`${errorMessage(problem)}: nothing was run`);
  const shown = JSON.stringify(path);
  let root: string;
  let real: string;
  try {
    root = realpathSync(job.repoDir);
    real = realpathSync(resolve(root, path || '.'));
  } catch {
    throw new TaskFailed(`${what} ${shown} does not exist in the repository: nothing was run`);
  }
  const rel = relative(root, real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new TaskFailed(`${what} ${shown} leads outside the repository (a symbolic link?): nothing was run`);
  const stat = statSync(real);
  if (kind === 'file' ? !stat.isFile() : !stat.isDirectory())
    throw new TaskFailed(`${what} ${shown} is not a ${kind} in the repository: nothing was run`);
  return real;
}

/** Names that become process environment variables: letters, digits and "_", not starting with a digit. */
export const isEnvName = (name: string) => /^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name);

/** A pulumi stack ([org/[project/]]stack): a conservative character set, never starting with "-". */
export const isStackName = (name: string) =>
  name.length <= 100 && /^[A-Za-z0-9_][A-Za-z0-9_.-]*(\/[A-Za-z0-9_][A-Za-z0-9_.-]*){0,2}$/.test(name);

/** The names of the survey variables the template declares. */
export function declaredSurveyVars(job: Job): Set<string> {
  const surveyVars = parseJson<unknown>(job.details.template.survey_vars, []);
  return new Set(
    (Array.isArray(surveyVars) ? surveyVars : [])
      .map((v) => (v && typeof v === 'object' ? (v as { name?: unknown }).name : undefined))
      .filter((n): n is string => typeof n === 'string' && n !== ''),
  );
}

/**
 * Secret survey values as process environment variables (bash, pulumi), named after the survey variable. Only
 * variables the template declares count: a task could otherwise name BASH_ENV, LD_PRELOAD or PATH and take over
 * the process. Others are left out with a log line naming them (values are never logged).
 */
export function surveySecretEnv(job: Job): Record<string, string> {
  const declared = declaredSurveyVars(job);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(job.details.surveySecrets)) {
    if (declared.has(name) && isEnvName(name)) env[name] = valueText(value);
    else job.log(`Secret value ${JSON.stringify(name)} is not a survey variable of the template: not passed`);
  }
  return env;
}

/**
 * Every survey answer as a process environment variable named after its variable (bash, python, powershell,
 * pulumi), encoded by `valueText`: text as it is, a number as its JSON text (`5`, `2.5`), a boolean `true` /
 * `false`, a multiselect's list and a kv's object as JSON (`["a","b"]`, `{"k":"v"}`). Only variables the template
 * declares, with a usable name, count (see surveySecretEnv); the secret answers come from the secret values.
 */
export function surveyAnswerEnv(job: Job): Record<string, string> {
  const declared = declaredSurveyVars(job);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(job.details.extraVars))
    if (declared.has(name) && isEnvName(name) && value !== undefined) env[name] = valueText(value);
  return { ...env, ...surveySecretEnv(job) };
}
