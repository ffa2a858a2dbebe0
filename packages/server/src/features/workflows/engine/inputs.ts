import { createHash } from 'node:crypto';
import { type Coded, coded, type WorkflowTemplateNode, type WorkflowValueSource } from '@signalbox/contracts';
import type { Db } from '../../../db';
import { parseJsonObject } from '../../../db/values';
import type { SecretBox } from '../../../lib/crypto';
import type { NewTask } from '../../../ports';
import { surveyVarsOf } from '../../../tasks/run/survey-answers';
import { openSecretOutputs } from '../../../tasks/task-view';
import { idOfValue } from '../definition-check';
import { ancestorsOf } from '../graph';
import type { RunState } from './run-state';

/** A value a node runs with, and whether it must stay secret. */
type Value = { value: unknown; secret: boolean };

/** Why a node cannot start: its node fails, the message as its detail. */
export class NodeInputError extends Error {
  constructor(readonly error: Coded) {
    super(error.code);
  }
}

/** The survey answers a run started with: plain and secret (opened). */
export function runSurvey(state: RunState, box: SecretBox) {
  const plain = parseJsonObject(state.run.survey);
  let secret: Record<string, unknown> = {};
  if (state.run.survey_secret) {
    try {
      secret = parseJsonObject(box.open(state.run.survey_secret));
    } catch {
      secret = {};
    }
  }
  return { plain, secret };
}

/**
 * The outputs of a template node's task: those it published, its secret ones (opened), and the ones every template
 * node has — `task_id`, `version`, `commit_hash` and `status`.
 */
export function nodeOutputs(state: RunState, nodeId: string, box: SecretBox) {
  const row = state.nodes.get(nodeId);
  const task = row?.task_id ? state.tasks.get(row.task_id) : undefined;
  if (!task) return { plain: {}, secret: {} };
  return {
    // What the task published wins over the values every task has (a script's own `version`).
    plain: {
      task_id: task.id,
      version: task.version,
      commit_hash: task.commit_hash,
      status: task.status,
      ...parseJsonObject(task.outputs),
    } as Record<string, unknown>,
    secret: openSecretOutputs((s) => box.open(s), task.secret_outputs),
  };
}

function resolve(
  state: RunState,
  box: SecretBox,
  nodeId: string,
  source: WorkflowValueSource,
): Value | undefined {
  if (source.from === 'fixed') return { value: source.value, secret: false };
  if (source.from === 'survey') {
    const survey = runSurvey(state, box);
    if (Object.hasOwn(survey.secret, source.name)) return { value: survey.secret[source.name], secret: true };
    if (Object.hasOwn(survey.plain, source.name)) return { value: survey.plain[source.name], secret: false };
    return undefined;
  }
  const outputs = nodeOutputs(state, source.node, box);
  if (Object.hasOwn(outputs.secret, source.name)) return { value: outputs.secret[source.name], secret: true };
  if (Object.hasOwn(outputs.plain, source.name) && outputs.plain[source.name] !== null)
    return { value: outputs.plain[source.name], secret: false };
  throw new NodeInputError(
    coded('workflow_value_missing', { node: nodeId, source: `node ${source.node}`, name: source.name }),
  );
}

const idOf = (nodeId: string, field: string, v: unknown): number => {
  const n = idOfValue(v);
  if (n !== null) return n;
  throw new NodeInputError(coded('workflow_value_invalid', { node: nodeId, field, detail: 'must be an id' }));
};

const textOf = (nodeId: string, field: string, v: unknown): string => {
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  throw new NodeInputError(coded('workflow_value_invalid', { node: nodeId, field, detail: 'must be text' }));
};

/**
 * The task a template node starts, its values taken from their sources. A secret value (a secret survey answer, a
 * secret output) and an answer to a secret variable of the template go to the task's secret values (sealed, masked
 * in its log), the others to its extra variables.
 */
export async function templateNodeTask(
  db: Db,
  state: RunState,
  box: SecretBox,
  node: WorkflowTemplateNode,
): Promise<NewTask> {
  const template = await db
    .selectFrom('template')
    .select('survey_vars')
    .where('id', '=', node.template_id)
    .where('project_id', '=', state.run.project_id)
    .executeTakeFirst();
  if (!template)
    throw new NodeInputError(coded('not_in_project', { what: 'template', id: node.template_id }));
  const secretVars = new Set(
    surveyVarsOf(template.survey_vars)
      .filter((v) => v.type === 'secret')
      .map((v) => v.name),
  );
  const environment: Record<string, unknown> = {};
  const secret: Record<string, unknown> = {};
  for (const [name, source] of [...Object.entries(node.extra_vars), ...Object.entries(node.survey)]) {
    const v = resolve(state, box, node.id, source);
    if (v === undefined) continue;
    if (v.secret || secretVars.has(name)) secret[name] = v.value;
    else environment[name] = v.value;
  }
  const input: NewTask = {
    template_id: node.template_id,
    message: (node.message || state.run.message).slice(0, 500),
    environment: JSON.stringify(environment),
    secret: JSON.stringify(secret),
  };
  const one = (source: WorkflowValueSource | null) =>
    source ? resolve(state, box, node.id, source) : undefined;
  const limit = one(node.limit);
  if (limit !== undefined)
    input.limit = Array.isArray(limit.value)
      ? limit.value.map((h) => textOf(node.id, 'limit', h))
      : textOf(node.id, 'limit', limit.value);
  const branch = one(node.git_branch);
  if (branch !== undefined) input.git_branch = textOf(node.id, 'git_branch', branch.value);
  const inventory = one(node.inventory_id);
  if (inventory !== undefined) input.inventory_id = idOf(node.id, 'inventory_id', inventory.value);
  // Checked again by the task's start: of this project, and allowed by the template.
  const environmentId = one(node.environment_id ?? null);
  if (environmentId !== undefined)
    input.environment_id = idOf(node.id, 'environment_id', environmentId.value);
  const build = one(node.build_task_id);
  if (build !== undefined) input.build_task_id = idOf(node.id, 'build_task_id', build.value);
  return input;
}

/** JSON with object keys in order, so equal values always read the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

/**
 * The SHA-256 digest (hex) an approval binds to: the run, the node, the survey answers (secret ones included) and,
 * for every template node upstream of it, the task it ran, that task's commit and version and its outputs (secret
 * ones included). A re-run of an upstream node (a new task) or any changed value gives another digest.
 */
export function approvalDigest(state: RunState, nodeId: string, box: SecretBox): string {
  const survey = runSurvey(state, box);
  const upstream = [...ancestorsOf(state.graph, nodeId)]
    .filter((id) => state.graph.nodes.get(id)?.type === 'template')
    .sort()
    .map((id) => ({ node: id, ...nodeOutputs(state, id, box) }));
  const doc = { run: state.run.id, node: nodeId, survey, upstream };
  return createHash('sha256').update(canonical(doc)).digest('hex');
}
