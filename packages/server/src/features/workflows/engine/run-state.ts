import {
  finishedWorkflowNodeStatuses,
  type WorkflowDefinition,
  type WorkflowEdge,
  type WorkflowNodeStatus,
  type WorkflowRunStatus,
} from '@signalbox/contracts';
import type { Db } from '../../../db';
import { type Graph, graphOf, topologicalOrder } from '../graph';
import { type NodeRow, nodesOf, type RunRow, type RunTask, tasksOf } from '../runs.store';
import { definitionOf } from '../workflows.store';

/** What advancing a run reads: the run, the graph it runs, each node's row and the tasks its template nodes ran. */
export type RunState = {
  run: RunRow;
  definition: WorkflowDefinition;
  graph: Graph;
  /** Node ids, each after all of its parents. */
  order: string[];
  nodes: Map<string, NodeRow>;
  tasks: Map<number, RunTask>;
};

export async function loadRunState(db: Db, run: RunRow): Promise<RunState> {
  const definition = definitionOf(run.definition);
  const graph = graphOf(definition.nodes, definition.edges);
  const rows = await nodesOf(db, [run.id]);
  const nodes = new Map(rows.map((r) => [r.node_id, r]));
  const taskIds = rows.flatMap((r) => (r.task_id ? [r.task_id] : []));
  const tasks = new Map((await tasksOf(db, taskIds)).map((t) => [t.id, t]));
  return { run, definition, graph, order: topologicalOrder(graph).order, nodes, tasks };
}

export const isNodeFinished = (status: string) =>
  (finishedWorkflowNodeStatuses as readonly string[]).includes(status);

const failed = (status: string) => status === 'failed' || status === 'rejected';

/** Whether an edge is taken, given how its source node ended. */
export function edgeHolds(edge: WorkflowEdge, sourceStatus: string): boolean {
  if (sourceStatus === 'success') return edge.condition === 'success' || edge.condition === 'always';
  if (failed(sourceStatus)) return edge.condition === 'failure' || edge.condition === 'always';
  return false;
}

/**
 * The run's status from its nodes' states: while any node is unfinished, `waiting_approval` when nothing runs but
 * approvals, else `running`. Once all are finished: `rejected` or `failed` when a node was rejected or failed and
 * no failure (or always) edge leaves it — a failure the workflow handles does not fail the run — else `success`.
 */
export function runStatusOf(state: Pick<RunState, 'graph' | 'nodes'>): WorkflowRunStatus {
  const statuses = [...state.nodes.values()].map((n) => n.status as WorkflowNodeStatus);
  if (statuses.some((s) => !isNodeFinished(s))) {
    // Pending nodes wait for their parents: an advance has started every one that could start.
    const moving = statuses.includes('running');
    return !moving && statuses.includes('waiting_approval') ? 'waiting_approval' : 'running';
  }
  let outcome: WorkflowRunStatus = 'success';
  for (const node of state.nodes.values()) {
    if (!failed(node.status)) continue;
    const handled = (state.graph.outgoing.get(node.node_id) ?? []).some((e) => e.condition !== 'success');
    if (handled) continue;
    if (node.status === 'rejected') return 'rejected';
    outcome = 'failed';
  }
  if (statuses.includes('stopped') && outcome === 'success') return 'stopped';
  return outcome;
}
