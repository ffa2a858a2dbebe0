import {
  BUILD_VERSION_REQUIRED,
  issue,
  isTemplateCliArgs,
  type Template,
  templateArgsMessage,
} from '@signalbox/contracts';

export type RunValues = {
  message: string;
  build_task_id: number;
  survey: Record<string, string>;
  debug: boolean;
  dry_run: boolean;
  diff: boolean;
  limit: string;
  tags: string;
  skip_tags: string;
  inventory_id: number;
  git_branch: string;
  arguments: string;
  /** Extra variables of an earlier task that no survey variable asks for (a re-run keeps them). */
  extraEnvironment?: Record<string, unknown>;
  /** App parameters of an earlier task besides the ones the form shows (a re-run keeps them). */
  extraParams?: Record<string, unknown>;
  /** Run the commit this earlier task checked out instead of the branch head. */
  commit_of_task?: number | null;
};

/** The form's answers for a new task of the template, from its defaults. */
export function newRunValues(template: Template): RunValues {
  const params = template.task_params ?? {};
  return {
    message: '',
    build_task_id: 0,
    survey: Object.fromEntries(template.survey_vars.map((v) => [v.name, v.default_value ?? ''])),
    debug: false,
    dry_run: false,
    diff: false,
    limit: (params.limit ?? []).join(', '),
    tags: (params.tags ?? []).join(', '),
    skip_tags: (params.skip_tags ?? []).join(', '),
    inventory_id: template.inventory_id ?? 0,
    git_branch: template.git_branch ?? '',
    arguments: template.arguments ?? '[]',
  };
}

/** What an earlier task ran with, as far as a re-run needs it. */
export type EarlierTask = {
  id: number;
  message: string;
  build_task_id?: number | null;
  commit_hash?: string | null;
  environment?: string;
  arguments?: string | null;
  git_branch?: string | null;
  inventory_id?: number | null;
  params?: Record<string, unknown>;
  debug?: boolean;
  dry_run?: boolean;
  diff?: boolean;
};

const parseObject = (text: string | undefined): Record<string, unknown> => {
  try {
    const value = JSON.parse(text || '{}') as unknown;
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
};
const joinList = (value: unknown) =>
  Array.isArray(value) ? value.filter((v) => typeof v === 'string').join(', ') : undefined;

/**
 * The form's answers for a re-run of `task`: its message, survey answers, options and overrides. Secret survey
 * answers are not kept after a run, so their inputs start empty; the task's commit is run again unless the user
 * picks the branch head.
 */
export function rerunValues(template: Template, task: EarlierTask): RunValues {
  const base = newRunValues(template);
  const environment = parseObject(task.environment);
  const survey = { ...base.survey };
  for (const v of template.survey_vars) {
    if (v.type === 'secret') survey[v.name] = '';
    else if (v.name in environment) {
      const value = environment[v.name];
      survey[v.name] = value === null || value === undefined ? '' : String(value);
    }
  }
  const surveyNames = new Set(template.survey_vars.map((v) => v.name));
  const extraEnvironment = Object.fromEntries(
    Object.entries(environment).filter(([name]) => !surveyNames.has(name)),
  );
  const { limit, tags, skip_tags, debug: _d, dry_run: _r, diff: _f, ...extraParams } = task.params ?? {};
  return {
    ...base,
    message: task.message ?? '',
    build_task_id: task.build_task_id ?? 0,
    survey,
    debug: !!task.debug,
    dry_run: !!task.dry_run,
    diff: !!task.diff,
    limit: joinList(limit) ?? base.limit,
    tags: joinList(tags) ?? base.tags,
    skip_tags: joinList(skip_tags) ?? base.skip_tags,
    inventory_id: task.inventory_id ?? base.inventory_id,
    git_branch: task.git_branch ?? base.git_branch,
    arguments: task.arguments ?? base.arguments,
    extraEnvironment,
    extraParams,
    commit_of_task: task.commit_hash ? task.id : null,
  };
}

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * Checks the new-task form and builds the POST tasks body. Errors map a field to its English
 * message; a required survey variable answers 'required' so the form names it by its title.
 */
export function validateRun(template: Template, v: RunValues) {
  const errors: Record<string, string> = {};
  const environment: Record<string, unknown> = { ...(v.extraEnvironment ?? {}) };
  const secret: Record<string, unknown> = {};
  if (template.type === 'deploy' && !v.build_task_id) errors.build_task_id = BUILD_VERSION_REQUIRED;
  for (const sv of template.survey_vars) {
    const value = (v.survey[sv.name] ?? '').trim();
    const key = `survey.${sv.name}`;
    if (value === '') {
      if (sv.required) errors[key] = 'required';
      continue;
    }
    if (sv.type === 'int') {
      if (!/^\d+$/.test(value)) errors[key] = issue('not_integer');
      else environment[sv.name] = Number(value);
    } else if (sv.type === 'secret') secret[sv.name] = value;
    else environment[sv.name] = value;
  }
  let args: string | undefined;
  if (template.allow_override_args_in_task) {
    const text = v.arguments.trim();
    if (text !== '' && !isTemplateCliArgs(text)) errors.arguments = templateArgsMessage;
    else args = text || undefined;
  }
  if (Object.keys(errors).length > 0) return { errors, body: null };
  const params = template.task_params ?? {};
  const body: Record<string, unknown> = {
    template_id: template.id,
    message: v.message.trim(),
    debug: v.debug,
    dry_run: v.dry_run,
    diff: v.diff,
    environment: JSON.stringify(environment),
  };
  if (Object.keys(secret).length > 0) body.secret = JSON.stringify(secret);
  if (v.extraParams && Object.keys(v.extraParams).length > 0) body.params = v.extraParams;
  if (v.commit_of_task) body.commit_of_task = v.commit_of_task;
  if (template.type === 'deploy') body.build_task_id = v.build_task_id;
  if (args !== undefined) body.arguments = args;
  if (params.allow_override_limit) body.limit = list(v.limit);
  if (params.allow_override_tags) body.tags = list(v.tags);
  if (params.allow_override_skip_tags) body.skip_tags = list(v.skip_tags);
  if (params.allow_override_inventory && v.inventory_id) body.inventory_id = v.inventory_id;
  if (template.allow_override_branch_in_task && v.git_branch.trim()) body.git_branch = v.git_branch.trim();
  return { errors, body };
}
