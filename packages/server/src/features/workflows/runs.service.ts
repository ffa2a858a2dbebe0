import {
  coded,
  finishedWorkflowRunStatuses,
  type WorkflowRunInput,
  type WorkflowRunSource,
} from '@signalbox/contracts';
import { transaction } from '../../db/transaction';
import { now, parseJsonObject } from '../../db/values';
import type { Deps } from '../../deps';
import { AppError, conflict, notFound } from '../../lib/errors';
import { surveyVarsOf, withSurveyDefaults } from '../../tasks/run/survey-answers';
import { surveyAnswersForRun } from '../surveys';
import { advanceRun } from './engine/advance';
import { publishRun, recordRunEvent } from './engine/notify';
import { descendantsOf, graphOf } from './graph';
import { runView } from './run-view';
import { activeRunStatuses, casNode, casRun, findRun, insertNodes, insertRun, nodesOf } from './runs.store';
import { requireWorkflow } from './workflows.service';
import { definitionOf } from './workflows.store';

/** Who or what starts a run. */
export type RunOrigin = {
  userId: number | null;
  source: WorkflowRunSource;
  scheduleId?: number | null;
  integrationId?: number | null;
  token?: { id: string; name: string } | null;
  parentRunId?: number | null;
  /** A person asked: the survey answers are checked (a 400 names the field); otherwise defaults fill them. */
  interactive: boolean;
};

/**
 * Starts a run of a workflow: checks the survey answers against the workflow's survey, stores the run (a copy of
 * the definition, the secret answers sealed) with one pending row per node and its audit event in one transaction,
 * then moves it on (its first nodes start). Returns the run id.
 */
export async function startWorkflowRun(
  deps: Deps,
  projectId: number,
  workflowId: number,
  input: WorkflowRunInput,
  origin: RunOrigin,
): Promise<number> {
  const workflow = await requireWorkflow(deps, projectId, workflowId);
  const definition = definitionOf(workflow.definition);
  const varsText = JSON.stringify(definition.survey_vars);
  const secretNames = new Set(definition.survey_vars.filter((v) => v.type === 'secret').map((v) => v.name));
  const plain: Record<string, unknown> = {};
  const secret: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input.survey))
    (secretNames.has(name) ? secret : plain)[name] = value;
  const answers = origin.interactive
    ? await surveyAnswersForRun(
        deps,
        { projectId, templateId: 0 },
        varsText,
        JSON.stringify(plain),
        JSON.stringify(secret),
      )
    : withSurveyDefaults(surveyVarsOf(varsText), JSON.stringify(plain), JSON.stringify(secret));
  const secretAnswers = parseJsonObject(answers.secret);
  const runId = await transaction(deps.db, async (trx) => {
    const id = await insertRun(trx, deps.dialect, {
      project_id: projectId,
      workflow_id: workflow.id,
      workflow_name: workflow.name,
      status: 'waiting',
      source: origin.source,
      message: input.message.slice(0, 500),
      user_id: origin.userId,
      source_token: origin.token?.id ?? null,
      schedule_id: origin.scheduleId ?? null,
      integration_id: origin.integrationId ?? null,
      parent_run_id: origin.parentRunId ?? null,
      created: now(),
      start: null,
      end: null,
      survey: JSON.stringify(parseJsonObject(answers.environment)),
      survey_secret: Object.keys(secretAnswers).length ? deps.box.seal(JSON.stringify(secretAnswers)) : null,
      definition: workflow.definition,
    });
    await insertNodes(trx, id, projectId, definition.nodes);
    await recordRunEvent(
      trx,
      { id, project_id: projectId, workflow_name: workflow.name } as never,
      origin.userId,
      'workflow_run.started',
      `Workflow run ${id} of ${workflow.name} started (${origin.source})`,
      { source: origin.source },
    );
    return id;
  });
  deps.metrics.workflowRunsStarted.inc({ source: origin.source });
  await advanceQuietly(deps, runId);
  return runId;
}

/** Moves a run on after a change a request made; a failure is left to the sweep (never fails the request). */
export async function advanceQuietly(deps: Deps, runId: number) {
  try {
    await advanceRun(deps, runId);
  } catch (err) {
    deps.log.warn({ err, runId }, 'advancing a workflow run failed; the sweep tries again');
  }
}

export async function requireRun(deps: Pick<Deps, 'db'>, projectId: number, runId: number) {
  const run = await findRun(deps.db, projectId, runId);
  if (!run) throw notFound('workflow_run');
  return run;
}

/** Stops a run: its unfinished nodes end `stopped` (pending ones never start) and their running tasks are stopped. */
export async function stopRun(deps: Deps, userId: number, projectId: number, runId: number) {
  const run = await requireRun(deps, projectId, runId);
  const moved = await casRun(deps.db, run.id, activeRunStatuses, { status: 'stopped', end: now() });
  if (!moved) throw conflict(coded('workflow_run_finished'));
  const nodes = await nodesOf(deps.db, [run.id]);
  for (const node of nodes) {
    if (!['pending', 'running', 'waiting_approval'].includes(node.status)) continue;
    const stopped = await casNode(
      deps.db,
      run.id,
      node.node_id,
      { status: node.status, attempt: node.attempt },
      { status: 'stopped', end: now(), detail: 'The run was stopped' },
    );
    if (stopped && node.status === 'running' && node.task_id) {
      try {
        await deps.tasks.stop(run.project_id, node.task_id, false);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
      }
    }
  }
  deps.metrics.workflowRunsFinished.inc({ status: 'stopped' });
  await recordRunEvent(
    deps.db,
    run,
    userId,
    'workflow_run.stopped',
    `Workflow run ${run.id} of ${run.workflow_name} stopped`,
  );
  publishRun(deps, run, 'stopped');
}

/**
 * Runs an ended run again from one of its nodes that ran: that node and every node after it start over (new
 * tasks), the nodes before it keep their results. Approvals given after it are void: their digests no longer match.
 */
export async function rerunFrom(
  deps: Deps,
  userId: number,
  projectId: number,
  runId: number,
  nodeId: string,
) {
  const run = await requireRun(deps, projectId, runId);
  if (!(finishedWorkflowRunStatuses as readonly string[]).includes(run.status))
    throw conflict(coded('workflow_run_not_finished'));
  const definition = definitionOf(run.definition);
  const graph = graphOf(definition.nodes, definition.edges);
  if (!graph.nodes.has(nodeId)) throw new AppError(404, coded('workflow_node_unknown', { node: nodeId }));
  const nodes = await nodesOf(deps.db, [run.id]);
  const from = nodes.find((n) => n.node_id === nodeId);
  if (!from || !['success', 'failed', 'rejected', 'stopped'].includes(from.status))
    throw new AppError(400, coded('workflow_rerun_node_not_run', { node: nodeId }));
  const again = descendantsOf(graph, nodeId);
  const moved = await transaction(deps.db, async (trx) => {
    if (!(await casRun(trx, run.id, [run.status], { status: 'running', end: null }))) return false;
    for (const node of nodes) {
      if (!again.has(node.node_id)) continue;
      await trx
        .updateTable('workflow_run_node')
        .set({
          status: 'pending',
          start: null,
          end: null,
          wait_until: null,
          detail: null,
          input_digest: null,
        })
        .where('id', '=', node.id)
        .execute();
    }
    await recordRunEvent(
      trx,
      run,
      userId,
      'workflow_run.rerun',
      `Workflow run ${run.id} of ${run.workflow_name} runs again from node ${nodeId}`,
      { node: nodeId },
    );
    return true;
  });
  if (!moved) throw conflict(coded('workflow_run_not_finished'));
  publishRun(deps, run, 'running');
  await advanceQuietly(deps, run.id);
}

/** A run as GET workflow-runs/{id} answers it (404 when the project has no such run). */
export async function getWorkflowRun(deps: Pick<Deps, 'db'>, projectId: number, runId: number) {
  return runView(deps.db, await requireRun(deps, projectId, runId));
}
