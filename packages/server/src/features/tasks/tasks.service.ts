import { coded, isFinished, type TaskView } from '@signalbox/contracts';
import { assertInProject } from '../../access/refs.store';
import { recordEvent } from '../../audit/audit.store';
import { untilDbAnswers } from '../../db/retry';
import { transaction } from '../../db/transaction';
import { fromBool, now, parseJson, toBool } from '../../db/values';
import type { Deps } from '../../deps';
import { AppError, badRequest, fieldError, forbidden, found } from '../../lib/errors';
import type { FinishedRun, NewTask, TaskOrigin } from '../../ports';
import { incomingVersion } from '../../tasks/run/details';
import { surveyVarsOf, withSurveyDefaults } from '../../tasks/run/survey-answers';
import { nextBuildVersion } from '../../tasks/run/version';
import {
  autorunTemplates,
  findListedTask,
  findProject,
  findProjectTask,
  findTemplate,
  insertTask,
  lastBuildVersion,
  pruneTemplateTasks,
  type TaskListRow,
  type TaskRow,
} from '../../tasks/store';
import { type TaskViewRow, taskFieldsWith } from '../../tasks/task-view';
import { copyPlanForApply, lockPlanForApply } from '../../tasks/terraform-plans.store';
import { surveyAnswersForRun } from '../surveys';
import { guardTaskInput } from './task-input-guard';

/** What starting a task reads and writes: the database, the secret box, the limits, and the engine to hand it to. */
export type TaskServiceDeps = Pick<Deps, 'db' | 'dialect' | 'box' | 'config' | 'tasks'>;

export function toTaskView(t: TaskViewRow, statusDetail: string | null): TaskView {
  return taskFieldsWith(t, { status_detail: t.status === 'waiting' ? statusDetail : null });
}

/**
 * Starts a task for the API, a schedule, an integration or an autorun: validates and stores it as `waiting`,
 * then hands it to the engine's queue. Returns the task id.
 */
export async function startTask(
  deps: TaskServiceDeps,
  projectId: number,
  input: NewTask,
  origin: TaskOrigin,
): Promise<number> {
  return (await createTask(deps, projectId, input, origin)).id;
}

/**
 * `startTask` for a caller that answers with the new task: the row as stored, with its template's name, type and
 * app and its starter's name (as the task lists show a task), read before the engine may claim it, so the answer
 * says `waiting` however fast the engine is.
 */
export async function createTask(
  deps: TaskServiceDeps,
  projectId: number,
  input: NewTask,
  origin: TaskOrigin,
): Promise<TaskListRow> {
  const id = await insertNewTask(deps, projectId, input, origin);
  const created = found(await findListedTask(deps.db, projectId, id), 'task');
  // A run waiting for approval is only announced: the queue takes `waiting` tasks alone.
  await deps.tasks.enqueue(id);
  return created;
}

/**
 * The reaction to a finished run: a successful build starts the deploy templates set to run automatically on
 * its builds, as the build's starter. A deploy that cannot start is logged and the others still start.
 */
export async function autorunDeploys(deps: Pick<Deps, 'db' | 'log' | 'startTask'>, run: FinishedRun) {
  if (run.status !== 'success' || run.templateType !== 'build') return;
  const templates = await untilDbAnswers(() => autorunTemplates(deps.db, run.projectId, run.templateId), {
    log: deps.log,
    what: 'reading autorun templates',
    taskId: run.taskId,
    giveUp: run.giveUp,
  });
  for (const t of templates) {
    try {
      await deps.startTask(
        run.projectId,
        { template_id: t.id, build_task_id: run.taskId },
        { userId: run.userId, source: 'autorun' },
      );
    } catch (err) {
      deps.log.warn({ err, taskId: run.taskId, templateId: t.id }, 'autorun deploy could not start');
    }
  }
}

const list = (v: string | string[] | null | undefined): string[] =>
  (Array.isArray(v) ? v : (v ?? '').split(',')).map((s) => s.trim()).filter(Boolean);

/**
 * Validates a new task against its template and the caller's rights (task-input-guard) and stores it as
 * `waiting`. Overrides the template does not allow are not stored (inventory, branch, arguments, playbook) or
 * not honoured by the executors (limit/tags, debug).
 */
async function insertNewTask(
  deps: TaskServiceDeps,
  projectId: number,
  input: NewTask,
  origin: TaskOrigin,
): Promise<number> {
  await assertInProject(deps.db, 'template', input.template_id, projectId, 'template', 'template_id');
  const template = found(await findTemplate(deps.db, input.template_id), 'template');
  const tp = parseJson<Record<string, unknown>>(template.task_params, {});
  const guarded = guardTaskInput(template, input, origin);

  let inventoryId: number | null = null;
  if (input.inventory_id && tp.allow_override_inventory) {
    await assertInProject(deps.db, 'inventory', input.inventory_id, projectId, 'inventory', 'inventory_id');
    inventoryId = input.inventory_id;
  }
  const environmentId = await environmentOverride(deps, projectId, template, input, origin);

  let version: string | null = null;
  let buildTaskId: number | null = null;
  if (template.type === 'deploy') {
    if (!input.build_task_id)
      throw fieldError('build_task_id', coded('required', { field: 'build_task_id' }));
    const build = await findProjectTask(deps.db, projectId, input.build_task_id);
    if (!build || (template.build_template_id && build.template_id !== template.build_template_id))
      throw badRequest(coded('build_not_of_template', { id: input.build_task_id }), {
        build_task_id: coded('not_found', { what: 'task' }),
      });
    if (build.status !== 'success')
      throw badRequest(coded('build_failed', { id: build.id }), {
        build_task_id: coded('build_failed', { id: build.id }),
      });
    buildTaskId = build.id;
    version = await incomingVersion(deps, build.id);
  } else if (template.type === 'build') {
    version = nextBuildVersion(
      template.start_version || '0.0.0',
      await lastBuildVersion(deps.db, template.id),
    );
  }

  const params: Record<string, unknown> = { ...(input.params ?? {}) };
  const limit = list(input.limit);
  if (limit.length) params.limit = limit;
  if (input.tags?.length) params.tags = list(input.tags);
  if (input.skip_tags?.length) params.skip_tags = list(input.skip_tags);
  params.debug = Boolean(input.debug);
  params.dry_run = Boolean(input.dry_run);
  params.diff = Boolean(input.diff);

  // A person's answers are checked against the survey (types, rules, options offered now, visibility); required
  // variables left unanswered take their defaults. Without a person (schedules, integrations, autoruns) only the
  // defaults are filled: a required variable still unanswered fails the run, saying which.
  const answers = origin.interactive
    ? await surveyAnswersForRun(
        deps,
        { projectId, templateId: template.id },
        template.survey_vars,
        input.environment,
        input.secret,
      )
    : withSurveyDefaults(surveyVarsOf(template.survey_vars), input.environment, input.secret);

  // An AI agent's run waits for a person when its project says so.
  const needsApproval =
    origin.source === 'mcp' &&
    toBool(found(await findProject(deps.db, projectId), 'project').agent_runs_need_approval);
  const token = origin.token ?? null;
  const secret =
    answers.secret?.trim() && answers.secret.trim() !== '{}' ? deps.box.seal(answers.secret) : null;
  // The task and its event are stored together: the engine never finds a task the audit log does not show.
  const id = await transaction(deps.db, async (trx) => {
    // A task that applies a stored plan takes the plan's lock before its own row exists (see lockPlanForApply).
    const plan = origin.planOf ? await lockPlanForApply(trx, deps.dialect, origin.planOf) : undefined;
    const id = await insertTask(trx, deps.dialect, {
      project_id: projectId,
      template_id: template.id,
      status: needsApproval ? 'waiting_approval' : 'waiting',
      message: (input.message ?? '').slice(0, 500),
      user_id: origin.userId,
      integration_id: origin.integrationId ?? null,
      schedule_id: origin.scheduleId ?? null,
      source: origin.source ?? null,
      source_token: token?.id ?? null,
      created: now(),
      start: null,
      end: null,
      version,
      build_task_id: buildTaskId,
      commit_hash: origin.commitHash ?? null,
      commit_message: null,
      playbook: guarded.playbook,
      environment: answers.environment?.trim() || '{}',
      secret,
      arguments: guarded.arguments,
      git_branch: input.git_branch && template.allow_override_branch_in_task ? input.git_branch : null,
      inventory_id: inventoryId,
      environment_id: environmentId,
      params: JSON.stringify(params),
      debug: fromBool(input.debug),
      dry_run: fromBool(input.dry_run),
      diff: fromBool(input.diff),
      plan_of: origin.planOf ?? null,
      workflow_run_id: origin.workflow?.runId ?? null,
      workflow_node_id: origin.workflow?.nodeId ?? null,
    });
    // A task that applies a stored plan shows that plan as its own (and its apply is recorded from it).
    if (plan) await copyPlanForApply(trx, plan, id);
    if (origin.workflow) await origin.workflow.claim(trx, id);
    // An agent's run names the API token it came with (its id and name, never its value).
    const byToken = token ? ` by an AI agent (API token "${token.name}", id ${token.id})` : '';
    await recordEvent(trx, {
      project_id: projectId,
      user_id: origin.userId,
      object_type: 'task',
      object_id: id,
      description: needsApproval
        ? `Task ID ${id} started${byToken} waits for approval`
        : `Task ID ${id} queued for running${byToken}`,
      ...(needsApproval && token
        ? { kind: 'task.agent_queued', params: { task_id: id, token: token.name, token_id: token.id } }
        : {
            kind: 'task.queued',
            params: { task_id: id, ...(token ? { token: token.name, token_id: token.id } : {}) },
          }),
    });
    return id;
  });
  if (deps.config.maxTasksPerTemplate > 0)
    await pruneTemplateTasks(deps.db, template.id, deps.config.maxTasksPerTemplate);
  return id;
}

/**
 * The environment a new task runs with instead of its template's: null when it names none or the template's own
 * (clients echo it). Another one must be of the project (400 otherwise: never followed) and allowed by the template
 * (403). A re-run keeps its original's, checked when the original was created, while the template still allows
 * overrides; otherwise it runs with the template's.
 */
async function environmentOverride(
  deps: Pick<Deps, 'db'>,
  projectId: number,
  template: { environment_id: number | null; task_params: string },
  input: NewTask,
  origin: TaskOrigin,
): Promise<number | null> {
  const id = input.environment_id ?? null;
  if (id === null || id === template.environment_id) return null;
  await assertInProject(deps.db, 'environment', id, projectId, 'environment', 'environment_id');
  if (parseJson<Record<string, unknown>>(template.task_params, {}).allow_override_environment) return id;
  if (origin.rerunOf) return null;
  const error = coded('environment_override_not_allowed');
  throw new AppError(403, error, { environment_id: error });
}

/** A re-run: the original's parameters and commit, started by the caller (secret survey values are gone). */
export async function rerunInput(deps: Pick<Deps, 'db'>, projectId: number, taskId: number) {
  const t = await findProjectTask(deps.db, projectId, taskId);
  if (!t) return null;
  const params = parseJson<Record<string, unknown>>(t.params, {});
  const { limit, tags, skip_tags, ...rest } = params as {
    limit?: string[];
    tags?: string[];
    skip_tags?: string[];
  } & Record<string, unknown>;
  const input: NewTask = {
    template_id: t.template_id,
    message: t.message,
    build_task_id: t.build_task_id,
    debug: t.debug === 1,
    dry_run: t.dry_run === 1,
    diff: t.diff === 1,
    arguments: t.arguments,
    environment: t.environment,
    git_branch: t.git_branch,
    inventory_id: t.inventory_id,
    environment_id: t.environment_id ?? null,
    limit: limit ?? null,
    tags: tags ?? null,
    skip_tags: skip_tags ?? null,
    playbook: t.playbook || null,
    params: rest,
  };
  return { input, commitHash: t.commit_hash, finished: isFinished(t.status) };
}

/** Who answers a run waiting for approval: a member with the run permission, through a session or a token. */
export type Approver = { userId: number; tokenId: string | null };

/**
 * Approves a run an AI agent started (it joins the queue) or declines it (it ends `rejected`, the reason as its
 * message), with an audit event naming who. The token that started the run may not answer it: a person must.
 */
export async function answerApproval(
  deps: Pick<Deps, 'db' | 'tasks'>,
  task: TaskRow,
  by: Approver,
  answer: { approved: true } | { approved: false; reason: string },
) {
  if (task.status !== 'waiting_approval') throw badRequest(coded('not_waiting_approval'));
  if (by.tokenId !== null && task.source_token === by.tokenId) throw forbidden(coded('own_run_approval'));
  const done = answer.approved
    ? await deps.tasks.approve(task.id)
    : await deps.tasks.decline(task.id, answer.reason);
  // Answered (or stopped) by someone else in the meantime.
  if (!done) throw badRequest(coded('not_waiting_approval'));
  await recordEvent(deps.db, {
    project_id: task.project_id,
    user_id: by.userId,
    object_type: 'task',
    object_id: task.id,
    ...(answer.approved
      ? { description: `Task ID ${task.id} approved`, kind: 'task.approved', params: { task_id: task.id } }
      : {
          description: `Task ID ${task.id} rejected${answer.reason ? `: ${answer.reason}` : ''}`,
          kind: 'task.rejected',
          // The console words an event whole: a rejection without a reason says so with a dash.
          params: { task_id: task.id, reason: answer.reason || '—' },
        }),
  });
}
