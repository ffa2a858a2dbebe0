import {
  approvalInboxSchema,
  workflowApproveInput,
  workflowInput,
  workflowRejectInput,
  workflowRerunInput,
  workflowRunInput,
  workflowRunListQuery,
  workflowRunSchema,
  workflowRunSummarySchema,
  workflowSchema,
} from '@signalbox/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { noContentResponse, pathIds } from '../../http/path-params';
import { approveNode, rejectNode } from './approvals.service';
import { approvalInbox } from './inbox';
import { runSummaries, runView } from './run-view';
import { requireRun, rerunFrom, startWorkflowRun, stopRun } from './runs.service';
import { listRuns } from './runs.store';
import {
  createWorkflow,
  deleteWorkflow,
  getWorkflow,
  listWorkflows,
  updateWorkflow,
} from './workflows.service';

const write = { permission: 'manageProjectResources' as const };
const run = { permission: 'runProjectTasks' as const };
const byWorkflow = pathIds('workflow_id');
const byRun = pathIds('run_id');
const byNode = { params: z.object({ run_id: byRun.shape.run_id, node_id: z.string().max(64) }) };

const sourceOf = (request: FastifyRequest) => (request.apiToken ? 'api' : 'ui') as 'api' | 'ui';

/**
 * Workflows under /api/project/:project_id: members read; managers and owners edit; task_runner and above start,
 * stop and re-run runs; approving and rejecting follow each approval node's own rules (checked against the run's
 * project). And /api/approvals: what waits for the caller's decision across projects.
 */
export function workflowsRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.get('/workflows', { schema: { response: { 200: z.array(workflowSchema) } } }, async (request) =>
      listWorkflows(deps, request.project.id),
    );
    scope.get(
      '/workflows/:workflow_id',
      { schema: { params: byWorkflow, response: { 200: workflowSchema } } },
      async (request) => getWorkflow(deps, request.project.id, request.params.workflow_id),
    );
    scope.post(
      '/workflows',
      { config: write, schema: { body: workflowInput, response: { 201: workflowSchema } } },
      async (request, reply) =>
        reply
          .status(201)
          .send(await createWorkflow(deps, currentUser(request), request.project.id, request.body)),
    );
    scope.put(
      '/workflows/:workflow_id',
      {
        config: write,
        schema: { params: byWorkflow, body: workflowInput, response: { 200: workflowSchema } },
      },
      async (request) =>
        updateWorkflow(
          deps,
          currentUser(request),
          request.project.id,
          request.params.workflow_id,
          request.body,
        ),
    );
    scope.delete(
      '/workflows/:workflow_id',
      { config: write, schema: { params: byWorkflow, response: noContentResponse } },
      async (request, reply) => {
        await deleteWorkflow(deps, currentUser(request), request.project.id, request.params.workflow_id);
        return reply.status(204).send();
      },
    );
    scope.post(
      '/workflows/:workflow_id/runs',
      {
        config: run,
        schema: { params: byWorkflow, body: workflowRunInput, response: { 201: workflowRunSchema } },
      },
      async (request, reply) => {
        const user = currentUser(request);
        const id = await startWorkflowRun(
          deps,
          request.project.id,
          request.params.workflow_id,
          request.body,
          {
            userId: user.id,
            source: sourceOf(request),
            token: request.apiToken ? { id: request.apiToken.id, name: request.apiToken.name } : null,
            interactive: true,
          },
        );
        return reply.status(201).send(await runView(deps.db, await requireRun(deps, request.project.id, id)));
      },
    );
    scope.get(
      '/workflow-runs',
      { schema: { querystring: workflowRunListQuery, response: { 200: z.array(workflowRunSummarySchema) } } },
      async (request) => runSummaries(deps.db, await listRuns(deps.db, request.project.id, request.query)),
    );
    scope.get(
      '/workflow-runs/:run_id',
      { schema: { params: byRun, response: { 200: workflowRunSchema } } },
      async (request) => runView(deps.db, await requireRun(deps, request.project.id, request.params.run_id)),
    );
    scope.post(
      '/workflow-runs/:run_id/stop',
      { config: run, schema: { params: byRun, response: { 200: workflowRunSchema } } },
      async (request) => {
        await stopRun(deps, currentUser(request).id, request.project.id, request.params.run_id);
        return runView(deps.db, await requireRun(deps, request.project.id, request.params.run_id));
      },
    );
    scope.post(
      '/workflow-runs/:run_id/rerun',
      {
        config: run,
        schema: { params: byRun, body: workflowRerunInput, response: { 200: workflowRunSchema } },
      },
      async (request) => {
        const { run_id } = request.params;
        await rerunFrom(deps, currentUser(request).id, request.project.id, run_id, request.body.node_id);
        return runView(deps.db, await requireRun(deps, request.project.id, run_id));
      },
    );
    // Approving is a decision, not a write: a token needs the run scope; who may decide is the node's to say.
    scope.post(
      '/workflow-runs/:run_id/nodes/:node_id/approve',
      {
        config: { tokenScope: 'run' },
        schema: { ...byNode, body: workflowApproveInput, response: { 200: workflowRunSchema } },
      },
      async (request) => {
        const { run_id, node_id } = request.params;
        await approveNode(
          deps,
          { userId: currentUser(request).id },
          request.project.id,
          run_id,
          node_id,
          request.body,
        );
        return runView(deps.db, await requireRun(deps, request.project.id, run_id));
      },
    );
    scope.post(
      '/workflow-runs/:run_id/nodes/:node_id/reject',
      {
        config: { tokenScope: 'run' },
        schema: { ...byNode, body: workflowRejectInput, response: { 200: workflowRunSchema } },
      },
      async (request) => {
        const { run_id, node_id } = request.params;
        await rejectNode(
          deps,
          { userId: currentUser(request).id },
          request.project.id,
          run_id,
          node_id,
          request.body.reason,
        );
        return runView(deps.db, await requireRun(deps, request.project.id, run_id));
      },
    );
  });

  app.get(
    '/api/approvals',
    { config: { tokenScope: 'read' }, schema: { response: { 200: approvalInboxSchema } } },
    async (request) => approvalInbox(deps, currentUser(request).id),
  );
}
