import { describe, expect, it } from 'vitest';
import { avatarColor, avatarColors, initials } from './avatar';

describe('project avatar', () => {
  it('takes initials from the first two words', () => {
    expect(initials('demo project one')).toBe('DP');
    expect(initials('  Ops  ')).toBe('O');
    expect(initials('')).toBe('?');
  });
  it("takes the colour from the project's id, so adding projects changes no colour", () => {
    expect([1, 2, 3, 4, 5].map(avatarColor)).toEqual([...avatarColors, avatarColors[0]]);
  });
});
