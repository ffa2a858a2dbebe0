import { describe, expect, it } from 'vitest';
import { runOrder, waitText } from './describe';

describe('waitText', () => {
  it('says a wait in its largest whole units', () => {
    expect(waitText(0)).toBe('0 s');
    expect(waitText(2)).toBe('2 s');
    expect(waitText(90)).toBe('1 min 30 s');
    expect(waitText(7200)).toBe('2 h');
    expect(waitText(3661)).toBe('1 h 1 min 1 s');
  });
});

describe('runOrder', () => {
  it('puts parents before children, keeping the definition order among peers', () => {
    const nodes = ['smoke', 'deploy-b', 'build', 'deploy-a'].map((id) => ({ id }));
    const edges = [
      { from: 'build', to: 'deploy-a', condition: 'success' as const },
      { from: 'build', to: 'deploy-b', condition: 'success' as const },
      { from: 'deploy-a', to: 'smoke', condition: 'success' as const },
      { from: 'deploy-b', to: 'smoke', condition: 'always' as const },
    ];
    expect(runOrder(nodes, edges).map((n) => n.id)).toEqual(['build', 'deploy-a', 'deploy-b', 'smoke']);
  });

  it('keeps nodes of a loop at the end instead of dropping them', () => {
    const nodes = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
    const edges = [
      { from: 'b', to: 'c', condition: 'success' as const },
      { from: 'c', to: 'b', condition: 'success' as const },
    ];
    expect(runOrder(nodes, edges).map((n) => n.id)).toEqual(['a', 'b', 'c']);
  });
});
