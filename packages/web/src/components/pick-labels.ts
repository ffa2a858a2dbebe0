import { useTranslation } from 'react-i18next';

/**
 * Option texts for a picker whose names may repeat (templates, integrations, projects): an option whose name
 * (trimmed, case-insensitive) no other option has keeps it; options sharing a name get a suffix that tells them
 * apart — their hint (a template's playbook, …) when it differs within the group, else `#<id>`.
 */
export function pickLabels<T extends { id: number; name: string }>(
  items: readonly T[],
  hint: (item: T) => string | null | undefined = () => undefined,
  format: (name: string, suffix: string) => string = (name, suffix) => `${name} (${suffix})`,
): Map<number, string> {
  const key = (item: T) => item.name.trim().toLowerCase();
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  const labels = new Map<number, string>();
  for (const group of groups.values()) {
    const hints = group.map((item) => hint(item)?.trim() ?? '');
    const hintsApart =
      hints.every((h) => h !== '') && new Set(hints.map((h) => h.toLowerCase())).size === group.length;
    group.forEach((item, i) => {
      const suffix = hintsApart ? hints[i] : `#${item.id}`;
      labels.set(item.id, group.length === 1 ? item.name : format(item.name, suffix ?? `#${item.id}`));
    });
  }
  return labels;
}

/** The items with their names replaced by their option texts (see pickLabels). */
export function withPickLabels<T extends { id: number; name: string }>(
  items: readonly T[],
  hint?: (item: T) => string | null | undefined,
  format?: (name: string, suffix: string) => string,
): T[] {
  const labels = pickLabels(items, hint, format);
  return items.map((item) => ({ ...item, name: labels.get(item.id) ?? item.name }));
}

/** withPickLabels with the suffix formatted in the current language. */
export function usePickLabels() {
  const { t } = useTranslation();
  return <T extends { id: number; name: string }>(
    items: readonly T[],
    hint?: (item: T) => string | null | undefined,
  ): T[] => withPickLabels(items, hint, (name, suffix) => t('dupNames.option', { name, suffix }));
}

/** A template's hint in a picker: its playbook (script, …). */
export const playbookHint = (item: { playbook?: string | null }) => item.playbook;
