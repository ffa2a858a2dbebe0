import type { PlanAction, PlanResourceChange } from '@signalbox/contracts';

/** The groups a plan is shown in, most dangerous first; no-op changes are not listed. */
export const shownActions = ['delete', 'replace', 'update', 'create', 'read'] as const satisfies PlanAction[];
export type ShownAction = (typeof shownActions)[number];

/** Destroying changes (delete, replace) are shown in red. */
export const isDestructive = (action: string) => action === 'delete' || action === 'replace';

/** Terraform's own mark of each action in a plan: `+` create, `~` update, `-` delete, `-/+` or `+/-` replace. */
export function actionSymbol(change: Pick<PlanResourceChange, 'action' | 'actions'>): string {
  switch (change.action) {
    case 'create':
      return '+';
    case 'update':
      return '~';
    case 'delete':
      return '-';
    case 'replace':
      return change.actions[0] === 'create' ? '+/-' : '-/+';
    case 'read':
      return '<=';
    default:
      return ' ';
  }
}

/** The changes whose address holds `query` (any case; all when empty), grouped by action in `shownActions` order. */
export function groupPlanChanges(
  changes: readonly PlanResourceChange[],
  query: string,
): { action: ShownAction; changes: PlanResourceChange[] }[] {
  const needle = query.trim().toLowerCase();
  const groups = new Map<string, PlanResourceChange[]>();
  for (const change of changes) {
    if (needle && !change.address.toLowerCase().includes(needle)) continue;
    const list = groups.get(change.action) ?? [];
    list.push(change);
    groups.set(change.action, list);
  }
  return shownActions.flatMap((action) => {
    const list = groups.get(action);
    return list?.length ? [{ action, changes: list }] : [];
  });
}
