import type { WorkflowEdge, WorkflowNode, WorkflowRun } from '@signalbox/contracts';
import type { TFunction } from 'i18next';

/** The one line a node's card says about it: the template it runs, the approvals it needs, how long it waits. */
export function nodeDetail(
  node: WorkflowNode | WorkflowRun['nodes'][number],
  templateName: (id: number) => string | undefined,
  t: TFunction,
) {
  if (node.type === 'template') return templateName(node.template_id) ?? t('wf.detail.noTemplate');
  if (node.type === 'approval') return t('wf.detail.approval', { count: node.required });
  if (node.time_of_day) return t('wf.detail.until', { time: node.time_of_day, zone: node.timezone });
  return t('wf.detail.wait', { duration: waitText(node.seconds ?? 0) });
}

/** Seconds as the largest whole units: 90 → "1 min 30 s", 7200 → "2 h". */
export function waitText(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const parts = [h ? `${h} h` : '', m ? `${m} min` : '', s || (!h && !m) ? `${s} s` : ''];
  return parts.filter(Boolean).join(' ');
}

/** The nodes in an order they can run in (parents first; ties and leftovers in the definition's order). */
export function runOrder<N extends { id: string }>(nodes: readonly N[], edges: readonly WorkflowEdge[]): N[] {
  const indegree = new Map(nodes.map((n) => [n.id, 0]));
  for (const e of edges) if (indegree.has(e.to)) indegree.set(e.to, (indegree.get(e.to) ?? 0) + 1);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const out: N[] = [];
  const ready = nodes.filter((n) => indegree.get(n.id) === 0).map((n) => n.id);
  while (ready.length > 0) {
    const id = ready.shift() as string;
    out.push(byId.get(id) as N);
    for (const e of edges)
      if (e.from === id && indegree.has(e.to)) {
        const left = (indegree.get(e.to) ?? 0) - 1;
        indegree.set(e.to, left);
        if (left === 0) ready.push(e.to);
      }
  }
  // A loop (not saved yet) leaves nodes out: they follow in the definition's order.
  return [...out, ...nodes.filter((n) => !out.includes(n))];
}
