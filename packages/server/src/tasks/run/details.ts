import { errorMessage, isStateName } from '@signalbox/contracts';
import type { Db } from '../../db';
import { parseJsonObject } from '../../db/values';
import type { SecretBox } from '../../lib/crypto';
import { issueTaskCredential } from '../state-credentials.store';
import {
  environmentSecrets,
  findEnvironment,
  findInventory,
  findProject,
  findRepository,
  findTask,
  findTemplate,
  findUserName,
  integrationEnvNames,
  type TaskRow,
} from '../store';
import { findTaskPlanRow, openStoredPlan, planRefusal, type StoredPlan } from '../terraform-plans.store';
import { decodeSecretValue, type JobDetails, type StateBackendAccess, TaskFailed } from './job';
import { surveyVarsOf, unansweredSurveyVars } from './survey-answers';

/** The version a deploy task deploys: the build at the end of its build_task_id chain. */
export async function incomingVersion(deps: { db: Db }, buildTaskId: number | null): Promise<string | null> {
  let id = buildTaskId;
  for (let hops = 0; id && hops < 50; hops++) {
    const t = await findTask(deps.db, id);
    if (!t) return null;
    const tpl = await findTemplate(deps.db, t.template_id);
    if (tpl?.type !== 'deploy') return t.version;
    id = t.build_task_id;
  }
  return null;
}

/** Names that become process environment variables: letters, digits and "_", not starting with a digit. */
const isEnvName = (name: string) => /^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name);

/**
 * The values an integration extracted as environment variables, as process environment variables of its task
 * (they are in the task's environment JSON too, as extra variables, as the peer passes them). Only the variables the
 * integration declares as such count, read from the task's environment JSON; where the integration's own default
 * environment names the same key, that value is the one stored there.
 */
async function integrationEnvVars(db: Db, task: TaskRow): Promise<Record<string, string>> {
  if (task.integration_id == null) return {};
  const declared = (await integrationEnvNames(db, task.integration_id)).filter(isEnvName);
  const values = parseJsonObject(task.environment);
  const env: Record<string, string> = {};
  for (const name of declared) {
    if (!Object.hasOwn(values, name)) continue;
    const value = values[name];
    env[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return env;
}

/**
 * Loads everything a run needs: template, project, inventory and environment (the task's overrides when allowed),
 * keys, secrets.
 */
export async function loadDetails(deps: { db: Db; box: SecretBox }, task: TaskRow): Promise<JobDetails> {
  const template = await findTemplate(deps.db, task.template_id);
  if (!template) throw new TaskFailed(`Template ${task.template_id} not found`);
  const project = await findProject(deps.db, task.project_id);
  if (!project) throw new TaskFailed(`Project ${task.project_id} not found`);
  const templateParams = parseJsonObject(template.task_params);
  const inventoryId =
    task.inventory_id && templateParams.allow_override_inventory ? task.inventory_id : template.inventory_id;
  const inventory = inventoryId ? ((await findInventory(deps.db, project.id, inventoryId)) ?? null) : null;
  if (inventoryId && !inventory) throw new TaskFailed(`Inventory ${inventoryId} not found`);
  const repository = template.repository_id
    ? ((await findRepository(deps.db, project.id, template.repository_id)) ?? null)
    : null;
  if (template.repository_id && !repository)
    throw new TaskFailed(`Repository ${template.repository_id} not found`);
  // A task's own environment counts while its template allows the override (as its inventory's does).
  const environmentId =
    task.environment_id && templateParams.allow_override_environment
      ? task.environment_id
      : template.environment_id;
  const environment = environmentId
    ? ((await findEnvironment(deps.db, project.id, environmentId)) ?? null)
    : null;
  if (task.environment_id && environmentId === task.environment_id && !environment)
    throw new TaskFailed(`Environment ${environmentId} not found`);

  const extraVars = { ...parseJsonObject(environment?.json), ...parseJsonObject(task.environment) };
  const envVars: Record<string, string> = {};
  for (const [k, v] of Object.entries(parseJsonObject(environment?.env)))
    envVars[k] = typeof v === 'string' ? v : JSON.stringify(v);
  Object.assign(envVars, await integrationEnvVars(deps.db, task));
  const secretVars: Record<string, string> = {};
  const secretEnv: Record<string, string> = {};
  if (environment) {
    for (const row of await environmentSecrets(deps.db, environment.id)) {
      let value: string;
      try {
        value = decodeSecretValue(deps.box, row);
      } catch {
        throw new TaskFailed(`Cannot read environment secret "${row.name}"`);
      }
      if (row.owner === 'variable' || row.type === 'var') secretVars[row.name] = value;
      else secretEnv[row.name] = value;
    }
  }
  let surveySecrets: Record<string, unknown> = {};
  if (task.secret) {
    try {
      surveySecrets = parseJsonObject(deps.box.open(task.secret));
    } catch {
      throw new TaskFailed('Cannot read the secret survey values');
    }
  }
  const unanswered = unansweredSurveyVars(surveyVarsOf(template.survey_vars), {
    ...extraVars,
    ...surveySecrets,
  });
  // A task that applies a stored plan passes no variable: the plan holds them.
  if (task.plan_of) unanswered.length = 0;
  const named = unanswered.map((v) => `"${v.title}" (${v.name})`).join(', ');
  if (unanswered.length === 1)
    throw new TaskFailed(
      `Required survey variable ${named} has no value: the task was started without an answer to it`,
    );
  if (unanswered.length > 1)
    throw new TaskFailed(
      `Required survey variables ${named} have no value: the task was started without answers to them`,
    );
  const user = task.user_id ? await findUserName(deps.db, task.user_id) : undefined;
  const applyPlan = task.plan_of ? await storedPlanOf(deps, task, template, templateParams) : null;
  return {
    task,
    template,
    project,
    inventory,
    repository,
    environment,
    extraVars,
    envVars,
    secretVars,
    secretEnv,
    surveySecrets,
    params: parseJsonObject(task.params),
    templateParams,
    incomingVersion: template.type === 'deploy' ? await incomingVersion(deps, task.build_task_id) : null,
    userName: user?.username ?? '',
    applyPlan,
    stateBackend: await stateBackendOf(deps.db, task, template.app, templateParams, inventory?.inventory),
  };
}

/**
 * The stored plan a task applies, checked again when it runs (it may have waited in the queue): still stored,
 * not expired, and no newer apply on its workspace. Its digest is checked by the executor against the file.
 */
async function storedPlanOf(
  deps: { db: Db; box: SecretBox },
  task: TaskRow,
  template: { id: number },
  templateParams: Record<string, unknown>,
): Promise<StoredPlan> {
  const planTask = task.plan_of as number;
  const row = await findTaskPlanRow(deps.db, task.project_id, planTask);
  let stored: StoredPlan | null = null;
  try {
    stored = row ? openStoredPlan(deps.box, row) : null;
  } catch {
    throw new TaskFailed(`Cannot read the stored plan of task ${planTask}`);
  }
  if (!row || !stored)
    throw new TaskFailed(errorMessage({ code: 'plan_not_stored', params: { id: planTask } }));
  const refusal = await planRefusal(deps.db, template, templateParams, row);
  if (refusal) {
    const { code, ...params } = refusal;
    const message = errorMessage({ code, params: { id: planTask, ...params } } as never);
    throw new TaskFailed(message, message);
  }
  return stored;
}

const TERRAFORM_APPS = new Set(['terraform', 'tofu', 'terragrunt']);

/**
 * The built-in state backend's access for a run whose template uses it (`task_params.state_backend: builtin`):
 * the state named by `task_params.state_name`, else the workspace's name (the http backend has no workspaces of
 * its own, so each workspace is a state), and new credentials of this run.
 */
async function stateBackendOf(
  db: Db,
  task: TaskRow,
  app: string,
  params: Record<string, unknown>,
  workspace: string | undefined,
): Promise<StateBackendAccess | null> {
  if (!TERRAFORM_APPS.has(app) || params.state_backend !== 'builtin') return null;
  const named = typeof params.state_name === 'string' ? params.state_name.trim() : '';
  const state = named || workspace?.trim() || 'default';
  if (!isStateName(state))
    throw new TaskFailed(`State name ${JSON.stringify(state)} cannot name a state of the built-in backend`);
  const { username, password } = await issueTaskCredential(db, task);
  return { state, path: `/api/project/${task.project_id}/terraform/states/${state}`, username, password };
}
