import {
  coded,
  inventoryTypesForApp,
  type Template,
  type TemplateInput,
  templateTaskParamsSchema,
  templateVaultsOf,
} from '@signalbox/contracts';
import { assertInProject, assertUnused } from '../../access/refs.store';
import { recordNamedEvent } from '../../audit/audit.store';
import type { Db } from '../../db';
import { transaction } from '../../db/transaction';
import { fromBool, parseJson, toBool } from '../../db/values';
import type { Deps } from '../../deps';
import { fieldError, found, notFound } from '../../lib/errors';
import { templateSurveyVarsOf } from '../../tasks/run/survey-answers';
import { driftStatusOf } from '../../tasks/terraform-plans.store';
import { assertCron, assertSameProject, commitCheckSchedules, refreshScheduler } from '../schedules';
import { applyCommitCheck, type CommitCheck, commitCheckOf } from './commit-check';
import { applyDriftCheck, checkDriftCheck } from './drift-check';
import { applyFormSchedule, checkFormSchedule } from './form-schedule';
import {
  deleteTemplateCascade,
  findTemplateRow,
  insertTemplate,
  inventoryTypeOf,
  lastTasks,
  listTemplateRows,
  namesById,
  type TemplateRow,
  unfinishedTaskIds,
  updateTemplate,
} from './templates.store';

/** Who saves a template: their id, and whether they are an administrator (for vault scripts). */
type Actor = { id: number; admin?: number };

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const listParams = new Set(['limit', 'tags', 'skip_tags']);

/**
 * Stored task params with the declared types. A restored backup keeps its params as written: a comma-separated
 * limit or tag list reads as a list (as the runs read it), and entries of other types are not answered.
 */
function taskParamsOf(stored: unknown): Template['task_params'] {
  if (!isRecord(stored)) return {};
  // What the template form wrote fits as it is; only a restored backup's params need the entries sorted out.
  const whole = templateTaskParamsSchema.safeParse(stored);
  if (whole.success) return whole.data;
  const entries = Object.entries(stored).map(([key, value]): [string, unknown] =>
    listParams.has(key) && typeof value === 'string'
      ? [
          key,
          value
            .split(',')
            .map((item) => item.trim())
            .filter(Boolean),
        ]
      : [key, value],
  );
  const fitting = entries.filter(
    ([key, value]) => templateTaskParamsSchema.safeParse({ [key]: value }).success,
  );
  return templateTaskParamsSchema.parse(Object.fromEntries(fitting));
}

/** What a template's answer says of its own row: everything but its schedules', drift's and tasks' parts. */
export type TemplateOwnFields = Omit<
  Template,
  keyof CommitCheck | 'last_task_id' | 'last_task' | 'tasks' | 'drift'
>;

/** The fields of a template's answer that come from its own row. */
export function templateOwnFields(row: TemplateRow): TemplateOwnFields {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    description: row.description,
    type: row.type as Template['type'],
    app: (row.app || 'ansible') as Template['app'],
    playbook: row.playbook,
    inventory_id: row.inventory_id,
    repository_id: row.repository_id,
    environment_id: row.environment_id,
    vault_key_id: row.vault_key_id,
    vaults: templateVaultsOf(row),
    view_id: row.view_id,
    runner_tag: row.runner_tag ?? null,
    build_template_id: row.build_template_id,
    start_version: row.start_version,
    autorun: toBool(row.autorun),
    suppress_success_alerts: toBool(row.suppress_success_alerts),
    arguments: row.arguments,
    allow_override_args_in_task: toBool(row.allow_override_args_in_task),
    allow_override_branch_in_task: toBool(row.allow_override_branch_in_task),
    allow_parallel_tasks: toBool(row.allow_parallel_tasks),
    git_branch: row.git_branch,
    survey_vars: templateSurveyVarsOf(parseJson<unknown>(row.survey_vars, [])),
    task_params: taskParamsOf(parseJson<unknown>(row.task_params, {})),
  };
}

/** A template's drift as its answer shows it: only the two states a check leaves. */
export const driftOf = (drift: string | undefined): Template['drift'] =>
  drift === 'drifted' || drift === 'in_sync' ? drift : null;

function toTemplate(
  row: TemplateRow,
  commitCheck: CommitCheck,
  last: Template['last_task'],
  tasks: number,
  drift: string | undefined,
): Template {
  return {
    ...templateOwnFields(row),
    ...commitCheck,
    last_task_id: last?.id ?? null,
    last_task: last,
    tasks,
    drift: driftOf(drift),
  };
}

/** A template of the project with everything parsed, or undefined. */
export async function findTemplate(db: Db, projectId: number, id: number): Promise<Template | undefined> {
  const row = await findTemplateRow(db, projectId, id);
  if (!row) return undefined;
  const [schedules, last, drift] = await Promise.all([
    commitCheckSchedules(db, id),
    lastTasks(db, projectId, [id]),
    driftStatusOf(db, projectId, id),
  ]);
  return toTemplate(row, commitCheckOf(schedules), last.get(id) ?? null, Number(row.task_count), drift);
}

/** The parsed template (used by the task engine); 404 "Template not found" when it is not in the project. */
export async function getTemplate(db: Db, projectId: number, id: number): Promise<Template> {
  const template = await findTemplate(db, projectId, id);
  if (!template) throw notFound('template');
  return template;
}

export const templateSorts = [
  'name',
  'playbook',
  'inventory',
  'environment',
  'repository',
  'ssh_key',
] as const;
export type TemplateSort = { sort?: (typeof templateSorts)[number]; order?: 'asc' | 'desc' };

/** `ssh_key` is accepted for Swagger compatibility; templates have no key column, so it sorts by name. */
/** What the templates list sorts by. */
type SortFields = Pick<
  Template,
  'id' | 'name' | 'playbook' | 'inventory_id' | 'environment_id' | 'repository_id'
>;

/**
 * One collator for every sort (`localeCompare` builds one per call), made by the first sort: making one reads ICU's
 * collation data into memory (≈ 2.5 MB), which a server that has not listed templates yet does not need.
 */
let collator: Intl.Collator | undefined;

/** Sorts templates (or what a list keeps of them: `fields` reads each one's) as the list's query asks. */
export async function sortTemplates<T>(
  db: Db,
  projectId: number,
  list: T[],
  opts: TemplateSort,
  fields: (item: T) => SortFields,
): Promise<T[]> {
  const sort = opts.sort ?? 'name';
  const names = (table: 'inventory' | 'environment' | 'repository') => namesById(db, projectId, table);
  let key: (t: SortFields) => string;
  if (sort === 'playbook') key = (t) => t.playbook;
  else if (sort === 'inventory') {
    const m = await names('inventory');
    key = (t) => (t.inventory_id ? (m.get(t.inventory_id) ?? '') : '');
  } else if (sort === 'environment') {
    const m = await names('environment');
    key = (t) => (t.environment_id ? (m.get(t.environment_id) ?? '') : '');
  } else if (sort === 'repository') {
    const m = await names('repository');
    key = (t) => (t.repository_id ? (m.get(t.repository_id) ?? '') : '');
  } else key = (t) => t.name;
  const sign = opts.order === 'desc' ? -1 : 1;
  const keyed = list.map((item) => {
    const f = fields(item);
    return { item, key: key(f), id: f.id };
  });
  const memoKey = `${projectId}:${sort}:${sign}:${keyed.length}`;
  const last = lastSorts.get(memoKey);
  if (last && keyed.every((k) => last.keys.get(k.id) === k.key)) {
    const byId = new Map(keyed.map((k) => [k.id, k.item]));
    return last.ids.map((id) => byId.get(id) as T);
  }
  collator ??= new Intl.Collator();
  const { compare } = collator;
  keyed.sort((a, b) => sign * (compare(a.key, b.key) || a.id - b.id));
  lastSorts.delete(memoKey);
  if (lastSorts.size >= MAX_LAST_SORTS) lastSorts.delete(lastSorts.keys().next().value as string);
  lastSorts.set(memoKey, { keys: new Map(keyed.map((k) => [k.id, k.key])), ids: keyed.map((k) => k.id) });
  return keyed.map((k) => k.item);
}

/**
 * The last order of each sorted list (by project, sort, direction and length): the ids in order and the key each
 * was sorted by. The same ids with the same keys sort the same way, so a list whose keys did not change since is
 * put in that order without comparing again (the collator takes about 1.5 ms for 1,000 names, most of a list read
 * whose parts were kept). Checked key by key, so a list of other templates or changed names is sorted anew.
 */
const lastSorts = new Map<string, { keys: Map<number, string>; ids: number[] }>();
const MAX_LAST_SORTS = 64;

/** Checks every reference of the template against the project (ids of another project are a 400). */
async function checkReferences(
  deps: Pick<Deps, 'db' | 'config'>,
  projectId: number,
  input: TemplateInput,
  selfId?: number,
) {
  const { db } = deps;
  // Only the apps the server's registry has active (SIGNALBOX_APPS) may be chosen.
  if (!deps.config.apps[input.app].active) {
    throw fieldError('app', coded('app_inactive', { app: input.app }));
  }
  assertSameProject(input.project_id, projectId);
  await assertInProject(db, 'repository', input.repository_id, projectId, 'repository', 'repository_id');
  await assertInProject(db, 'environment', input.environment_id, projectId, 'environment', 'environment_id');
  await assertInProject(db, 'access_key', input.vault_key_id, projectId, 'vault_key', 'vault_key_id');
  await assertInProject(db, 'view', input.view_id, projectId, 'view', 'view_id');
  await assertInProject(db, 'inventory', input.inventory_id, projectId, 'inventory', 'inventory_id');
  // What a survey's options come from is the project's own too.
  for (const { options_source: source } of input.survey_vars) {
    if (source?.type === 'inventory_hosts' || source?.type === 'inventory_groups')
      await assertInProject(db, 'inventory', source.inventory_id, projectId, 'inventory', 'survey_vars');
    else if (source?.type === 'option_list')
      await assertInProject(
        db,
        'option_list',
        source.option_list_id,
        projectId,
        'option_list',
        'survey_vars',
      );
    else if (source?.type === 'http')
      await assertInProject(db, 'access_key', source.key_id, projectId, 'key', 'survey_vars');
  }
  if (input.inventory_id) {
    const inventory = found(await inventoryTypeOf(db, projectId, input.inventory_id), 'inventory');
    const allowed = inventoryTypesForApp[input.app];
    if (allowed && !allowed.includes(inventory.type)) {
      throw fieldError(
        'inventory_id',
        coded('app_needs_inventory_type', { app: input.app, types: allowed.join(', ') }),
      );
    }
  }
  await assertInProject(
    db,
    'template',
    input.build_template_id,
    projectId,
    'build_template',
    'build_template_id',
  );
  if (input.type === 'deploy' && input.build_template_id) {
    const build = await findTemplateRow(db, projectId, input.build_template_id);
    if (build?.type !== 'build' || build.id === selfId) {
      throw fieldError('build_template_id', coded('build_template_invalid'));
    }
  }
  checkDriftCheck(input);
  if (input.check_new_commits) {
    assertCron(input.cron_format);
    await assertInProject(
      db,
      'repository',
      input.check_new_commits_repository_id,
      projectId,
      'repository',
      'check_new_commits_repository_id',
    );
  }
}

function columns(input: TemplateInput) {
  return {
    name: input.name,
    description: input.description,
    type: input.type,
    app: input.app,
    playbook: input.playbook,
    inventory_id: input.inventory_id,
    repository_id: input.repository_id,
    environment_id: input.environment_id,
    vault_key_id: input.vault_key_id,
    vault_name: input.vault_name,
    vault_script: input.vault_script,
    view_id: input.view_id,
    // Only deploy templates follow a build; a build keeps its start version.
    build_template_id: input.type === 'deploy' ? input.build_template_id : null,
    start_version: input.type === 'build' ? input.start_version : null,
    autorun: fromBool(input.type === 'deploy' && input.autorun),
    suppress_success_alerts: fromBool(input.suppress_success_alerts),
    arguments: input.arguments,
    allow_override_args_in_task: fromBool(input.allow_override_args_in_task),
    allow_override_branch_in_task: fromBool(input.allow_override_branch_in_task),
    allow_parallel_tasks: fromBool(input.allow_parallel_tasks),
    git_branch: input.git_branch,
    survey_vars: JSON.stringify(input.survey_vars),
    task_params: JSON.stringify(input.task_params),
    runner_tag: input.runner_tag,
  };
}

/**
 * Stores a new template with its check-new-commits and own schedules and their events in one transaction: every
 * check runs first, and a failure on the way leaves nothing of it behind.
 */
export async function createTemplate(
  deps: Pick<Deps, 'db' | 'dialect' | 'log' | 'scheduler' | 'config'>,
  user: Actor,
  projectId: number,
  input: TemplateInput,
) {
  await checkReferences(deps, projectId, input);
  assertMaySetVaultScript(user, null, input);
  await checkFormSchedule(deps.db, input);
  const { id, scheduled } = await transaction(deps.db, async (trx) => {
    const id = await insertTemplate(trx, deps.dialect, { project_id: projectId, ...columns(input) });
    await recordNamedEvent(trx, user, projectId, {
      type: 'template',
      label: 'Template',
      id,
      name: input.name,
      action: 'created',
    });
    return { id, scheduled: await applySchedules(trx, deps, user, projectId, id, input) };
  });
  if (scheduled) await refreshScheduler(deps);
  return getTemplate(deps.db, projectId, id);
}

/** Applies both schedule parts of the body; whether either changed a schedule. */
async function applySchedules(
  trx: Db,
  deps: Pick<Deps, 'dialect'>,
  user: Actor,
  projectId: number,
  id: number,
  input: TemplateInput,
) {
  const commitCheck = await applyCommitCheck({ db: trx, dialect: deps.dialect }, user, projectId, id, input);
  const own = await applyFormSchedule(trx, deps.dialect, user, projectId, id, input);
  const drift = await applyDriftCheck(trx, deps.dialect, user, projectId, id, input);
  return commitCheck || own || drift;
}

/** Stores a template's changes with its schedules' and their events in one transaction (as createTemplate). */
export async function changeTemplate(
  deps: Pick<Deps, 'db' | 'dialect' | 'log' | 'scheduler' | 'config'>,
  user: Actor,
  projectId: number,
  id: number,
  input: TemplateInput,
) {
  const current = found(await findTemplateRow(deps.db, projectId, id), 'template');
  await checkReferences(deps, projectId, input, id);
  assertMaySetVaultScript(user, current.vault_script, input);
  if (input.type !== 'build') await assertNotBuildOfOthers(deps, projectId, id);
  await checkFormSchedule(deps.db, input, id);
  const scheduled = await transaction(deps.db, async (trx) => {
    await updateTemplate(trx, id, columns(input));
    await recordNamedEvent(trx, user, projectId, {
      type: 'template',
      label: 'Template',
      id,
      name: input.name,
      action: 'updated',
    });
    return applySchedules(trx, deps, user, projectId, id, input);
  });
  if (scheduled) await refreshScheduler(deps);
}

/**
 * A vault password script runs on the machine that runs the task, and an absolute path names any program there:
 * only an administrator may set one or change its path. Others may keep a template's script as it is (saving the
 * template with it unchanged) or remove it.
 */
function assertMaySetVaultScript(user: Actor, current: string | null, input: TemplateInput) {
  if (!input.vault_script || input.vault_script === current || user.admin === 1) return;
  throw fieldError('vaults.0.script', coded('vault_script_admin_only'), 403);
}

/** A build template that deploy templates follow cannot stop being a build template. */
async function assertNotBuildOfOthers(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  const current = await findTemplateRow(deps.db, projectId, id);
  if (current?.type !== 'build') return;
  const users = (await listTemplateRows(deps.db, projectId)).filter(
    (t) => t.build_template_id === id && t.id !== id,
  );
  if (users.length > 0) {
    throw fieldError(
      'type',
      coded('build_template_in_use', { templates: users.map((t) => t.name).join(', ') }),
    );
  }
}

export async function removeTemplate(
  deps: Pick<Deps, 'db' | 'log' | 'tasks' | 'scheduler'>,
  user: Actor,
  projectId: number,
  id: number,
) {
  const template = await getTemplate(deps.db, projectId, id);
  await assertUnused(deps.db, projectId, 'template', id);
  // Its tasks go with it, so none may keep running against a template that no longer exists.
  for (const taskId of await unfinishedTaskIds(deps.db, id)) {
    try {
      await deps.tasks.stop(projectId, taskId, true);
    } catch (err) {
      deps.log.warn({ err, taskId }, 'could not stop a task of a deleted template');
    }
  }
  // The template, everything that goes with it and the event are one change.
  await transaction(deps.db, async (trx) => {
    await deleteTemplateCascade(trx, projectId, id);
    await recordNamedEvent(trx, user, projectId, {
      type: 'template',
      label: 'Template',
      id,
      name: template.name,
      action: 'deleted',
    });
  });
  await refreshScheduler(deps);
}
