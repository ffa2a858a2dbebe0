import type {
  WorkflowApproval,
  WorkflowApprovalInput,
  WorkflowNodeStatus,
  WorkflowNodeType,
  WorkflowRun,
  WorkflowRunSource,
  WorkflowRunStatus,
  WorkflowRunSummary,
} from '@signalbox/contracts';
import type { Db } from '../../db';
import { parseJsonObject } from '../../db/values';
import { approvalInputs } from './engine/approval-inputs';
import { loadRunState } from './engine/run-state';
import { type ApprovalRow, approvalsOf, type NodeRow, nodesOf, type RunRow, userNames } from './runs.store';
import { definitionOf } from './workflows.store';

/** How a secret answer is shown. */
export const MASK = '**********';

function nodeView(
  row: NodeRow,
  approvals: ApprovalRow[],
  required: number | null,
  inputs: WorkflowApprovalInput[] | null = null,
) {
  const given =
    row.type === 'approval'
      ? approvals.filter(
          (a) => a.node_id === row.node_id && a.decision === 'approved' && a.digest === row.input_digest,
        ).length
      : null;
  return {
    node_id: row.node_id,
    type: row.type as WorkflowNodeType,
    status: row.status as WorkflowNodeStatus,
    attempt: row.attempt,
    task_id: row.task_id,
    start: row.start,
    end: row.end,
    wait_until: row.wait_until,
    detail: row.detail,
    input_digest: row.type === 'approval' ? row.input_digest : null,
    approvals_required: row.type === 'approval' ? required : null,
    approvals_given: given,
    inputs: row.type === 'approval' ? inputs : null,
  };
}

function summary(
  run: RunRow,
  nodes: NodeRow[],
  approvals: ApprovalRow[],
  names: Map<number, string>,
  inputs: Map<string, WorkflowApprovalInput[]> = new Map(),
) {
  const definition = definitionOf(run.definition);
  const required = new Map(
    definition.nodes.flatMap((n) => (n.type === 'approval' ? [[n.id, n.required] as const] : [])),
  );
  return {
    id: run.id,
    project_id: run.project_id,
    workflow_id: run.workflow_id,
    workflow_name: run.workflow_name,
    status: run.status as WorkflowRunStatus,
    source: run.source as WorkflowRunSource,
    message: run.message,
    user_id: run.user_id,
    user_name: run.user_id ? (names.get(run.user_id) ?? null) : null,
    schedule_id: run.schedule_id,
    integration_id: run.integration_id,
    parent_run_id: run.parent_run_id,
    created: run.created,
    start: run.start,
    end: run.end,
    node_states: nodes.map((n) =>
      nodeView(n, approvals, required.get(n.node_id) ?? null, inputs.get(n.node_id) ?? null),
    ),
  };
}

/**
 * What the approvers of each approval node that asked for approval review: the values the template nodes after it
 * run with (secret ones masked).
 */
async function approvalInputsOf(db: Db, run: RunRow, nodes: NodeRow[]) {
  const asked = nodes.filter((n) => n.type === 'approval' && n.status !== 'pending');
  const inputs = new Map<string, WorkflowApprovalInput[]>();
  if (asked.length === 0) return inputs;
  const state = await loadRunState(db, run);
  for (const node of asked) inputs.set(node.node_id, await approvalInputs(db, state, node.node_id));
  return inputs;
}

/** A run as GET workflow-runs/{id} answers it; secret survey answers and secret inputs masked. */
export async function runView(db: Db, run: RunRow): Promise<WorkflowRun> {
  const nodes = await nodesOf(db, [run.id]);
  const approvals = await approvalsOf(db, run.id);
  const names = await userNames(db, [
    ...new Set([...(run.user_id ? [run.user_id] : []), ...approvals.map((a) => a.user_id)]),
  ]);
  const definition = definitionOf(run.definition);
  const secretNames = definition.survey_vars.filter((v) => v.type === 'secret').map((v) => v.name);
  const survey: Record<string, unknown> = parseJsonObject(run.survey);
  if (run.survey_secret) for (const name of secretNames) survey[name] = MASK;
  const approvalViews: WorkflowApproval[] = approvals.map((a) => {
    const node = nodes.find((n) => n.node_id === a.node_id);
    return {
      id: a.id,
      node_id: a.node_id,
      user_id: a.user_id,
      user_name: names.get(a.user_id) ?? null,
      decision: a.decision === 'rejected' ? 'rejected' : 'approved',
      reason: a.reason,
      digest: a.digest,
      valid: node?.input_digest === a.digest,
      created: a.created,
    };
  });
  return {
    ...summary(run, nodes, approvals, names, await approvalInputsOf(db, run, nodes)),
    survey,
    nodes: definition.nodes as WorkflowRun['nodes'],
    edges: definition.edges,
    approvals: approvalViews,
  };
}

/** Runs as the run list answers them. */
export async function runSummaries(db: Db, runs: RunRow[]): Promise<WorkflowRunSummary[]> {
  const nodes = await nodesOf(
    db,
    runs.map((r) => r.id),
  );
  const approvals = runs.length
    ? await db
        .selectFrom('workflow_approval')
        .selectAll()
        .where(
          'run_id',
          'in',
          runs.map((r) => r.id),
        )
        .execute()
    : [];
  const names = await userNames(db, [...new Set(runs.flatMap((r) => (r.user_id ? [r.user_id] : [])))]);
  return runs.map((r) =>
    summary(
      r,
      nodes.filter((n) => n.run_id === r.id),
      approvals.filter((a) => a.run_id === r.id),
      names,
    ),
  );
}
