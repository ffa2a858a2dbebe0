import { type CodedMessage, isErrorCode } from '@signalbox/contracts';
import { ApiError } from '../../../api/client';

/** A refused field's error where the editor shows it: the field key within its node (null: the node as a whole). */
export type PlacedError = { field: string | null; error: CodedMessage };

/**
 * Where the server's 400 for a workflow points: at a node (`nodes.3.seconds`, or a graph check naming `node`),
 * at an edge (`edges.1.condition`, or a check naming `from` and `to`), or at a field of the workflow itself
 * (`name`, `survey_vars`). What names nothing the draft has stays in `other`.
 */
export type EditorErrors = {
  nodes: Map<string, PlacedError[]>;
  edges: Map<string, CodedMessage>;
  fields: Map<string, CodedMessage>;
  other: CodedMessage[];
};

export const edgeKey = (from: string, to: string) => `${from}→${to}`;

export const noErrors: EditorErrors = { nodes: new Map(), edges: new Map(), fields: new Map(), other: [] };

export function placeErrors(
  err: unknown,
  nodeIds: readonly string[],
  edges: readonly { from: string; to: string }[],
): EditorErrors {
  const placed: EditorErrors = { nodes: new Map(), edges: new Map(), fields: new Map(), other: [] };
  if (!(err instanceof ApiError)) return placed;
  const atNode = (id: string, field: string | null, error: CodedMessage) =>
    placed.nodes.set(id, [...(placed.nodes.get(id) ?? []), { field, error }]);
  const known = new Set(nodeIds);
  for (const [key, error] of Object.entries(err.body?.field_errors ?? {})) {
    if (!isErrorCode(error.code)) continue;
    const coded: CodedMessage = { code: error.code, params: error.params };
    const params = error.params ?? {};
    const indexed = /^(nodes|edges)\.(\d+)(?:\.([^.]+))?/.exec(key);
    if (indexed) {
      const index = Number(indexed[2]);
      if (indexed[1] === 'nodes' && nodeIds[index] !== undefined)
        atNode(nodeIds[index], indexed[3] ?? null, coded);
      else if (indexed[1] === 'edges' && edges[index])
        placed.edges.set(edgeKey(edges[index].from, edges[index].to), coded);
      else placed.other.push(coded);
      continue;
    }
    if (key === 'nodes' || key === 'edges') {
      const from = String(params.from ?? '');
      const to = String(params.to ?? '');
      const node = String(params.node ?? '');
      if (from && to && edges.some((e) => e.from === from && e.to === to))
        placed.edges.set(edgeKey(from, to), coded);
      else if (known.has(node)) atNode(node, null, coded);
      else placed.other.push(coded);
      continue;
    }
    placed.fields.set(key.split('.')[0] as string, coded);
  }
  // A refusal without field errors (a name taken, say) names the workflow's field or nothing.
  if (placed.nodes.size + placed.edges.size + placed.fields.size + placed.other.length === 0) {
    const code = err.body?.code;
    if (isErrorCode(code)) {
      const coded = { code, params: err.body?.params };
      if (code === 'workflow_name_taken') placed.fields.set('name', coded);
      else placed.other.push(coded);
    }
  }
  return placed;
}
