import type { WorkflowEdge, WorkflowNode } from '@signalbox/contracts';

/** A workflow's graph as the engine and the checks walk it: nodes by id, each node's incoming and outgoing edges. */
export type Graph = {
  nodes: Map<string, WorkflowNode>;
  incoming: Map<string, WorkflowEdge[]>;
  outgoing: Map<string, WorkflowEdge[]>;
};

export function graphOf(nodes: readonly WorkflowNode[], edges: readonly WorkflowEdge[]): Graph {
  const graph: Graph = { nodes: new Map(), incoming: new Map(), outgoing: new Map() };
  for (const node of nodes) {
    graph.nodes.set(node.id, node);
    graph.incoming.set(node.id, []);
    graph.outgoing.set(node.id, []);
  }
  for (const edge of edges) {
    graph.outgoing.get(edge.from)?.push(edge);
    graph.incoming.get(edge.to)?.push(edge);
  }
  return graph;
}

/**
 * The node ids in an order where every node comes after all of its parents (Kahn's algorithm), and the ids left
 * over: those on or behind a cycle (empty for an acyclic graph).
 */
export function topologicalOrder(graph: Graph): { order: string[]; cyclic: string[] } {
  const remaining = new Map<string, number>();
  for (const [id, edges] of graph.incoming) remaining.set(id, edges.length);
  const ready = [...graph.nodes.keys()].filter((id) => remaining.get(id) === 0);
  const order: string[] = [];
  for (let id = ready.shift(); id !== undefined; id = ready.shift()) {
    order.push(id);
    for (const edge of graph.outgoing.get(id) ?? []) {
      const left = (remaining.get(edge.to) ?? 0) - 1;
      remaining.set(edge.to, left);
      if (left === 0) ready.push(edge.to);
    }
  }
  const placed = new Set(order);
  return { order, cyclic: [...graph.nodes.keys()].filter((id) => !placed.has(id)) };
}

/** One cycle among `candidates` (nodes a topological sort could not place), as the node ids around it. */
export function findCycle(graph: Graph, candidates: readonly string[]): string[] {
  const inCandidates = new Set(candidates);
  const start = candidates[0];
  if (start === undefined) return [];
  // Every candidate has a parent among the candidates (else it would have been placed): walking parents loops.
  const seen = new Map<string, number>();
  const path: string[] = [];
  let id: string | undefined = start;
  while (id !== undefined && !seen.has(id)) {
    seen.set(id, path.length);
    path.push(id);
    id = (graph.incoming.get(id) ?? []).map((e) => e.from).find((p) => inCandidates.has(p));
  }
  return id === undefined ? path : path.slice(seen.get(id)).reverse();
}

/** Every node that runs before `id`: its parents, their parents, and so on. */
export function ancestorsOf(graph: Graph, id: string): Set<string> {
  const found = new Set<string>();
  const stack = (graph.incoming.get(id) ?? []).map((e) => e.from);
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (found.has(next)) continue;
    found.add(next);
    for (const edge of graph.incoming.get(next) ?? []) stack.push(edge.from);
  }
  return found;
}

/** `id` and every node that runs after it. */
export function descendantsOf(graph: Graph, id: string): Set<string> {
  const found = new Set<string>();
  const stack = [id];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (found.has(next)) continue;
    found.add(next);
    for (const edge of graph.outgoing.get(next) ?? []) stack.push(edge.to);
  }
  return found;
}
