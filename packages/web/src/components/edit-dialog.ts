import { useState } from 'react';

/** Which item a page's edit dialog shows: none (closed), a new one (`item` null), or an existing one. */
export function useEditDialog<T>() {
  const [editing, setEditing] = useState<T | 'new' | null>(null);
  return {
    open: editing !== null,
    item: editing === 'new' || editing === null ? null : editing,
    startNew: () => setEditing('new'),
    edit: (item: T) => setEditing(item),
    close: () => setEditing(null),
  };
}
