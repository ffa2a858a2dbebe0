/** Project avatar colours: red, blue, orange, green. */
export const avatarColors = ['#e53935', '#1e88e5', '#fb8c00', '#43a047'] as const;

/**
 * A project's avatar colour, from its id: it stays the same wherever the project is listed and whatever projects
 * are added or removed. Consecutive ids cycle red, blue, orange, green.
 */
export const avatarColor = (projectId: number) => avatarColors[(((projectId - 1) % 4) + 4) % 4];

/** Initials from the first two words of the name. */
export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean).slice(0, 2);
  return words.map((w) => Array.from(w)[0]?.toUpperCase() ?? '').join('') || '?';
}
