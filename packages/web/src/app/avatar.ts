/** Project avatar colours cycle red, blue, orange, green. */
export const avatarColors = ['#e53935', '#1e88e5', '#fb8c00', '#43a047'] as const;

export const avatarColor = (index: number) => avatarColors[((index % 4) + 4) % 4];

/** Initials from the first two words of the name. */
export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean).slice(0, 2);
  return words.map((w) => Array.from(w)[0]?.toUpperCase() ?? '').join('') || '?';
}
