import { useState } from 'react';
import { useSignedInUser } from '../../api/session';
import { columnsPrefKey, readLocal, writeLocal } from './api';

export const optionalColumns = [
  'version',
  'status',
  'lastTask',
  'playbook',
  'inventory',
  'environment',
  'repository',
] as const;
export type OptionalColumn = (typeof optionalColumns)[number];

/** The columns hidden until the user picks: the table then fits a 1280 px screen with room to spare. */
export const defaultHidden: readonly OptionalColumn[] = ['environment', 'repository'];

const readHidden = (key: string): OptionalColumn[] => {
  const stored = readLocal(key);
  if (stored === null) return [...defaultHidden];
  try {
    const parsed: unknown = JSON.parse(stored);
    return Array.isArray(parsed) ? parsed.filter((c) => optionalColumns.includes(c)) : [...defaultHidden];
  } catch {
    return [...defaultHidden];
  }
};

/** Column visibility of the templates table, remembered locally for each user. */
export function useColumns() {
  const key = columnsPrefKey(useSignedInUser().id);
  const [state, setState] = useState(() => ({ key, hidden: readHidden(key) }));
  // Another user signed in on this page: their own choice.
  const hidden = state.key === key ? state.hidden : readHidden(key);
  const toggle = (column: OptionalColumn, visible: boolean) => {
    const next = visible ? hidden.filter((c) => c !== column) : [...hidden, column];
    setState({ key, hidden: next });
    writeLocal(key, JSON.stringify(next));
  };
  return { visible: (c: OptionalColumn) => !hidden.includes(c), toggle };
}
