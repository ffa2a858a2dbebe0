import { type Coded, type CodedMessage, coded, playbookPathProblem } from '@signalbox/contracts';
import { parseJson, parseJsonObject } from '../../db/values';
import { AppError, fieldError } from '../../lib/errors';
import type { NewTask, TaskOrigin } from '../../ports';
import { isStackName } from '../../tasks/executors/common';
import type { TemplateRow } from '../../tasks/store';
import { disallowedArgument, isReservedAnsibleVar } from './task-args-allowlist';

/*
 * What a new task may change of its template, by the caller's rights. Bad input is a 400; input the caller's
 * role may not send is a 403; both name the field. Callers without manageProjectResources (task runners,
 * schedules, integrations) may not change the playbook, may pass only harmless CLI options, and may not set
 * Ansible's own variables. A re-run keeps the overrides of the task it repeats (checked when that task was
 * created); paths are checked again when it runs.
 */

/** The overrides a task keeps: '' / null when it has none of its own. */
export type GuardedTask = { playbook: string; arguments: string | null };

const refused = (field: string, error: Coded | CodedMessage) => new AppError(403, error, { [field]: error });
const invalid = (field: string, error: Coded | CodedMessage) => fieldError(field, error as Coded);

function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (Array.isArray(value)) return value.some(hasNul);
  if (value && typeof value === 'object')
    return Object.entries(value).some(([k, v]) => k.includes('\0') || hasNul(v));
  return false;
}

const argsOf = (text: string | null | undefined): string[] => {
  const parsed = parseJson<unknown>(text, []);
  return Array.isArray(parsed) ? parsed.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))) : [];
};
const sameArgs = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** A NUL character cannot reach a process (argv, environment): refused up front rather than failing the run. */
function assertNoNul(input: NewTask) {
  for (const field of ['environment', 'secret', 'arguments'] as const) {
    const text = input[field];
    if (text && hasNul(parseJson<unknown>(text, null))) throw invalid(field, coded('no_nul', { field }));
  }
}

function checkPlaybook(template: TemplateRow, input: NewTask, origin: TaskOrigin): string {
  const playbook = input.playbook ?? '';
  // Clients echo the template's playbook: that is no override.
  if (playbook === '' || playbook === template.playbook) return '';
  const problem = playbookPathProblem(playbook);
  if (problem) throw invalid('playbook', problem);
  if (origin.rerunOf) return playbook;
  if (!template.allow_override_args_in_task)
    throw refused('playbook', coded('playbook_override_not_allowed'));
  if (!origin.canEditTemplates) throw refused('playbook', coded('playbook_override_needs_permission'));
  return playbook;
}

function checkArguments(template: TemplateRow, app: string, input: NewTask, origin: TaskOrigin) {
  // Not honoured when the template does not allow them, so not kept either (a later re-run cannot revive them).
  if (!template.allow_override_args_in_task) return null;
  const text = input.arguments?.trim() || null;
  if (!text || origin.canEditTemplates || origin.rerunOf) return text;
  const args = argsOf(text);
  if (sameArgs(args, argsOf(template.arguments))) return text;
  const problem = disallowedArgument(app, args);
  if (problem) throw refused('arguments', problem.error);
  return text;
}

function checkAnsibleVars(input: NewTask, origin: TaskOrigin) {
  if (origin.canEditTemplates || origin.rerunOf) return;
  for (const field of ['environment', 'secret'] as const) {
    const name = Object.keys(parseJsonObject(input[field])).find(isReservedAnsibleVar);
    if (name) throw refused(field, coded('reserved_variable', { name }));
  }
}

/** "@file" in a limit makes Ansible read hosts from a file on the server. */
function checkLimit(input: NewTask) {
  const lists = [input.limit, input.params?.limit];
  for (const list of lists) {
    const items = Array.isArray(list) ? list : typeof list === 'string' ? list.split(',') : [];
    if (items.some((item) => typeof item === 'string' && item.trim().startsWith('@')))
      throw invalid('limit', coded('limit_from_file'));
  }
}

function checkStack(input: NewTask) {
  const stack = input.params?.stack;
  if (stack == null || stack === '') return;
  if (typeof stack !== 'string' || !isStackName(stack)) throw invalid('params.stack', coded('stack_name'));
}

/** Checks a new task against its template and the caller's rights; returns the overrides to store. */
export function guardTaskInput(template: TemplateRow, input: NewTask, origin: TaskOrigin): GuardedTask {
  const app = template.app || 'ansible';
  assertNoNul(input);
  const playbook = checkPlaybook(template, input, origin);
  const args = checkArguments(template, app, input, origin);
  if (app === 'ansible') {
    checkAnsibleVars(input, origin);
    checkLimit(input);
  }
  if (app === 'pulumi') checkStack(input);
  return { playbook, arguments: args };
}
