import type { WorkflowApprovalNode } from '@signalbox/contracts';
import { alertWorkflowApproval } from '../../../alerts/alerts';
import { recordEvent } from '../../../audit/audit.store';
import type { Db } from '../../../db';
import type { Deps } from '../../../deps';
import type { RunRow } from '../runs.store';

/** Says on the bus (every instance, with Redis) that a run changed: consoles re-read it. */
export function publishRun(deps: Pick<Deps, 'bus'>, run: RunRow, status: string) {
  deps.bus.emit('workflowRun', {
    type: 'workflow_run',
    project_id: run.project_id,
    workflow_id: run.workflow_id,
    run_id: run.id,
    status,
  });
  deps.bus.emit('projectChanged', { projectId: run.project_id });
}

/** An audit event of a run (its object is the run). */
export function recordRunEvent(
  db: Db,
  run: RunRow,
  userId: number | null,
  kind: string,
  description: string,
  params: Record<string, string | number | null> = {},
) {
  return recordEvent(db, {
    project_id: run.project_id,
    user_id: userId,
    object_type: 'workflow_run',
    object_id: run.id,
    description,
    kind,
    params: { run_id: run.id, workflow: run.workflow_name, ...params },
  });
}

/** Tells the project's alert channels that an approval node waits (failures are logged, never thrown). */
export async function alertApprovers(deps: Deps, run: RunRow, node: WorkflowApprovalNode) {
  let author = '';
  if (run.user_id) {
    const user = await deps.db
      .selectFrom('user')
      .select('name')
      .where('id', '=', run.user_id)
      .executeTakeFirst();
    author = user?.name ?? '';
  }
  try {
    await alertWorkflowApproval(deps, {
      projectId: run.project_id,
      runId: run.id,
      workflowName: run.workflow_name,
      nodeName: node.name || node.id,
      note: node.message,
      author: author || run.source,
    });
  } catch (err) {
    deps.log.warn({ err, runId: run.id }, 'workflow approval alert failed');
  }
}
