import { useState } from 'react';
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

const readHidden = (): OptionalColumn[] => {
  try {
    const parsed: unknown = JSON.parse(readLocal(columnsPrefKey) ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((c) => optionalColumns.includes(c)) : [];
  } catch {
    return [];
  }
};

/** Column visibility of the templates table, remembered locally. */
export function useColumns() {
  const [hidden, setHidden] = useState<OptionalColumn[]>(readHidden);
  const toggle = (column: OptionalColumn, visible: boolean) => {
    const next = visible ? hidden.filter((c) => c !== column) : [...hidden, column];
    setHidden(next);
    writeLocal(columnsPrefKey, JSON.stringify(next));
  };
  return { visible: (c: OptionalColumn) => !hidden.includes(c), toggle };
}
