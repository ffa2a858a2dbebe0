import dagre from '@dagrejs/dagre';

/** The size every node is drawn at; the layout places them by it. */
export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 76;

/**
 * Where each node goes, top to bottom in the order the edges run (dagre's layered layout): a node's top-left
 * corner by its id. The graph is small (at most 200 nodes), so it is laid out again whenever it changes.
 */
export function layoutGraph(
  nodes: readonly { id: string }[],
  edges: readonly { from: string; to: string }[],
): Map<string, { x: number; y: number }> {
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: 'TB', nodesep: 32, ranksep: 56, marginx: 8, marginy: 8 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) graph.setNode(n.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const e of edges) if (graph.hasNode(e.from) && graph.hasNode(e.to)) graph.setEdge(e.from, e.to);
  dagre.layout(graph);
  const placed = new Map<string, { x: number; y: number }>();
  for (const n of nodes) {
    const at = graph.node(n.id) as { x: number; y: number } | undefined;
    placed.set(n.id, { x: (at?.x ?? 0) - NODE_WIDTH / 2, y: (at?.y ?? 0) - NODE_HEIGHT / 2 });
  }
  return placed;
}
