import { coded, type WorkflowApprovalNode } from '@signalbox/contracts';
import { transaction } from '../../db/transaction';
import { isUniqueViolation, now } from '../../db/values';
import type { Deps } from '../../deps';
import { AppError, conflict, forbidden } from '../../lib/errors';
import { observeWait } from './engine/advance';
import { publishRun, recordRunEvent } from './engine/notify';
import { advanceQuietly, requireRun } from './runs.service';
import { casNode, nodesOf, type RunRow, roleIn } from './runs.store';
import { definitionOf } from './workflows.store';

/** Who answers: the signed-in user (through a session or an API token). */
export type Answerer = { userId: number };

/**
 * Whether a user may answer an approval node: a member of the run's own project whose role the node names, or a
 * member the node names; never the person who started the run unless the node allows it. The project is the run's,
 * read from the run itself (the request's path only found it).
 */
export async function mayApprove(
  deps: Pick<Deps, 'db'>,
  run: Pick<RunRow, 'project_id' | 'user_id'>,
  node: WorkflowApprovalNode,
  userId: number,
): Promise<'yes' | 'not_approver' | 'self'> {
  const role = await roleIn(deps.db, run.project_id, userId);
  if (role === null) return 'not_approver';
  if (!(node.roles as string[]).includes(role) && !node.user_ids.includes(userId)) return 'not_approver';
  if (run.user_id === userId && !node.allow_self_approval) return 'self';
  return 'yes';
}

async function waitingNode(deps: Deps, projectId: number, runId: number, nodeId: string, by: Answerer) {
  const run = await requireRun(deps, projectId, runId);
  const node = definitionOf(run.definition).nodes.find((n) => n.id === nodeId);
  if (node?.type !== 'approval') throw new AppError(404, coded('workflow_node_unknown', { node: nodeId }));
  const verdict = await mayApprove(deps, run, node, by.userId);
  if (verdict === 'not_approver') throw forbidden(coded('workflow_not_approver', { node: nodeId }));
  if (verdict === 'self') throw forbidden(coded('workflow_self_approval', { node: nodeId }));
  const row = (await nodesOf(deps.db, [run.id])).find((n) => n.node_id === nodeId);
  if (row?.status !== 'waiting_approval' || !row.input_digest)
    throw conflict(coded('workflow_node_not_waiting_approval', { node: nodeId }));
  return { run, node, row, digest: row.input_digest };
}

/** Stores one person's answer once (a second answer to the same inputs is refused, also across instances). */
async function recordAnswer(
  deps: Deps,
  run: RunRow,
  nodeId: string,
  by: Answerer,
  answer: { decision: 'approved' | 'rejected'; reason: string; digest: string },
) {
  const exists = await deps.db
    .selectFrom('workflow_approval')
    .select('id')
    .where('run_id', '=', run.id)
    .where('node_id', '=', nodeId)
    .where('user_id', '=', by.userId)
    .where('digest', '=', answer.digest)
    .executeTakeFirst();
  if (exists) throw conflict(coded('workflow_already_answered', { node: nodeId }));
  try {
    await transaction(deps.db, async (trx) => {
      await trx
        .insertInto('workflow_approval')
        .values({
          run_id: run.id,
          project_id: run.project_id,
          node_id: nodeId,
          user_id: by.userId,
          decision: answer.decision,
          reason: answer.reason,
          digest: answer.digest,
          created: now(),
        })
        .execute();
      await recordRunEvent(
        trx,
        run,
        by.userId,
        answer.decision === 'approved' ? 'workflow.approved' : 'workflow.rejected',
        answer.decision === 'approved'
          ? `Workflow run ${run.id} of ${run.workflow_name}: node ${nodeId} approved`
          : `Workflow run ${run.id} of ${run.workflow_name}: node ${nodeId} rejected: ${answer.reason}`,
        { node: nodeId, ...(answer.decision === 'rejected' ? { reason: answer.reason } : {}) },
      );
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(coded('workflow_already_answered', { node: nodeId }));
    throw err;
  }
}

/**
 * Approves a node for the inputs the approver reviewed (`digest`): refused when the inputs changed since (409), when
 * the user may not approve it (403) or answered it already. Once enough approvals of the current inputs are in,
 * the node succeeds and the run moves on.
 */
export async function approveNode(
  deps: Deps,
  by: Answerer,
  projectId: number,
  runId: number,
  nodeId: string,
  input: { digest: string; reason: string },
) {
  const { run, digest } = await waitingNode(deps, projectId, runId, nodeId, by);
  if (input.digest !== digest) throw conflict(coded('workflow_approval_inputs_changed', { node: nodeId }));
  await recordAnswer(deps, run, nodeId, by, { decision: 'approved', reason: input.reason, digest });
  publishRun(deps, run, run.status);
  await advanceQuietly(deps, run.id);
}

/** Rejects a node with a reason: it ends `rejected` (its failure edges are taken) and the run moves on. */
export async function rejectNode(
  deps: Deps,
  by: Answerer,
  projectId: number,
  runId: number,
  nodeId: string,
  reason: string,
) {
  const { run, row, digest } = await waitingNode(deps, projectId, runId, nodeId, by);
  await recordAnswer(deps, run, nodeId, by, { decision: 'rejected', reason, digest });
  const ended = await casNode(
    deps.db,
    run.id,
    nodeId,
    { status: 'waiting_approval', attempt: row.attempt },
    { status: 'rejected', end: now(), detail: `Rejected: ${reason}`.slice(0, 1000) },
  );
  if (ended) observeWait(deps, row, 'rejected');
  publishRun(deps, run, run.status);
  await advanceQuietly(deps, run.id);
}
