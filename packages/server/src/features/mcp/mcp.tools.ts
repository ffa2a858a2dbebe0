import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ALL_PERMISSIONS,
  can,
  Permission,
  type PermissionName,
  type ProjectRole,
  rolePermissions,
  type TemplateSurveyVar,
} from '@signalbox/contracts';
import { z } from 'zod';
import type { UserRow } from '../../access/principals.store';
import { findProjectWithRole } from '../../access/principals.store';
import { scopePermissions, type TokenLimits } from '../../access/token-limits';
import type { Deps } from '../../deps';
import { permissionScopes } from '../../http/route-scopes';
import { stripAnsi } from '../../lib/ansi';
import { AppError } from '../../lib/errors';
import { findListedTask, findTemplate, type TaskListRow, tasksWaitingApproval } from '../../tasks/store';
import { version } from '../../version';
import { listProjects } from '../projects';
import { surveySchemaOf } from '../surveys';
import { createTask, outputBatches } from '../tasks';
import { listTemplateRows } from '../templates';
import { getWorkflowRun, listWorkflows, startWorkflowRun } from '../workflows';

/** At most this many log lines and this many characters (UTF-16 units, ~bytes for logs) per read of a task's output. */
export const MCP_OUTPUT_LINES = 500;
export const MCP_OUTPUT_CHARS = 256 * 1024;
/** A search reads at most this many lines per call before it answers with where to go on. */
const MCP_SEARCH_SCAN_LINES = 50_000;
/** Tasks list_waiting_approvals answers at most. */
const MCP_APPROVALS_LIMIT = 200;

/** Who calls: the token's owner as the request sees them, the token's limits, and the token (id and name). */
export type McpCaller = {
  user: UserRow;
  limits: TokenLimits | null;
  token: { id: string; name: string };
};

/** A refusal a model reads: the tool answers it as an error result (never a JSON-RPC failure). */
class ToolRefusal extends Error {}

/**
 * The text of a refused call: the error's message, and each refused field's by its key. Anything else (a failure
 * of the server, whose message may hold internals) is rethrown.
 */
function refusalText(err: unknown): string {
  if (err instanceof AppError && err.statusCode < 500) {
    const fields = err.fields;
    if (!fields) return err.message;
    const detail = Object.entries(fields).map(([key, message]) => `${key}: ${message}`);
    return `${err.message} [${detail.join('; ')}]`;
  }
  if (err instanceof ToolRefusal) return err.message;
  throw err;
}

const json = (value: unknown) => ({
  content: [{ type: 'text' as const, text: JSON.stringify(value, null, 2) }],
});

const INTERNAL_ERROR = 'The server could not answer this call; try again later';

/**
 * Runs a tool's work; a refusal (bad input, no right) becomes an error result a model can act on. A failure of the
 * server is logged and answered without its details.
 */
async function answer(log: Deps['log'], work: () => Promise<unknown>) {
  try {
    return json(await work());
  } catch (err) {
    let text = INTERNAL_ERROR;
    try {
      text = refusalText(err);
    } catch {
      log.error({ err }, 'MCP tool failed');
    }
    return { isError: true, content: [{ type: 'text' as const, text }] };
  }
}

/** A task as the tools show it: what an agent needs to follow it, nothing secret. */
function taskSummary(t: TaskListRow) {
  return {
    id: t.id,
    project_id: t.project_id,
    template_id: t.template_id,
    template: t.tpl_alias,
    status: t.status,
    source: t.source,
    message: t.message,
    started_by: t.user_name,
    created: t.created,
    start: t.start,
    end: t.end,
  };
}

const projectId = z
  .number()
  .int()
  .positive()
  .max(2_147_483_647)
  .describe('The project id (from list_projects).');
const taskId = z.number().int().positive().max(2_147_483_647).describe('The task id.');

/**
 * The MCP server of one request: its tools act as the token's owner within the token's scopes and projects, through
 * the services and stores the REST routes use. Built per request (stateless): nothing is shared between callers.
 */
export function buildMcpServer(deps: Deps, caller: McpCaller): McpServer {
  const { db } = deps;
  const { user, limits } = caller;
  const server = new McpServer(
    { name: 'signalbox', version },
    {
      instructions:
        'Signalbox runs automation tasks (Ansible, Terraform, Bash…) from templates in projects. Find a project ' +
        'with list_projects and a template with list_templates, then run_template with answers matching its ' +
        'survey_schema. A run may wait for a person to approve it (status waiting_approval): poll get_task until ' +
        'it ends, then read_task_output.',
    },
  );

  /** The caller's project and permission bits there (the role's, within the token's scopes); refused if unknown. */
  async function projectAccess(id: number) {
    const found =
      limits?.projectIds && !limits.projectIds.includes(id)
        ? undefined
        : await findProjectWithRole(db, id, user.id);
    if (!found || (!found.role && !user.admin)) throw new ToolRefusal(`Project ${id} not found`);
    const held = user.admin ? ALL_PERMISSIONS : found.role ? rolePermissions[found.role as ProjectRole] : 0;
    return { project: found.project, held, permissions: held & scopePermissions(limits) };
  }

  /** Refuses a call the caller's role or token scope does not allow, saying which. */
  function need(access: { held: number; permissions: number }, permission: PermissionName) {
    if (can(access.permissions, permission)) return;
    if (access.held & Permission[permission])
      throw new ToolRefusal(`This API token does not have the ${permissionScopes[permission]} scope`);
    throw new ToolRefusal(`You need the ${permission} permission in this project`);
  }

  async function projectTask(project: number, task: number) {
    const t = await findListedTask(db, project, task);
    if (!t) throw new ToolRefusal(`Task ${task} not found in project ${project}`);
    return t;
  }

  /** A bounded page of a task's log after line id `after`, optionally only the lines containing `search`. */
  async function outputPage(task: number, after: number, limit: number, search: string | undefined) {
    const lines: { id: number; time: string; output: string }[] = [];
    let chars = 0;
    let scanned = 0;
    let cursor = after;
    let more = false;
    const needle = search?.toLowerCase();
    outer: for await (const batch of outputBatches(db, task, after)) {
      for (const row of batch) {
        if (lines.length >= limit || scanned >= MCP_SEARCH_SCAN_LINES) {
          more = true;
          break outer;
        }
        scanned += 1;
        const text = row.output.includes('\u001b') ? stripAnsi(row.output) : row.output;
        if (needle === undefined || text.toLowerCase().includes(needle)) {
          const line = text.length > MCP_OUTPUT_CHARS ? `${text.slice(0, MCP_OUTPUT_CHARS)}…` : text;
          if (lines.length && chars + line.length > MCP_OUTPUT_CHARS) {
            more = true;
            break outer;
          }
          chars += line.length;
          lines.push({ id: row.id, time: row.time, output: line });
        }
        cursor = row.id;
      }
    }
    return { lines, next_after: more ? cursor : null };
  }

  /** The projects the caller reaches: its own (all for an admin), within the token's project limit. */
  const reachableProjects = () =>
    listProjects(db, user.id, Boolean(user.admin), limits?.projectIds ?? undefined);

  server.registerTool(
    'list_projects',
    {
      title: 'List projects',
      description:
        'Lists the Signalbox projects this API token can reach, with what it may do in each (read, run) and ' +
        'whether runs started here wait for a person to approve them. Start here to find a project_id.',
      annotations: { readOnlyHint: true },
    },
    () =>
      answer(deps.log, async () => {
        const projects = await reachableProjects();
        const out = [];
        for (const p of projects) {
          const access = await projectAccess(p.id);
          out.push({
            id: p.id,
            name: p.name,
            can_run: can(access.permissions, 'runProjectTasks'),
            runs_need_approval: p.agent_runs_need_approval,
          });
        }
        return out;
      }),
  );

  server.registerTool(
    'list_templates',
    {
      title: 'List task templates',
      description:
        'Lists the task templates of a project: what each runs (app, playbook/script), its description, and ' +
        "survey_schema, the JSON Schema its run's `answers` must match (required fields, types, allowed values). " +
        'Use it to choose a template and to build the answers for run_template.',
      inputSchema: { project_id: projectId },
      annotations: { readOnlyHint: true },
    },
    ({ project_id }) =>
      answer(deps.log, async () => {
        await projectAccess(project_id);
        const rows = await listTemplateRows(db, project_id);
        const out = [];
        for (const t of rows) {
          const { doc } = await surveySchemaOf(
            deps,
            { projectId: project_id, templateId: t.id },
            t.survey_vars,
          );
          out.push({
            id: t.id,
            name: t.name,
            description: t.description,
            app: t.app || 'ansible',
            type: t.type,
            playbook: t.playbook,
            survey_schema: doc,
          });
        }
        return out;
      }),
  );

  server.registerTool(
    'run_template',
    {
      title: 'Run a template',
      description:
        "Starts a task from a template. `answers` must match the template's survey_schema (from list_templates); " +
        'a wrong or missing answer is refused, naming the field. The task may be created in status ' +
        'waiting_approval: it then runs only once a person approves it in Signalbox (it may also be rejected). ' +
        'Returns the task id and status; follow it with get_task.',
      inputSchema: {
        project_id: projectId,
        template_id: z
          .number()
          .int()
          .positive()
          .max(2_147_483_647)
          .describe('The template id (from list_templates).'),
        answers: z
          .record(z.string().max(100), z.unknown())
          .optional()
          .describe("The survey answers: an object matching the template's survey_schema."),
        message: z
          .string()
          .max(500)
          .optional()
          .describe('A short note shown with the task (why it was started).'),
        limit: z
          .array(z.string().max(1000))
          .max(1000)
          .optional()
          .describe('Ansible only: the hosts or groups to limit the run to.'),
      },
    },
    ({ project_id, template_id, answers, message, limit }) =>
      answer(deps.log, async () => {
        const access = await projectAccess(project_id);
        need(access, 'runProjectTasks');
        // Answers go where the task API takes them: secret variables' in `secret` (stored sealed), the rest in
        // `environment`.
        const template = await findTemplate(db, template_id);
        if (template?.project_id !== project_id)
          throw new ToolRefusal(`Template ${template_id} not found in project ${project_id}`);
        const { vars } = await surveySchemaOf(
          deps,
          { projectId: project_id, templateId: template_id },
          template.survey_vars,
        );
        const secretNames = new Set(
          vars.filter((v: TemplateSurveyVar) => v.type === 'secret').map((v) => v.name),
        );
        const environment: Record<string, unknown> = {};
        const secret: Record<string, unknown> = {};
        for (const [name, value] of Object.entries(answers ?? {}))
          Object.defineProperty(secretNames.has(name) ? secret : environment, name, {
            value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        const created = await createTask(
          deps,
          project_id,
          {
            template_id,
            message: message ?? '',
            environment: JSON.stringify(environment),
            secret: JSON.stringify(secret),
            limit: limit ?? null,
          },
          {
            userId: user.id,
            canEditTemplates: can(access.permissions, 'manageProjectResources'),
            interactive: true,
            source: 'mcp',
            token: caller.token,
          },
        );
        return {
          task_id: created.id,
          status: created.status,
          note:
            created.status === 'waiting_approval'
              ? 'The run waits for a person to approve it in Signalbox; poll get_task.'
              : 'The run is queued; poll get_task.',
        };
      }),
  );

  server.registerTool(
    'get_task',
    {
      title: 'Get a task',
      description:
        "A task's status (waiting_approval, waiting, running, success, error, stopped, rejected…), its template, " +
        'when it was created, started and ended, and how it was started. A task has ended when `end` is set.',
      inputSchema: { project_id: projectId, task_id: taskId },
      annotations: { readOnlyHint: true },
    },
    ({ project_id, task_id }) =>
      answer(deps.log, async () => {
        await projectAccess(project_id);
        return taskSummary(await projectTask(project_id, task_id));
      }),
  );

  const outputInput = {
    project_id: projectId,
    task_id: taskId,
    after: z
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .describe(
        'Read the lines after this line id: the `next_after` of the previous call (0 or absent: from the start).',
      ),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MCP_OUTPUT_LINES)
      .optional()
      .describe(`Lines to read, at most ${MCP_OUTPUT_LINES} (the default).`),
    search: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('Only the lines containing this text (case-insensitive).'),
  };
  server.registerTool(
    'read_task_output',
    {
      title: "Read a task's output",
      description:
        `A page of a task's log (at most ${MCP_OUTPUT_LINES} lines and 256 KiB per call), oldest first, ` +
        'optionally only the lines containing `search`. When `next_after` is not null, call again with ' +
        '`after: next_after` for the rest. Secrets are masked in the log.',
      inputSchema: outputInput,
      annotations: { readOnlyHint: true },
    },
    ({ project_id, task_id, after, limit, search }) =>
      answer(deps.log, async () => {
        await projectAccess(project_id);
        const task = await projectTask(project_id, task_id);
        return {
          task_id: task.id,
          status: task.status,
          ...(await outputPage(task.id, after ?? 0, limit ?? MCP_OUTPUT_LINES, search)),
        };
      }),
  );

  server.registerTool(
    'stop_task',
    {
      title: 'Stop a task',
      description:
        'Stops a task that is waiting, waiting for approval or running. Use it when a run you started is no longer ' +
        'wanted or misbehaves.',
      inputSchema: { project_id: projectId, task_id: taskId },
      annotations: { destructiveHint: true },
    },
    ({ project_id, task_id }) =>
      answer(deps.log, async () => {
        const access = await projectAccess(project_id);
        need(access, 'runProjectTasks');
        const task = await projectTask(project_id, task_id);
        await deps.tasks.stop(project_id, task.id, false);
        return taskSummary(await projectTask(project_id, task_id));
      }),
  );

  server.registerTool(
    'list_waiting_approvals',
    {
      title: 'List runs waiting for approval',
      description:
        'The tasks in your projects that wait for a person to approve them (oldest first). They are approved or ' +
        'rejected in Signalbox by a member, not through this server.',
      annotations: { readOnlyHint: true },
    },
    () =>
      answer(deps.log, async () => {
        const projects = await reachableProjects();
        const rows = await tasksWaitingApproval(
          db,
          projects.map((p) => p.id),
          MCP_APPROVALS_LIMIT,
        );
        return rows.map(taskSummary);
      }),
  );

  server.registerTool(
    'list_workflows',
    {
      title: 'List workflows',
      description:
        'Lists the workflows of a project (pipelines of templates, approvals and delays): their nodes and the ' +
        'survey variables run_workflow answers.',
      inputSchema: { project_id: projectId },
      annotations: { readOnlyHint: true },
    },
    ({ project_id }) =>
      answer(deps.log, async () => {
        await projectAccess(project_id);
        return (await listWorkflows(deps, project_id)).map((w) => ({
          id: w.id,
          name: w.name,
          description: w.description,
          nodes: w.nodes.map((n) => ({ id: n.id, type: n.type, name: n.name })),
          survey: w.survey_vars.map((v) => ({
            name: v.name,
            title: v.title,
            type: v.type,
            required: v.required,
          })),
        }));
      }),
  );

  server.registerTool(
    'run_workflow',
    {
      title: 'Run a workflow',
      description:
        "Starts a run of a workflow. `answers` answer the workflow's survey. While the project asks for approval " +
        "of agents' runs, each task the run starts waits for a person to approve it; approval nodes wait for " +
        'the people they name. Returns the run id; follow it with get_workflow_run.',
      inputSchema: {
        project_id: projectId,
        workflow_id: z
          .number()
          .int()
          .positive()
          .max(2_147_483_647)
          .describe('The workflow id (from list_workflows).'),
        answers: z.record(z.string().max(100), z.unknown()).optional().describe('The survey answers.'),
        message: z.string().max(500).optional().describe('A short note shown with the run.'),
      },
    },
    ({ project_id, workflow_id, answers, message }) =>
      answer(deps.log, async () => {
        const access = await projectAccess(project_id);
        need(access, 'runProjectTasks');
        const runId = await startWorkflowRun(
          deps,
          project_id,
          workflow_id,
          { message: message ?? '', survey: answers ?? {} },
          { userId: user.id, source: 'mcp', token: caller.token, interactive: true },
        );
        return { run_id: runId, note: 'The run started; poll get_workflow_run.' };
      }),
  );

  server.registerTool(
    'get_workflow_run',
    {
      title: 'Get a workflow run',
      description: "A workflow run's status and each node's state, with the task each template node started.",
      inputSchema: {
        project_id: projectId,
        run_id: z.number().int().positive().max(2_147_483_647).describe('The run id.'),
      },
      annotations: { readOnlyHint: true },
    },
    ({ project_id, run_id }) =>
      answer(deps.log, async () => {
        await projectAccess(project_id);
        const run = await getWorkflowRun(deps, project_id, run_id);
        return { id: run.id, status: run.status, nodes: run.node_states };
      }),
  );

  server.registerResource(
    'task_output',
    new ResourceTemplate('signalbox://project/{project_id}/task/{task_id}/output', { list: undefined }),
    {
      title: 'Task output',
      description: `The first ${MCP_OUTPUT_LINES} lines (at most 256 KiB) of a task's log; read_task_output pages further.`,
      mimeType: 'text/plain',
    },
    async (uri, variables) => {
      const project = Number(variables.project_id);
      const task = Number(variables.task_id);
      if (!Number.isSafeInteger(project) || !Number.isSafeInteger(task) || project < 1 || task < 1)
        throw new Error(`Not a task output: ${uri.href}`);
      try {
        await projectAccess(project);
        const t = await projectTask(project, task);
        const page = await outputPage(t.id, 0, MCP_OUTPUT_LINES, undefined);
        return {
          contents: [
            { uri: uri.href, mimeType: 'text/plain', text: page.lines.map((l) => l.output).join('\n') },
          ],
        };
      } catch (err) {
        let text = INTERNAL_ERROR;
        try {
          text = refusalText(err);
        } catch {
          deps.log.error({ err }, 'MCP resource read failed');
        }
        throw new Error(text);
      }
    },
  );

  return server;
}
