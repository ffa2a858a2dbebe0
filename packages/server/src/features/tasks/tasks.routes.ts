import { Readable } from 'node:stream';
import {
  can,
  idParam,
  isFinished,
  lastTasksQuery,
  newTaskInput,
  outputQuery,
  stopTaskInput,
  taskListQuery,
  templateTasksQuery,
} from '@signalbox/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { recordEvent } from '../../audit/audit.store';
import type { Deps } from '../../deps';
import { stripAnsi } from '../../lib/ansi';
import { badRequest, notFound, parse } from '../../lib/errors';
import {
  deleteTaskAndOutput,
  findListedTask,
  findProjectTask,
  findTasksByIds,
  findTemplate,
  listTasks,
  type TaskListRow,
  type TaskRow,
  unfinishedOfTemplate,
} from '../../tasks/store';
import { projectRoutes } from '../projects/projects.guard';
import { outputBatches, readOutputPage } from './task-output';
import { rerunInput, startTask, toTaskView } from './tasks.service';

const taskIdOf = (request: FastifyRequest) =>
  parse(idParam, (request.params as { task_id: unknown }).task_id);
const templateIdOf = (request: FastifyRequest) =>
  parse(idParam, (request.params as { template_id: unknown }).template_id);

/** Task API under /api/project/:project_id. */
export function tasksRoutes(app: FastifyInstance, deps: Deps) {
  const view = (t: TaskRow) => toTaskView(t, deps.tasks.statusDetail(t.id));

  async function withTemplates(rows: TaskListRow[]) {
    const builds = new Map(
      (
        await findTasksByIds(deps.db, [...new Set(rows.map((r) => r.build_task_id).filter((x) => x != null))])
      ).map((b) => [b.id, b]),
    );
    return rows.map((r) => {
      const build = r.build_task_id ? builds.get(r.build_task_id) : undefined;
      return {
        ...view(r),
        tpl_alias: r.tpl_alias ?? '',
        tpl_type: r.tpl_type ?? '',
        tpl_app: r.tpl_app ?? '',
        user_name: r.user_name,
        build_task: build ? view(build) : null,
      };
    });
  }

  async function loadTask(request: FastifyRequest) {
    const task = await findProjectTask(deps.db, request.project.id, taskIdOf(request));
    if (!task) throw notFound('Task');
    return task;
  }

  async function loadTemplate(request: FastifyRequest) {
    const template = await findTemplate(deps.db, templateIdOf(request));
    if (!template || template.project_id !== request.project.id) throw notFound('Template');
    return template;
  }

  projectRoutes(app, deps, async (scope) => {
    scope.post('/tasks', { config: { permission: 'runProjectTasks' } }, async (request, reply) => {
      const input = parse(newTaskInput, request.body);
      const id = await startTask(deps, request.project.id, input, {
        userId: request.user!.id,
        canEditTemplates: can(request.permissions, 'manageProjectResources'),
      });
      const task = await findProjectTask(deps.db, request.project.id, id);
      return reply.status(201).send(view(task!));
    });

    scope.get('/tasks', async (request) => {
      const q = parse(taskListQuery, request.query);
      return withTemplates(await listTasks(deps.db, request.project.id, q));
    });

    scope.get('/tasks/last', async (request) => {
      const q = parse(lastTasksQuery, request.query);
      return withTemplates(await listTasks(deps.db, request.project.id, { limit: q.limit }));
    });

    scope.get('/tasks/:task_id', async (request) => {
      const task = await findListedTask(deps.db, request.project.id, taskIdOf(request));
      if (!task) throw notFound('Task');
      return (await withTemplates([task]))[0];
    });

    // A page of the log (at most OUTPUT_PAGE_LINES lines, fewer when they are long); a Link header names the
    // next page by its keyset cursor (`after`, the last line's id) until the last page.
    scope.get('/tasks/:task_id/output', async (request, reply) => {
      const task = await loadTask(request);
      const q = parse(outputQuery, request.query);
      const page = await readOutputPage(deps.db, task.id, q, q.limit);
      if (page.more) {
        const next = `/api/project/${request.project.id}/tasks/${task.id}/output?after=${page.lastId}&limit=${q.limit}`;
        reply.header('link', `<${next}>; rel="next"`);
      }
      return reply.type('application/json; charset=utf-8').send(page.json);
    });

    // The whole log as plain text, streamed: read in small keyset batches as the client takes them (one chunk
    // buffered at most), so neither a long log nor a slow reader holds memory or the event loop.
    scope.get('/tasks/:task_id/raw_output', async (request, reply) => {
      const task = await loadTask(request);
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

    scope.post(
      '/tasks/:task_id/confirm',
      { config: { permission: 'runProjectTasks' } },
      async (request, reply) => {
        const task = await loadTask(request);
        await deps.tasks.confirm(request.project.id, task.id);
        return reply.status(204).send();
      },
    );

    scope.post(
      '/tasks/:task_id/reject',
      { config: { permission: 'runProjectTasks' } },
      async (request, reply) => {
        const task = await loadTask(request);
        await deps.tasks.reject(request.project.id, task.id);
        return reply.status(204).send();
      },
    );

    scope.post(
      '/tasks/:task_id/stop',
      { config: { permission: 'runProjectTasks' } },
      async (request, reply) => {
        const task = await loadTask(request);
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
      { config: { permission: 'runProjectTasks' } },
      async (request, reply) => {
        const task = await loadTask(request);
        const rerun = (await rerunInput(deps, request.project.id, task.id))!;
        const id = await startTask(deps, request.project.id, rerun.input, {
          userId: request.user!.id,
          commitHash: rerun.commitHash,
          canEditTemplates: can(request.permissions, 'manageProjectResources'),
          rerunOf: task.id,
        });
        const created = await findProjectTask(deps.db, request.project.id, id);
        return reply.status(201).send(view(created!));
      },
    );

    scope.delete('/tasks/:task_id', { config: { admin: true } }, async (request, reply) => {
      const task = await loadTask(request);
      if (!isFinished(task.status)) throw badRequest('Only a finished task can be deleted; stop it first');
      await deleteTaskAndOutput(deps.db, task.id);
      await recordEvent(deps.db, {
        project_id: request.project.id,
        user_id: request.user!.id,
        object_type: 'task',
        object_id: task.id,
        description: `Task ID ${task.id} deleted`,
      });
      return reply.status(204).send();
    });

    scope.get('/templates/:template_id/tasks', async (request) => {
      const template = await loadTemplate(request);
      const q = parse(templateTasksQuery, request.query);
      return withTemplates(
        await listTasks(deps.db, request.project.id, {
          templateId: template.id,
          status: q.status,
          limit: q.limit,
          offset: q.offset,
        }),
      );
    });

    scope.get('/templates/:template_id/tasks/last', async (request) => {
      const template = await loadTemplate(request);
      const q = parse(lastTasksQuery, request.query);
      return withTemplates(
        await listTasks(deps.db, request.project.id, { templateId: template.id, limit: q.limit }),
      );
    });

    scope.post(
      '/templates/:template_id/stop_all_tasks',
      { config: { permission: 'runProjectTasks' } },
      async (request, reply) => {
        const template = await loadTemplate(request);
        const { force } = parse(stopTaskInput, request.body ?? {});
        for (const t of await unfinishedOfTemplate(deps.db, request.project.id, template.id))
          await deps.tasks.stop(request.project.id, t.id, force);
        return reply.status(204).send();
      },
    );
  });
}
