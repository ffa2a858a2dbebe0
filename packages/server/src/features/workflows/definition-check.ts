import {
  type Coded,
  coded,
  type WorkflowDefinition,
  type WorkflowNode,
  type WorkflowValueSource,
} from '@signalbox/contracts';
import type { Db } from '../../db';
import { parseJsonObject } from '../../db/values';
import { badRequest } from '../../lib/errors';
import { surveyVarsOf } from '../../tasks/run/survey-answers';
import { ancestorsOf, findCycle, type Graph, graphOf, topologicalOrder } from './graph';

/** Refuses a workflow definition (400), the error's field naming the part (nodes, edges, survey_vars). */
const refuse = (field: 'nodes' | 'edges', error: Coded) => badRequest(error, { [field]: error });

/**
 * Checks a workflow's graph (the schema has checked each field): unique node ids, edges between known nodes, no
 * repeated edge, no cycle, every node connected and able to run, conditions that can hold, delays that wait,
 * value sources from known survey variables and from template nodes that run before. Throws the first problem.
 */
export function checkGraph(definition: WorkflowDefinition): Graph {
  const ids = new Set<string>();
  for (const node of definition.nodes) {
    if (ids.has(node.id)) throw refuse('nodes', coded('workflow_node_id_repeated', { node: node.id }));
    ids.add(node.id);
  }
  const pairs = new Set<string>();
  for (const edge of definition.edges) {
    for (const end of [edge.from, edge.to])
      if (!ids.has(end)) throw refuse('edges', coded('workflow_edge_unknown_node', { node: end }));
    if (edge.from === edge.to)
      throw refuse('edges', coded('workflow_cycle', { nodes: `${edge.from} → ${edge.to}` }));
    const pair = JSON.stringify([edge.from, edge.to]);
    if (pairs.has(pair))
      throw refuse('edges', coded('workflow_edge_repeated', { from: edge.from, to: edge.to }));
    pairs.add(pair);
  }
  const graph = graphOf(definition.nodes, definition.edges);
  const { order, cyclic } = topologicalOrder(graph);
  if (cyclic.length > 0) {
    const found = findCycle(graph, cyclic);
    // Told from the node the definition lists first, so the same loop always reads the same.
    const position = new Map(definition.nodes.map((n, i) => [n.id, i]));
    const first = found.reduce(
      (best, id, i) => ((position.get(id) ?? 0) < (position.get(found[best] ?? '') ?? 0) ? i : best),
      0,
    );
    const cycle = [...found.slice(first), ...found.slice(0, first)];
    throw refuse('edges', coded('workflow_cycle', { nodes: [...cycle, cycle[0]].join(' → ') }));
  }
  for (const edge of definition.edges) {
    if (graph.nodes.get(edge.from)?.type === 'delay' && edge.condition === 'failure')
      throw refuse('edges', coded('workflow_condition_never', { from: edge.from, to: edge.to }));
  }
  if (definition.nodes.length > 1) {
    for (const node of definition.nodes) {
      if (graph.incoming.get(node.id)?.length === 0 && graph.outgoing.get(node.id)?.length === 0)
        throw refuse('nodes', coded('workflow_node_unreachable', { node: node.id }));
    }
  }
  checkSatisfiable(graph, order);
  for (const node of definition.nodes) checkNode(definition, graph, node);
  return graph;
}

/**
 * A node runs only when every incoming edge's condition holds, so what it needs of each ancestor adds up along
 * the paths to it: a node that needs one ancestor both to succeed and to fail can never run.
 */
function checkSatisfiable(graph: Graph, order: readonly string[]) {
  const needs = new Map<string, Map<string, 'success' | 'failure' | 'always'>>();
  for (const id of order) {
    const mine = new Map<string, 'success' | 'failure' | 'always'>();
    const add = (ancestor: string, outcome: 'success' | 'failure' | 'always') => {
      const had = mine.get(ancestor);
      if (had === undefined || had === 'always') mine.set(ancestor, outcome);
      else if (outcome !== 'always' && outcome !== had)
        throw refuse('edges', coded('workflow_node_never_runs', { node: id, needs: ancestor }));
    };
    for (const edge of graph.incoming.get(id) ?? []) {
      for (const [ancestor, outcome] of needs.get(edge.from) ?? []) add(ancestor, outcome);
      add(edge.from, edge.condition);
    }
    needs.set(id, mine);
  }
}

function checkNode(definition: WorkflowDefinition, graph: Graph, node: WorkflowNode) {
  if (node.type === 'approval') {
    if (node.roles.length === 0 && node.user_ids.length === 0)
      throw refuse('nodes', coded('workflow_approval_no_approvers', { node: node.id }));
    return;
  }
  if (node.type === 'delay') {
    if ((node.seconds === null) === (node.time_of_day === null))
      throw refuse('nodes', coded('workflow_delay_needs_wait', { node: node.id }));
    if (!isTimeZone(node.timezone))
      throw refuse('nodes', coded('workflow_timezone_invalid', { node: node.id, timezone: node.timezone }));
    return;
  }
  const surveyNames = new Set(definition.survey_vars.map((v) => v.name));
  const before = ancestorsOf(graph, node.id);
  for (const source of valueSourcesOf(node)) {
    if (source.from === 'survey' && !surveyNames.has(source.name))
      throw refuse('nodes', coded('workflow_mapping_unknown_survey', { node: node.id, name: source.name }));
    if (source.from !== 'output') continue;
    const params = { node: node.id, output: source.name, from: source.node };
    if (!before.has(source.node)) throw refuse('nodes', coded('workflow_mapping_not_upstream', params));
    if (graph.nodes.get(source.node)?.type !== 'template')
      throw refuse('nodes', coded('workflow_mapping_not_template', params));
  }
}

/**
 * A value read as a row id, as the engine reads a fixed or mapped id: a whole number from 1 to 2^31 - 1, or its
 * digits as text; null otherwise.
 */
export function idOfValue(v: unknown): number | null {
  const n = typeof v === 'string' && /^\d{1,10}$/.test(v.trim()) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 && n <= 2_147_483_647 ? n : null;
}

/** Every value source a template node takes a value from. */
export function valueSourcesOf(node: WorkflowNode): WorkflowValueSource[] {
  if (node.type !== 'template') return [];
  return [
    ...Object.values(node.survey),
    ...Object.values(node.extra_vars),
    ...[node.limit, node.git_branch, node.inventory_id, node.environment_id, node.build_task_id].filter(
      (s): s is WorkflowValueSource => s !== null,
    ),
  ];
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks what the graph refers to in the project: the templates template nodes run are the project's, the
 * environments they run with are the project's (and their templates allow the override), and the users approval
 * nodes name are its members.
 */
export async function checkReferences(db: Db, projectId: number, definition: WorkflowDefinition) {
  const templateIds = [
    ...new Set(definition.nodes.flatMap((n) => (n.type === 'template' ? [n.template_id] : []))),
  ];
  if (templateIds.length > 0) {
    const rows = await db
      .selectFrom('template')
      .select(['id', 'task_params', 'survey_vars'])
      .where('project_id', '=', projectId)
      .where('id', 'in', templateIds)
      .execute();
    const known = new Map(rows.map((r) => [r.id, r]));
    for (const node of definition.nodes)
      if (node.type === 'template' && !known.has(node.template_id))
        throw refuse(
          'nodes',
          coded('workflow_template_not_in_project', { node: node.id, id: node.template_id }),
        );
    for (const node of definition.nodes) {
      if (node.type !== 'template' || !node.environment_id) continue;
      const params = parseJsonObject(known.get(node.template_id)?.task_params);
      if (!params.allow_override_environment)
        throw refuse('nodes', coded('workflow_environment_override_not_allowed', { node: node.id }));
    }
    // A definition is read by every member: an answer to a secret variable comes from the run's secret survey or
    // an upstream secret output, never written into the definition.
    for (const node of definition.nodes) {
      if (node.type !== 'template') continue;
      const secret = new Set(
        surveyVarsOf(known.get(node.template_id)?.survey_vars ?? null)
          .filter((v) => v.type === 'secret')
          .map((v) => v.name),
      );
      for (const [name, source] of Object.entries(node.survey))
        if (source.from === 'fixed' && secret.has(name))
          throw refuse('nodes', coded('workflow_fixed_secret_answer', { node: node.id, name }));
    }
  }
  await checkEnvironments(db, projectId, definition);
  const userIds = [...new Set(definition.nodes.flatMap((n) => (n.type === 'approval' ? n.user_ids : [])))];
  if (userIds.length > 0) {
    const rows = await db
      .selectFrom('project_user')
      .select('user_id')
      .where('project_id', '=', projectId)
      .where('user_id', 'in', userIds)
      .execute();
    const members = new Set(rows.map((r) => r.user_id));
    for (const node of definition.nodes)
      if (node.type === 'approval')
        for (const id of node.user_ids)
          if (!members.has(id))
            throw refuse('nodes', coded('workflow_approver_not_member', { id, node: node.id }));
  }
}

/** A fixed environment override names an environment of the project: an id of another project is never kept. */
async function checkEnvironments(db: Db, projectId: number, definition: WorkflowDefinition) {
  const fixed = definition.nodes.flatMap((n) =>
    n.type === 'template' && n.environment_id?.from === 'fixed'
      ? [{ node: n.id, value: n.environment_id.value }]
      : [],
  );
  if (fixed.length === 0) return;
  const ids = fixed.map((f) => idOfValue(f.value)).filter((v): v is number => v !== null);
  const rows = ids.length
    ? await db
        .selectFrom('environment')
        .select('id')
        .where('project_id', '=', projectId)
        .where('id', 'in', [...new Set(ids)])
        .execute()
    : [];
  const known = new Set(rows.map((r) => r.id));
  for (const { node, value } of fixed)
    if (!known.has(idOfValue(value) ?? 0))
      throw refuse(
        'nodes',
        coded('workflow_environment_not_in_project', { node, id: JSON.stringify(value).slice(0, 40) }),
      );
}
