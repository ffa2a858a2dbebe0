import type {
  SurveyVar,
  Workflow,
  WorkflowEdge,
  WorkflowEdgeCondition,
  WorkflowNode,
  WorkflowNodeType,
} from '@signalbox/contracts';

/**
 * The editor's workflow as the user shapes it: the contract's nodes and edges (positions left to the automatic
 * layout). Every change is a pure function here, so the graph, the node list and the forms share one model.
 */
export type Draft = {
  name: string;
  description: string;
  survey_vars: SurveyVar[];
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
};

export const emptyDraft: Draft = { name: '', description: '', survey_vars: [], nodes: [], edges: [] };

export function draftOf(workflow: Workflow): Draft {
  return {
    name: workflow.name,
    description: workflow.description,
    survey_vars: workflow.survey_vars,
    nodes: workflow.nodes as WorkflowNode[],
    edges: workflow.edges,
  };
}

/** The body of POST/PUT workflows. */
export function bodyOf(draft: Draft) {
  return {
    name: draft.name,
    description: draft.description,
    survey_vars: draft.survey_vars,
    nodes: draft.nodes.map((n) => ({ ...n, position: null })),
    edges: draft.edges,
  };
}

/** The first free id `<type>-<n>`. */
export function freeNodeId(draft: Draft, type: WorkflowNodeType): string {
  const taken = new Set(draft.nodes.map((n) => n.id));
  for (let n = 1; ; n++) if (!taken.has(`${type}-${n}`)) return `${type}-${n}`;
}

/** A new node of a type with the contract's defaults; a template node runs `templateId` (0: none picked yet). */
export function newNode(id: string, type: WorkflowNodeType, templateId = 0): WorkflowNode {
  const base = { id, name: '', position: null };
  if (type === 'template')
    return {
      ...base,
      type,
      template_id: templateId,
      survey: {},
      extra_vars: {},
      limit: null,
      git_branch: null,
      inventory_id: null,
      environment_id: null,
      build_task_id: null,
      message: '',
    };
  if (type === 'approval')
    return {
      ...base,
      type,
      roles: ['owner', 'manager'],
      user_ids: [],
      required: 1,
      allow_self_approval: false,
      message: '',
      timeout_seconds: null,
      on_timeout: 'fail',
    };
  return { ...base, type, seconds: 60, time_of_day: null, timezone: 'UTC' };
}

/** Adds a node; after `after` (a node of the draft) it is connected from it on success. */
export function addNode(draft: Draft, node: WorkflowNode, after?: string | null): Draft {
  const nodes = [...draft.nodes, node];
  const from = after && draft.nodes.some((n) => n.id === after) ? after : null;
  const edges = from ? [...draft.edges, { from, to: node.id, condition: 'success' as const }] : draft.edges;
  return { ...draft, nodes, edges };
}

export function updateNode(draft: Draft, id: string, patch: Partial<WorkflowNode>): Draft {
  return {
    ...draft,
    nodes: draft.nodes.map((n) => (n.id === id ? ({ ...n, ...patch } as WorkflowNode) : n)),
  };
}

/** Removes a node with its edges. */
export function removeNode(draft: Draft, id: string): Draft {
  return {
    ...draft,
    nodes: draft.nodes.filter((n) => n.id !== id),
    edges: draft.edges.filter((e) => e.from !== id && e.to !== id),
  };
}

/** The ids of the nodes that run before `id` (its ancestors). */
export function ancestorsOf(edges: readonly WorkflowEdge[], id: string): Set<string> {
  const seen = new Set<string>();
  const stack = [id];
  while (stack.length > 0) {
    const current = stack.pop() as string;
    for (const e of edges)
      if (e.to === current && !seen.has(e.from)) {
        seen.add(e.from);
        stack.push(e.from);
      }
  }
  return seen;
}

/** Why an edge cannot be added: to itself, a second edge between the same nodes, or one closing a loop. */
export type ConnectProblem = 'self' | 'repeated' | 'cycle';

export function connectProblem(draft: Draft, from: string, to: string): ConnectProblem | null {
  if (from === to) return 'self';
  if (draft.edges.some((e) => e.from === from && e.to === to)) return 'repeated';
  // An edge from → to closes a loop when `to` already runs before `from`.
  if (ancestorsOf(draft.edges, from).has(to)) return 'cycle';
  return null;
}

/** Connects two nodes, or says why not. */
export function connect(
  draft: Draft,
  from: string,
  to: string,
  condition: WorkflowEdgeCondition = 'success',
): Draft | ConnectProblem {
  const problem = connectProblem(draft, from, to);
  return problem ?? { ...draft, edges: [...draft.edges, { from, to, condition }] };
}

export function setCondition(
  draft: Draft,
  from: string,
  to: string,
  condition: WorkflowEdgeCondition,
): Draft {
  return {
    ...draft,
    edges: draft.edges.map((e) => (e.from === from && e.to === to ? { ...e, condition } : e)),
  };
}

export function removeEdge(draft: Draft, from: string, to: string): Draft {
  return { ...draft, edges: draft.edges.filter((e) => !(e.from === from && e.to === to)) };
}

/** What a node shows as its title: its name, else its id. */
export const nodeLabel = (node: { id: string; name: string }) => node.name || node.id;
