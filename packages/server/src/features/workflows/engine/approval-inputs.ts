import type { WorkflowApprovalInput, WorkflowTemplateNode, WorkflowValueSource } from '@signalbox/contracts';
import type { Db } from '../../../db';
import { parseJsonObject } from '../../../db/values';
import { surveyVarsOf } from '../../../tasks/run/survey-answers';
import { secretOutputNames } from '../../../tasks/task-view';
import { idOfValue } from '../definition-check';
import { descendantsOf } from '../graph';
import { isNodeFinished, type RunState } from './run-state';

/** How a secret value is shown. */
const MASK = '**********';

type Resolved = Pick<WorkflowApprovalInput, 'state' | 'value' | 'secret'>;

const fields = ['limit', 'git_branch', 'inventory_id', 'environment_id', 'build_task_id'] as const;

/**
 * The values the template nodes after approval node `nodeId` run with, as its approvers review them: each mapping
 * of each template node that runs after it, resolved from the run's survey and the outputs of the nodes that ran.
 * Secret values are never opened here: a secret survey answer, a secret output or an answer to a secret variable
 * of the template is shown as the mask. An output of a node that has not ended yet is `pending`.
 */
export async function approvalInputs(
  db: Db,
  state: RunState,
  nodeId: string,
): Promise<WorkflowApprovalInput[]> {
  const after = descendantsOf(state.graph, nodeId);
  const nodes = state.definition.nodes.filter(
    (n): n is WorkflowTemplateNode => n.type === 'template' && after.has(n.id),
  );
  if (nodes.length === 0) return [];
  const projectId = state.run.project_id;
  const templates = await db
    .selectFrom('template')
    .select(['id', 'survey_vars'])
    .where('project_id', '=', projectId)
    .where('id', 'in', [...new Set(nodes.map((n) => n.template_id))])
    .execute();
  const secretVarsOf = new Map(
    templates.map((t) => [
      t.id,
      new Set(
        surveyVarsOf(t.survey_vars)
          .filter((v) => v.type === 'secret')
          .map((v) => v.name),
      ),
    ]),
  );
  const surveySecret = new Set(
    state.definition.survey_vars.filter((v) => v.type === 'secret').map((v) => v.name),
  );
  const survey = parseJsonObject(state.run.survey);

  const resolve = (source: WorkflowValueSource): Resolved => {
    if (source.from === 'fixed') return { state: 'value', value: source.value, secret: false };
    if (source.from === 'survey') {
      if (surveySecret.has(source.name))
        return state.run.survey_secret
          ? { state: 'value', value: MASK, secret: true }
          : { state: 'missing', value: null, secret: true };
      return Object.hasOwn(survey, source.name)
        ? { state: 'value', value: survey[source.name], secret: false }
        : { state: 'missing', value: null, secret: false };
    }
    const row = state.nodes.get(source.node);
    // The outputs of a node that has not ended (or is about to run again) are not known yet.
    if (!row || !isNodeFinished(row.status)) return { state: 'pending', value: null, secret: false };
    const task = row.task_id ? state.tasks.get(row.task_id) : undefined;
    if (!task) return { state: 'missing', value: null, secret: false };
    if (secretOutputNames(task.secret_outputs).includes(source.name))
      return { state: 'value', value: MASK, secret: true };
    const plain: Record<string, unknown> = {
      task_id: task.id,
      version: task.version,
      commit_hash: task.commit_hash,
      status: task.status,
      ...parseJsonObject(task.outputs),
    };
    return Object.hasOwn(plain, source.name) && plain[source.name] !== null
      ? { state: 'value', value: plain[source.name], secret: false }
      : { state: 'missing', value: null, secret: false };
  };

  const inputs: WorkflowApprovalInput[] = [];
  for (const node of nodes) {
    const base = { node_id: node.id, node_name: node.name || node.id, template_id: node.template_id };
    const secretVars = secretVarsOf.get(node.template_id) ?? new Set<string>();
    for (const field of ['extra_vars', 'survey'] as const) {
      for (const [name, source] of Object.entries(node[field])) {
        const resolved = resolve(source);
        // An answer to a secret variable of the template reaches the task as a secret: shown masked too.
        const secret = resolved.secret || secretVars.has(name);
        inputs.push({
          ...base,
          field,
          name,
          source,
          ...resolved,
          secret,
          value: secret && resolved.state === 'value' ? MASK : resolved.value,
          label: null,
        });
      }
    }
    for (const field of fields) {
      const source = node[field] ?? null;
      if (!source) continue;
      inputs.push({ ...base, field, name: null, source, ...resolve(source), label: null });
    }
  }
  await nameIds(db, projectId, inputs);
  return inputs;
}

/** Labels the inventory and environment ids with their names (ids of the run's project only). */
async function nameIds(db: Db, projectId: number, inputs: WorkflowApprovalInput[]) {
  for (const [field, table] of [
    ['inventory_id', 'inventory'],
    ['environment_id', 'environment'],
  ] as const) {
    const wanted = inputs.filter((i) => i.field === field && i.state === 'value' && !i.secret);
    const ids = [...new Set(wanted.flatMap((i) => idOfValue(i.value) ?? []))];
    if (ids.length === 0) continue;
    const rows = await db
      .selectFrom(table)
      .select(['id', 'name'])
      .where('project_id', '=', projectId)
      .where('id', 'in', ids)
      .execute();
    const names = new Map(rows.map((r) => [r.id, r.name]));
    for (const input of wanted) input.label = names.get(idOfValue(input.value) ?? 0) ?? null;
  }
}
