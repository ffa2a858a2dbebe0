import { describe, expect, it } from 'vitest';
import { layoutGraph, NODE_WIDTH } from './layout';

describe('layoutGraph', () => {
  it('places nodes left to right along the edges, parallel branches apart', () => {
    const at = layoutGraph(
      [{ id: 'build' }, { id: 'a' }, { id: 'b' }, { id: 'smoke' }],
      [
        { from: 'build', to: 'a' },
        { from: 'build', to: 'b' },
        { from: 'a', to: 'smoke' },
        { from: 'b', to: 'smoke' },
      ],
    );
    const x = (id: string) => at.get(id)?.x ?? Number.NaN;
    expect(x('a')).toBeGreaterThanOrEqual(x('build') + NODE_WIDTH);
    expect(x('smoke')).toBeGreaterThanOrEqual(x('a') + NODE_WIDTH);
    expect(x('a')).toBe(x('b'));
    expect(at.get('a')?.y).not.toBe(at.get('b')?.y);
  });

  it('ignores an edge naming a node the graph does not have', () => {
    const at = layoutGraph([{ id: 'only' }], [{ from: 'only', to: 'gone' }]);
    expect([...at.keys()]).toEqual(['only']);
  });
});
