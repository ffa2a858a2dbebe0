import { Readable } from 'node:stream';
import {
  can,
  coded,
  isFinished,
  lastTasksQuery,
  newTaskInput,
  outputQuery,
  planApprovalInput,
  rejectTaskInput,
  stopTaskInput,
  type TaskOutputLine,
  type TaskSource,
  type TaskWithTemplate,
  taskListQuery,
  taskOutputLineSchema,
  taskPlanSchema,
  taskWithTemplateSchema,
  templateDriftSchema,
  templateTasksQuery,
} from '@signalbox/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import { recordEvent } from '../../audit/audit.store';
import { parseJsonObject } from '../../db/values';
import type { Deps } from '../../deps';
import { linkNextPage } from '../../http/next-page';
import { preSerialized } from '../../http/openapi';
import { noContentResponse, notModified, pathIds } from '../../http/path-params';
import { stripAnsi } from '../../lib/ansi';
import { AppError, badRequest, notFound, parse } from '../../lib/errors';
import {
  deleteTaskAndOutput,
  findListedTask,
  findProjectTask,
  findTaskLogState,
  findTaskPlan,
  findTemplate,
  type TaskListRow,
  type TaskPage,
  unfinishedOfTemplate,
} from '../../tasks/store';
import { findDrift, findTaskPlanRow, planFileView } from '../../tasks/terraform-plans.store';
import { FinishedPages, RecentLogStates } from './finished-pages';
import { applyStoredPlan, confirmPlan, rejectPlan } from './plan-approval.service';
import { outputBatches, readOutputPage } from './task-output';
import { answerApproval, createTask, rerunInput } from './tasks.service';
import { listedTasks, tasksListBody } from './tasks-list';

const run = { config: { permission: 'runProjectTasks' as const } };
const byTask = { schema: { params: pathIds('task_id') } };
const byTemplate = { schema: { params: pathIds('template_id') } };
/** A started task is answered as the task lists show it (with its template's name, type and app). */
const newTask = { 201: taskWithTemplateSchema };
const taskList = { 200: z.array(taskWithTemplateSchema) };

/**
 * A route that answers 404 for an unknown task or template before it reads its query string or body: the handler
 * parses them itself, with the schemas declared here (which describe the route in the API description).
 */
const afterLookup = <C extends object, S extends object, P extends object>(
  route: { config?: C; schema: S },
  parts: P,
) => ({ config: { ...(route.config as C), parsesInHandler: true }, schema: { ...route.schema, ...parts } });

/** How a request started a task: with an API token (`api`) or from the console (`ui`). */
const sourceOf = (request: FastifyRequest): TaskSource => (request.apiToken ? 'api' : 'ui');
const approver = (request: FastifyRequest) => ({
  userId: currentUser(request).id,
  tokenId: request.apiToken?.id ?? null,
});

/** Task API under /api/project/:project_id. */
export function tasksRoutes(app: FastifyInstance, deps: Deps) {
  const finishedPages = new FinishedPages();
  const logStates = new RecentLogStates();
  deps.bus.on('projectChanged', ({ projectId }) => logStates.forgetProject(projectId));
  deps.bus.on('live', (message) => {
    if (message.type === 'update') logStates.forgetTask(message.project_id, message.task_id);
  });
  const statusDetail = (taskId: number) => deps.tasks.statusDetail(taskId);
  const withTemplates = (rows: TaskListRow[]) => listedTasks(deps.db, rows, statusDetail);
  /** A page of the project's tasks as its answer: the kept list's bytes, the next page named in a Link header. */
  async function taskPage(request: FastifyRequest, reply: FastifyReply, page: TaskPage, link: boolean) {
    const { body, nextBefore } = await tasksListBody(deps.db, request.project.id, page, statusDetail);
    // A full page names the next one: the same query, its offset replaced by this page's last (oldest) task.
    if (link && nextBefore !== null) linkNextPage(request.url, reply, nextBefore, page.limit);
    return preSerialized<TaskWithTemplate[]>(body);
  }

  async function loadTask(projectId: number, taskId: number) {
    const task = await findProjectTask(deps.db, projectId, taskId);
    if (!task) throw notFound('task');
    return task;
  }

  async function loadTemplate(projectId: number, templateId: number) {
    const template = await findTemplate(deps.db, templateId);
    if (!template || template.project_id !== projectId) throw notFound('template');
    return template;
  }

  projectRoutes(app, deps, async (scope) => {
    /** The commit an earlier task of the template checked out, for a task that runs it again. */
    const commitOfTask = async (projectId: number, templateId: number, taskId: number) => {
      const earlier = await findProjectTask(deps.db, projectId, taskId);
      if (!earlier || earlier.template_id !== templateId)
        throw badRequest(coded('task_not_of_template', { id: taskId }), {
          commit_of_task: coded('not_found', { what: 'task' }),
        });
      if (!earlier.commit_hash)
        throw badRequest(coded('task_has_no_commit', { id: taskId }), {
          commit_of_task: coded('task_has_no_commit_short'),
        });
      return earlier.commit_hash;
    };

    scope.post(
      '/tasks',
      { ...run, schema: { body: newTaskInput, response: newTask } },
      async (request, reply) => {
        const { commit_of_task, ...input } = request.body;
        const commitHash = commit_of_task
          ? await commitOfTask(request.project.id, input.template_id, commit_of_task)
          : null;
        const created = await createTask(deps, request.project.id, input, {
          userId: currentUser(request).id,
          commitHash,
          canEditTemplates: can(request.permissions, 'manageProjectResources'),
          interactive: true,
          source: sourceOf(request),
        });
        return reply.status(201).send((await withTemplates([created]))[0]);
      },
    );

    const shared = { config: { sharedAnswer: true } };
    scope.get(
      '/tasks',
      { ...shared, schema: { querystring: taskListQuery, response: taskList } },
      async (request, reply) => {
        return taskPage(request, reply, request.query, true);
      },
    );

    scope.get(
      '/tasks/last',
      { ...shared, schema: { querystring: lastTasksQuery, response: taskList } },
      async (request, reply) => taskPage(request, reply, { limit: request.query.limit }, false),
    );

    scope.get(
      '/tasks/:task_id',
      { schema: { ...byTask.schema, response: { 200: taskWithTemplateSchema } } },
      async (request) => {
        const task = await findListedTask(deps.db, request.project.id, request.params.task_id);
        if (!task) throw notFound('task');
        return (await withTemplates([task]))[0];
      },
    );

    // A page of the log (at most OUTPUT_PAGE_LINES lines, fewer when they are long); a Link header names the
    // next page by its keyset cursor (`after`, the last line's id) until the last page. A finished task's pages
    // never change: they are kept (finished-pages.ts) and carry an ETag, so a browser revalidates them for free.
    scope.get(
      '/tasks/:task_id/output',
      afterLookup(byTask, {
        querystring: outputQuery,
        response: { 200: z.array(taskOutputLineSchema), 304: notModified },
      }),
      async (request, reply) => {
        // Only what the log's key needs: a wide task row costs more than a kept page's answer. A finished task's
        // state was likely read a moment ago, by the previous page or another reader.
        const projectId = request.project.id;
        const taskId = request.params.task_id;
        const task = await logStates.through(
          projectId,
          taskId,
          async () => (await findTaskLogState(deps.db, projectId, taskId)) ?? undefined,
        );
        if (!task) throw notFound('task');
        const q = parse(outputQuery, request.query);
        const key = FinishedPages.keyOf(task, q);
        const read = () => readOutputPage(deps.db, task.id, q, q.limit);
        let page: Awaited<ReturnType<typeof read>>;
        if (key) {
          const etag = FinishedPages.etag(key);
          reply.header('etag', etag).header('cache-control', 'private, no-cache');
          if (FinishedPages.matches(request.headers['if-none-match'], etag)) return reply.status(304).send();
          page = await finishedPages.get(key, read);
        } else page = await read();
        if (page.more) {
          const next = `/api/project/${request.project.id}/tasks/${task.id}/output?after=${page.lastId}&limit=${q.limit}`;
          reply.header('link', `<${next}>; rel="next"`);
        }
        // The page is JSON text already (built batch by batch): bytes go out as they are, past the serializer.
        return reply.type('application/json; charset=utf-8').send(page.json as unknown as TaskOutputLine[]);
      },
    );

    // The summary of the task's saved Terraform/OpenTofu plan: counts and changed attribute names, never values;
    // with the plan file's digest, the commit and state it was made from, and what was decided about it.
    scope.get(
      '/tasks/:task_id/plan',
      { schema: { ...byTask.schema, response: { 200: taskPlanSchema } } },
      async (request) => {
        const task = await loadTask(request.project.id, request.params.task_id);
        const plan = await findTaskPlan(deps.db, request.project.id, task.id);
        if (!plan) throw new AppError(404, coded('task_has_no_plan', { id: task.id }));
        const row = await findTaskPlanRow(deps.db, request.project.id, task.id);
        const template = await findTemplate(deps.db, task.template_id);
        const params = parseJsonObject(template?.task_params);
        return { ...plan, plan_file: row ? await planFileView(deps.db, row, params) : null };
      },
    );

    // Apply this plan: approves a plan-only task's stored plan and starts the task that applies exactly it.
    scope.post(
      '/tasks/:task_id/apply_plan',
      afterLookup({ ...run, ...byTask }, { body: planApprovalInput, response: newTask }),
      async (request, reply) => {
        const task = await loadTask(request.project.id, request.params.task_id);
        const { plan_digest } = parse(planApprovalInput, request.body ?? {});
        const created = await applyStoredPlan(
          deps,
          task,
          {
            id: currentUser(request).id,
            canEditTemplates: can(request.permissions, 'manageProjectResources'),
            source: sourceOf(request) === 'api' ? 'api' : 'ui',
          },
          plan_digest,
        );
        return reply.status(201).send((await withTemplates([created]))[0]);
      },
    );

    // The whole log as plain text, streamed: read in small keyset batches as the client takes them (one chunk
    // buffered at most), so neither a long log nor a slow reader holds memory or the event loop.
    scope.get('/tasks/:task_id/raw_output', byTask, async (request, reply) => {
      const task = await loadTask(request.project.id, request.params.task_id);
      async function* text() {
        for await (const batch of outputBatches(deps.db, task.id, 0)) {
          let chunk = '';
          for (const row of batch)
            chunk += `${row.output.includes('\u001b') ? stripAnsi(row.output) : row.output}\n`;
          yield chunk;
        }
      }
      return reply
        .type('text/plain; charset=utf-8')
        .send(Readable.from(text(), { objectMode: true, highWaterMark: 1 }));
    });

    // Confirms a plan waiting for confirmation; `plan_digest`, when sent, is the digest of the plan the approver
    // read (refused when the plan differs).
    scope.post(
      '/tasks/:task_id/confirm',
      afterLookup({ ...run, ...byTask }, { body: planApprovalInput, response: noContentResponse }),
      async (request, reply) => {
        const task = await loadTask(request.project.id, request.params.task_id);
        const { plan_digest } = parse(planApprovalInput, request.body ?? {});
        await confirmPlan(deps, task, currentUser(request).id, plan_digest);
        return reply.status(204).send();
      },
    );

    // Reject answers a run waiting for approval (declined, with an optional reason as its message) as well as a
    // plan waiting for confirmation (the reason is not used there).
    scope.post(
      '/tasks/:task_id/reject',
      afterLookup({ ...run, ...byTask }, { body: rejectTaskInput, response: noContentResponse }),
      async (request, reply) => {
        const task = await loadTask(request.project.id, request.params.task_id);
        const { reason } = parse(rejectTaskInput, request.body ?? {});
        if (task.status === 'waiting_approval')
          await answerApproval(deps, task, approver(request), { approved: false, reason });
        else await rejectPlan(deps, task, currentUser(request).id);
        return reply.status(204).send();
      },
    );

    scope.post(
      '/tasks/:task_id/approve',
      { ...run, schema: { ...byTask.schema, response: noContentResponse } },
      async (request, reply) => {
        const task = await loadTask(request.project.id, request.params.task_id);
        await answerApproval(deps, task, approver(request), { approved: true });
        return reply.status(204).send();
      },
    );

    scope.post(
      '/tasks/:task_id/stop',
      afterLookup({ ...run, ...byTask }, { body: stopTaskInput, response: noContentResponse }),
      async (request, reply) => {
        const task = await loadTask(request.project.id, request.params.task_id);
        const { force } = parse(stopTaskInput, request.body ?? {});
        await deps.tasks.stop(request.project.id, task.id, force);
        return reply.status(204).send();
      },
    );

    // Re-run: POST tasks/:id/rerun (no body) creates a new task with the original's parameters, pinned to its
    // commit_hash and started by the caller. Secret survey values are not kept after a task ends, so they are
    // not carried over. The original's overrides were checked against its creator's rights and are kept; the
    // playbook path is checked again when the re-run runs.
    scope.post(
      '/tasks/:task_id/rerun',
      { ...run, schema: { ...byTask.schema, response: newTask } },
      async (request, reply) => {
        const task = await loadTask(request.project.id, request.params.task_id);
        // The task may have been deleted since it was loaded.
        const rerun = await rerunInput(deps, request.project.id, task.id);
        if (!rerun) throw notFound('task');
        const created = await createTask(deps, request.project.id, rerun.input, {
          userId: currentUser(request).id,
          commitHash: rerun.commitHash,
          canEditTemplates: can(request.permissions, 'manageProjectResources'),
          rerunOf: task.id,
          interactive: true,
          source: sourceOf(request),
        });
        return reply.status(201).send((await withTemplates([created]))[0]);
      },
    );

    scope.delete(
      '/tasks/:task_id',
      { config: { admin: true }, schema: { ...byTask.schema, response: noContentResponse } },
      async (request, reply) => {
        const task = await loadTask(request.project.id, request.params.task_id);
        if (!isFinished(task.status)) throw badRequest(coded('task_not_finished'));
        await deleteTaskAndOutput(deps.db, task.id);
        await recordEvent(deps.db, {
          project_id: request.project.id,
          user_id: currentUser(request).id,
          object_type: 'task',
          object_id: task.id,
          description: `Task ID ${task.id} deleted`,
          kind: 'task.deleted',
          params: { task_id: task.id },
        });
        return reply.status(204).send();
      },
    );

    scope.get(
      '/templates/:template_id/tasks',
      afterLookup({ ...byTemplate, ...shared }, { querystring: templateTasksQuery, response: taskList }),
      async (request, reply) => {
        const template = await loadTemplate(request.project.id, request.params.template_id);
        const q = parse(templateTasksQuery, request.query);
        return taskPage(request, reply, { templateId: template.id, ...q }, true);
      },
    );

    scope.get(
      '/templates/:template_id/tasks/last',
      afterLookup({ ...byTemplate, ...shared }, { querystring: lastTasksQuery, response: taskList }),
      async (request, reply) => {
        const template = await loadTemplate(request.project.id, request.params.template_id);
        const q = parse(lastTasksQuery, request.query);
        return taskPage(request, reply, { templateId: template.id, limit: q.limit }, false);
      },
    );

    // The outcome of the template's last drift check: what differs (addresses and attribute paths), since when.
    scope.get(
      '/templates/:template_id/drift',
      { schema: { ...byTemplate.schema, response: { 200: templateDriftSchema } } },
      async (request) => {
        const template = await loadTemplate(request.project.id, request.params.template_id);
        const drift = await findDrift(deps.db, request.project.id, template.id);
        if (!drift) throw new AppError(404, coded('template_has_no_drift', { id: template.id }));
        return drift;
      },
    );

    // Reconcile a drifted template: the normal flow of a run (plan, then confirmation, then apply).
    scope.post(
      '/templates/:template_id/reconcile',
      { ...run, schema: { ...byTemplate.schema, response: newTask } },
      async (request, reply) => {
        const template = await loadTemplate(request.project.id, request.params.template_id);
        if (!['terraform', 'tofu', 'terragrunt'].includes(template.app))
          throw badRequest(coded('drift_needs_terraform'));
        const created = await createTask(
          deps,
          request.project.id,
          { template_id: template.id, message: 'Reconcile drift' },
          {
            userId: currentUser(request).id,
            canEditTemplates: can(request.permissions, 'manageProjectResources'),
            interactive: true,
            source: sourceOf(request),
          },
        );
        return reply.status(201).send((await withTemplates([created]))[0]);
      },
    );

    scope.post(
      '/templates/:template_id/stop_all_tasks',
      afterLookup({ ...run, ...byTemplate }, { body: stopTaskInput, response: noContentResponse }),
      async (request, reply) => {
        const template = await loadTemplate(request.project.id, request.params.template_id);
        const { force } = parse(stopTaskInput, request.body ?? {});
        for (const t of await unfinishedOfTemplate(deps.db, request.project.id, template.id))
          await deps.tasks.stop(request.project.id, t.id, force);
        return reply.status(204).send();
      },
    );
  });
}
