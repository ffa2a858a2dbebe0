import { describe, expect, it } from 'vitest';
import { layoutGraph, NODE_HEIGHT } from './layout';

describe('layoutGraph', () => {
  it('places nodes top to bottom along the edges, parallel branches apart', () => {
    const at = layoutGraph(
      [{ id: 'build' }, { id: 'a' }, { id: 'b' }, { id: 'smoke' }],
      [
        { from: 'build', to: 'a' },
        { from: 'build', to: 'b' },
        { from: 'a', to: 'smoke' },
        { from: 'b', to: 'smoke' },
      ],
    );
    const y = (id: string) => at.get(id)?.y ?? Number.NaN;
    expect(y('a')).toBeGreaterThanOrEqual(y('build') + NODE_HEIGHT);
    expect(y('smoke')).toBeGreaterThanOrEqual(y('a') + NODE_HEIGHT);
    expect(y('a')).toBe(y('b'));
    expect(at.get('a')?.x).not.toBe(at.get('b')?.x);
  });

  it('ignores an edge naming a node the graph does not have', () => {
    const at = layoutGraph([{ id: 'only' }], [{ from: 'only', to: 'gone' }]);
    expect([...at.keys()]).toEqual(['only']);
  });
});
