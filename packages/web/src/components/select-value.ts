import type { ReactNode } from 'react';

/** One choice of a SelectField: the value the form keeps, and what the menu shows for it. */
export type SelectOption = { value: string | number; label: ReactNode; disabled?: boolean };

/** The choices for a list of named objects (keys, templates, …), each kept as its id. */
export function idOptions(items: readonly { id: number; name: string }[]): SelectOption[] {
  return items.map((item) => ({ value: item.id, label: item.name }));
}

/**
 * What the select shows for the form's value: the matching option's value, else '' (the empty "none" row, or
 * nothing picked). A value no option has — null, the 0 a new form starts with, an id whose list is still
 * loading or was deleted — shows as empty instead of MUI warning about an out-of-range value.
 */
export function shownValue(options: readonly SelectOption[], value: unknown): string | number {
  return options.find((o) => sameValue(o.value, value))?.value ?? '';
}

/**
 * The form value for what the select gave back: the picked option's own value, so a number id stays a number
 * even when the input hands back text; anything else (the "none" row) is null.
 */
export function pickedValue(options: readonly SelectOption[], picked: unknown): string | number | null {
  return options.find((o) => sameValue(o.value, picked))?.value ?? null;
}

function sameValue(option: string | number, value: unknown) {
  return (typeof value === 'string' || typeof value === 'number') && String(option) === String(value);
}
