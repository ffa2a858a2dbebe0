import { finishedWorkflowRunStatuses, type WorkflowRun, type WorkflowRunNode } from '@signalbox/contracts';
import type { TFunction } from 'i18next';
import { formatDuration } from '../../../components/format';
import { nodeLabel } from '../editor/draft';
import { nodeDetail, runOrder } from '../graph/describe';
import type { GraphItem } from '../graph/GraphNode';

export const isFinished = (run: Pick<WorkflowRun, 'status'>) =>
  finishedWorkflowRunStatuses.includes(run.status);

/** The run's nodes as the graph and the list show them: status, and the time since start (or taken). */
export function runItems(
  run: WorkflowRun,
  templateName: (id: number) => string | undefined,
  t: TFunction,
  now: number,
): GraphItem[] {
  const states = new Map(run.node_states.map((s) => [s.node_id, s]));
  return runOrder(run.nodes, run.edges).map((n) => {
    const state = states.get(n.id);
    const status = state?.status ?? 'pending';
    return {
      id: n.id,
      title: nodeLabel(n),
      kind: n.type,
      detail: nodeDetail(n, templateName, t),
      status,
      statusLabel:
        status === 'waiting_approval' && state?.approvals_required
          ? t('wf.approval.waitingCount', {
              given: state.approvals_given ?? 0,
              required: state.approvals_required,
            })
          : t(`wf.status.${status}`),
      elapsed: state?.start ? formatDuration(state.start, state.end, now) : undefined,
    };
  });
}

/** Nodes a finished run may be re-run from: those that ended other than with success or a skip. */
export const rerunnable = (state: WorkflowRunNode) =>
  state.status === 'failed' || state.status === 'rejected' || state.status === 'stopped';
