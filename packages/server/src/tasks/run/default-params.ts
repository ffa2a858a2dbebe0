import type { DefaultTaskParams, DefaultTaskParamsInput } from '@signalbox/contracts';
import { parseJson, parseJsonObject } from '../../db/values';
import type { NewTask } from '../../ports';

/**
 * The stored text of default task parameters (an integration's or a schedule's): only what was given, so
 * defaults stay out of the task.
 */
export function defaultParamsText(params: DefaultTaskParamsInput): string {
  if (!params) return '{}';
  const out: DefaultTaskParams = {};
  if (params.environment.trim()) out.environment = params.environment;
  if (params.message) out.message = params.message;
  if (params.git_branch) out.git_branch = params.git_branch;
  if (params.inventory_id) out.inventory_id = params.inventory_id;
  if (params.arguments.trim()) out.arguments = params.arguments;
  if (Object.keys(params.params).length > 0) out.params = params.params;
  return JSON.stringify(out);
}

/** Stored default task parameters read back; anything that is not an object reads as none. */
export function storedDefaultParams(text: string | null | undefined): DefaultTaskParams {
  return parseJsonObject(text) as DefaultTaskParams;
}

/**
 * Stored default task parameters as a schedule answers them: the text fields and params of the peer's `TaskPrams`
 * blank where not set (as the peer answers its own row), so a client that sent blanks gets them back; an inventory
 * only when one is set.
 */
export function answeredDefaultParams(text: string | null | undefined): DefaultTaskParams {
  return {
    environment: '',
    message: '',
    git_branch: '',
    arguments: '',
    params: {},
    ...storedDefaultParams(text),
  };
}

/**
 * The task a caller with default parameters starts for `templateId`, with only what is set. Values taken from a request (`extracted`)
 * come under the defaults' extra variables (as in the peer, the stored environment keys win) and over their app
 * parameters.
 */
export function taskWithDefaults(
  templateId: number,
  defaults: DefaultTaskParams,
  extracted: { environment: Record<string, unknown>; params: Record<string, unknown> } = {
    environment: {},
    params: {},
  },
): NewTask {
  const environment = {
    ...extracted.environment,
    ...parseJson<Record<string, unknown>>(defaults.environment, {}),
  };
  const params = { ...(defaults.params ?? {}), ...extracted.params };
  const task: NewTask = { template_id: templateId };
  if (Object.keys(environment).length > 0) task.environment = JSON.stringify(environment);
  if (Object.keys(params).length > 0) task.params = params;
  if (defaults.message) task.message = defaults.message;
  if (defaults.git_branch) task.git_branch = defaults.git_branch;
  if (defaults.inventory_id) task.inventory_id = defaults.inventory_id;
  if (defaults.arguments) task.arguments = defaults.arguments;
  return task;
}
