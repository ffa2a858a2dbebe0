import {
  errorMessage,
  finishedWorkflowRunStatuses,
  isFinished,
  type WorkflowApprovalNode,
  type WorkflowNode,
  type WorkflowTemplateNode,
} from '@signalbox/contracts';
import { now } from '../../../db/values';
import type { Deps } from '../../../deps';
import { AppError } from '../../../lib/errors';
import { interruptedMessage, runnerGoneMessage, shutdownMessage } from '../../../tasks/queue/instances';
import { activeRunStatuses, approvalsOf, casNode, casRun, findRunById, type NodeRow } from '../runs.store';
import { approvalDigest, NodeInputError, templateNodeTask } from './inputs';
import { alertApprovers, publishRun, recordRunEvent } from './notify';
import { edgeHolds, isNodeFinished, loadRunState, type RunState, runStatusOf } from './run-state';
import { delayEnd } from './wait-time';

export type EngineDeps = Deps;

/** Messages of tasks the server itself cut short (restart, shutdown, a lost runner): their node starts again. */
const interruptions = new Set([interruptedMessage, shutdownMessage, runnerGoneMessage]);
/** How many times a node whose task the server interrupted is started in all. */
const MAX_ATTEMPTS = 3;

/** Raised inside a task's transaction when its node was started meanwhile: nothing of the task is stored. */
class NodeTaken extends Error {}

/**
 * Moves a run on as far as it can now: finished tasks, delays and approvals end their nodes, nodes whose parents
 * have all ended start or are skipped, and the run's status follows. Every step is a conditional update of the
 * node's row (a claim), so instances advancing the same run at once never act twice on a node; a step another
 * instance took first is simply skipped. Safe to call at any time, as often as wanted.
 */
export async function advanceRun(deps: EngineDeps, runId: number): Promise<void> {
  for (let pass = 0; pass < 20; pass++) {
    const run = await findRunById(deps.db, runId);
    if (!run || !(activeRunStatuses as readonly string[]).includes(run.status)) return;
    const state = await loadRunState(deps.db, run);
    let changed = false;
    for (const id of state.order) {
      const node = state.graph.nodes.get(id);
      const row = state.nodes.get(id);
      if (!node || !row) continue;
      if (await stepNode(deps, state, node, row)) changed = true;
    }
    const after = await loadRunState(deps.db, run);
    await settleRun(deps, after);
    if (!changed) return;
  }
}

async function stepNode(
  deps: EngineDeps,
  state: RunState,
  node: WorkflowNode,
  row: NodeRow,
): Promise<boolean> {
  if (row.status === 'pending') return startIfReady(deps, state, node, row);
  if (row.status === 'running' && node.type === 'template') return endTemplateNode(deps, state, row);
  if (row.status === 'running' && node.type === 'delay') return endDelay(deps, state, row);
  if (row.status === 'waiting_approval' && node.type === 'approval')
    return checkApproval(deps, state, node, row);
  return false;
}

async function startIfReady(deps: EngineDeps, state: RunState, node: WorkflowNode, row: NodeRow) {
  const incoming = state.graph.incoming.get(node.id) ?? [];
  const parents = incoming.map((e) => state.nodes.get(e.from)?.status ?? 'pending');
  if (!parents.every(isNodeFinished)) return false;
  const from = { status: 'pending', attempt: row.attempt };
  if (!incoming.every((edge, i) => edgeHolds(edge, parents[i] ?? ''))) {
    return casNode(deps.db, state.run.id, node.id, from, { status: 'skipped', end: now() });
  }
  if (node.type === 'template') return startTemplateNode(deps, state, node, row);
  if (node.type === 'delay') {
    const until = delayEnd(node, new Date()).toISOString();
    return casNode(deps.db, state.run.id, node.id, from, {
      status: 'running',
      attempt: row.attempt + 1,
      start: now(),
      end: null,
      detail: null,
      wait_until: until,
    });
  }
  return requestApproval(deps, state, node, row);
}

async function startTemplateNode(
  deps: EngineDeps,
  state: RunState,
  node: WorkflowTemplateNode,
  row: NodeRow,
) {
  const { run } = state;
  const from = { status: 'pending', attempt: row.attempt };
  try {
    const input = await templateNodeTask(deps.db, state, deps.box, node);
    // A run an AI agent started starts its tasks as the agent's: they wait for approval as the project says.
    const token =
      run.source === 'mcp' && run.source_token
        ? await deps.db
            .selectFrom('api_token')
            .select(['id', 'name'])
            .where('id', '=', run.source_token)
            .executeTakeFirst()
        : undefined;
    await deps.startTask(run.project_id, input, {
      userId: run.user_id,
      source: run.source === 'mcp' ? 'mcp' : 'workflow',
      token: run.source === 'mcp' ? (token ?? { id: run.source_token ?? '', name: 'a deleted token' }) : null,
      workflow: {
        runId: run.id,
        nodeId: node.id,
        // The node's claim, in the transaction that stores the task: the task exists exactly when the node names it.
        claim: async (trx, taskId) => {
          const claimed = await casNode(trx, run.id, node.id, from, {
            status: 'running',
            attempt: row.attempt + 1,
            task_id: taskId,
            start: now(),
            end: null,
            detail: null,
            wait_until: null,
          });
          if (!claimed) throw new NodeTaken();
        },
      },
    });
    return true;
  } catch (err) {
    if (err instanceof NodeTaken) return false;
    const detail =
      err instanceof NodeInputError
        ? errorMessage(err.error)
        : err instanceof AppError
          ? err.message
          : 'The task could not be started';
    if (!(err instanceof NodeInputError || err instanceof AppError))
      deps.log.error({ err, runId: run.id, nodeId: node.id }, 'workflow node could not start its task');
    return casNode(deps.db, run.id, node.id, from, {
      status: 'failed',
      attempt: row.attempt + 1,
      start: now(),
      end: now(),
      detail: detail.slice(0, 1000),
    });
  }
}

async function endTemplateNode(deps: EngineDeps, state: RunState, row: NodeRow) {
  const task = row.task_id ? state.tasks.get(row.task_id) : undefined;
  const from = { status: 'running', attempt: row.attempt };
  if (!task)
    return casNode(deps.db, state.run.id, row.node_id, from, {
      status: 'failed',
      end: now(),
      detail: 'Its task no longer exists',
    });
  if (!isFinished(task.status)) return false;
  if (task.status === 'error' && interruptions.has(task.message) && row.attempt < MAX_ATTEMPTS) {
    // The server cut the task short (it did not end on its own): the node starts again with a new task.
    return casNode(deps.db, state.run.id, row.node_id, from, {
      status: 'pending',
      detail: `Task ${task.id}: ${task.message}; started again`,
    });
  }
  return casNode(deps.db, state.run.id, row.node_id, from, {
    status: task.status === 'success' ? 'success' : task.status === 'stopped' ? 'stopped' : 'failed',
    end: task.end ?? now(),
    detail: task.status === 'success' ? null : `Task ${task.id} ended ${task.status}`,
  });
}

async function endDelay(deps: EngineDeps, state: RunState, row: NodeRow) {
  const at = now();
  if (!row.wait_until || row.wait_until > at) return false;
  return casNode(
    deps.db,
    state.run.id,
    row.node_id,
    { status: 'running', attempt: row.attempt, waitDue: at },
    { status: 'success', end: at },
  );
}

async function requestApproval(deps: EngineDeps, state: RunState, node: WorkflowApprovalNode, row: NodeRow) {
  const { run } = state;
  const digest = approvalDigest(state, node.id, deps.box);
  const start = new Date();
  const claimed = await casNode(
    deps.db,
    run.id,
    node.id,
    { status: 'pending', attempt: row.attempt },
    {
      status: 'waiting_approval',
      attempt: row.attempt + 1,
      start: start.toISOString(),
      end: null,
      detail: null,
      input_digest: digest,
      wait_until: node.timeout_seconds
        ? new Date(start.getTime() + node.timeout_seconds * 1000).toISOString()
        : null,
    },
  );
  if (!claimed) return false;
  // Only the instance whose claim moved the node tells the approvers.
  await recordRunEvent(
    deps.db,
    run,
    null,
    'workflow.approval_requested',
    `Workflow run ${run.id} of ${run.workflow_name}: node ${node.id} waits for approval`,
    { node: node.id },
  );
  void alertApprovers(deps, run, node);
  return true;
}

/** The approvals that count for a node: approvals of the inputs it waits with now. */
export async function validApprovals(deps: Pick<EngineDeps, 'db'>, runId: number, row: NodeRow) {
  const all = await approvalsOf(deps.db, runId);
  return all.filter(
    (a) => a.node_id === row.node_id && a.digest === row.input_digest && a.decision === 'approved',
  );
}

async function checkApproval(deps: EngineDeps, state: RunState, node: WorkflowApprovalNode, row: NodeRow) {
  const { run } = state;
  const from = { status: 'waiting_approval', attempt: row.attempt };
  const given = await validApprovals(deps, run.id, row);
  if (given.length >= node.required) {
    const ok = await casNode(deps.db, run.id, node.id, from, { status: 'success', end: now() });
    if (ok) observeWait(deps, row, 'approved');
    return ok;
  }
  const at = now();
  if (!row.wait_until || row.wait_until > at) return false;
  const outcome = node.on_timeout === 'skip' ? 'skipped' : 'failed';
  const timedOut = await casNode(
    deps.db,
    run.id,
    node.id,
    { ...from, waitDue: at },
    { status: outcome, end: at, detail: `Nobody decided within ${node.timeout_seconds} s` },
  );
  if (!timedOut) return false;
  // The timeout fires once: the instance whose update moved the node records it.
  observeWait(deps, row, 'timed_out');
  await recordRunEvent(
    deps.db,
    run,
    null,
    'workflow.approval_timed_out',
    `Workflow run ${run.id} of ${run.workflow_name}: approval of node ${node.id} timed out (${outcome === 'skipped' ? 'skipped' : 'failed'})`,
    { node: node.id, outcome },
  );
  return true;
}

export function observeWait(deps: Pick<EngineDeps, 'metrics'>, row: NodeRow, outcome: string) {
  if (!row.start) return;
  const seconds = (Date.now() - new Date(row.start).getTime()) / 1000;
  deps.metrics.workflowApprovalWait.observe({ outcome }, Math.max(0, seconds));
}

/** Saves the run's status as its nodes make it, once (a conditional update), and says so. */
async function settleRun(deps: EngineDeps, state: RunState) {
  const { run } = state;
  const status = runStatusOf(state);
  if (status === run.status) return;
  const finished = (finishedWorkflowRunStatuses as readonly string[]).includes(status);
  const at = now();
  const moved = await casRun(deps.db, run.id, [run.status], {
    status,
    ...(run.start ? {} : { start: at }),
    ...(finished ? { end: at } : {}),
  });
  if (!moved) return;
  publishRun(deps, run, status);
  if (finished) {
    deps.metrics.workflowRunsFinished.inc({ status });
    await recordRunEvent(
      deps.db,
      run,
      null,
      'workflow_run.finished',
      `Workflow run ${run.id} of ${run.workflow_name} ended ${status}`,
      { status },
    );
  }
}
