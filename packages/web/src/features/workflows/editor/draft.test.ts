import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../api/client';
import {
  addNode,
  bodyOf,
  connect,
  connectProblem,
  type Draft,
  emptyDraft,
  freeNodeId,
  newNode,
  removeNode,
} from './draft';
import { edgeKey, placeErrors } from './errors';

/** build → deploy-a, build → deploy-b: the start of the release flow. */
function releaseDraft(): Draft {
  let d = addNode(emptyDraft, newNode('build', 'template', 7));
  d = addNode(d, newNode('deploy-a', 'template', 8), 'build');
  return addNode(d, newNode('deploy-b', 'template', 8), 'build');
}

describe('the editor draft', () => {
  it('adds a node after the selected one, connected on success, with the first free id of its kind', () => {
    const d = releaseDraft();
    expect(d.edges).toEqual([
      { from: 'build', to: 'deploy-a', condition: 'success' },
      { from: 'build', to: 'deploy-b', condition: 'success' },
    ]);
    expect(freeNodeId(d, 'approval')).toBe('approval-1');
    const withApproval = addNode(d, newNode('approval-1', 'approval'));
    expect(freeNodeId(withApproval, 'approval')).toBe('approval-2');
    expect(withApproval.edges).toHaveLength(2);
  });

  it('refuses an edge to the node itself, a repeated edge and one closing a loop', () => {
    const d = releaseDraft();
    expect(connectProblem(d, 'build', 'build')).toBe('self');
    expect(connectProblem(d, 'build', 'deploy-a')).toBe('repeated');
    expect(connect(d, 'deploy-a', 'build')).toBe('cycle');
    const joined = connect(d, 'deploy-a', 'deploy-b', 'always');
    expect(typeof joined).toBe('object');
    expect(connect(joined as Draft, 'deploy-b', 'build')).toBe('cycle');
  });

  it('removes a node with its edges, and sends nodes without positions', () => {
    const d = removeNode(releaseDraft(), 'build');
    expect(d.nodes.map((n) => n.id)).toEqual(['deploy-a', 'deploy-b']);
    expect(d.edges).toEqual([]);
    expect(bodyOf(releaseDraft()).nodes.every((n) => n.position === null)).toBe(true);
  });

  it('gives new nodes the defaults the server takes: two roles, one approval, no self-approval, fail on timeout', () => {
    expect(newNode('approve', 'approval')).toMatchObject({
      roles: ['owner', 'manager'],
      required: 1,
      allow_self_approval: false,
      on_timeout: 'fail',
      timeout_seconds: null,
    });
    expect(newNode('wait', 'delay')).toMatchObject({ seconds: 60, time_of_day: null, timezone: 'UTC' });
  });
});

describe('placing the server refusal of a workflow', () => {
  const refusal = (
    field_errors: Record<string, { code: string; params?: Record<string, string | number> }>,
  ) => new ApiError(400, 'refused', { error: 'refused', code: 'invalid_value', field_errors } as never);
  const nodes = ['build', 'approve', 'wait'];
  const edges = [
    { from: 'build', to: 'approve' },
    { from: 'approve', to: 'wait' },
  ];

  it('puts a field error of nodes.N at that node and field, and of edges.N at that edge', () => {
    const placed = placeErrors(
      refusal({
        'nodes.2.seconds': { code: 'too_large', params: { field: 'seconds', max: 2592000 } },
        'edges.1.condition': {
          code: 'workflow_edge_condition',
          params: { field: 'condition', options: 'x' },
        },
      }),
      nodes,
      edges,
    );
    expect(placed.nodes.get('wait')).toEqual([
      { field: 'seconds', error: { code: 'too_large', params: { field: 'seconds', max: 2592000 } } },
    ]);
    expect(placed.edges.get(edgeKey('approve', 'wait'))?.code).toBe('workflow_edge_condition');
  });

  it('puts a graph check at the node or edge its params name, and keeps a cycle general', () => {
    const placed = placeErrors(
      refusal({
        nodes: { code: 'workflow_approval_no_approvers', params: { node: 'approve' } },
      }),
      nodes,
      edges,
    );
    expect(placed.nodes.get('approve')?.[0]).toMatchObject({ field: null });
    const edge = placeErrors(
      refusal({ edges: { code: 'workflow_condition_never', params: { from: 'approve', to: 'wait' } } }),
      nodes,
      edges,
    );
    expect([...edge.edges.keys()]).toEqual([edgeKey('approve', 'wait')]);
    const cycle = placeErrors(
      refusal({ edges: { code: 'workflow_cycle', params: { nodes: 'a → b → a' } } }),
      nodes,
      edges,
    );
    expect(cycle.other.map((e) => e.code)).toEqual(['workflow_cycle']);
  });

  it('puts a taken name at the name field', () => {
    const placed = placeErrors(refusal({ name: { code: 'workflow_name_taken' } }), nodes, edges);
    expect(placed.fields.get('name')?.code).toBe('workflow_name_taken');
  });
});
