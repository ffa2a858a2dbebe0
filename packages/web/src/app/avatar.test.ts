import { describe, expect, it } from 'vitest';
import { avatarColor, avatarColors, initials } from './avatar';

describe('project avatar', () => {
  it('takes initials from the first two words', () => {
    expect(initials('demo project one')).toBe('DP');
    expect(initials('  Ops  ')).toBe('O');
    expect(initials('')).toBe('?');
  });
  it('cycles red, blue, orange, green', () => {
    expect([0, 1, 2, 3, 4].map(avatarColor)).toEqual([...avatarColors, avatarColors[0]]);
  });
});
