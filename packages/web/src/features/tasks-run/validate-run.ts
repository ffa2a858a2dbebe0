import {
  BUILD_VERSION_REQUIRED,
  isTemplateCliArgs,
  type Template,
  templateArgsMessage,
} from '@signalbox/contracts';
import { type Answers, type SurveyField, surveyBody } from '../surveys';

export type RunValues = {
  message: string;
  build_task_id: number;
  /** The survey's answers as its inputs edit them; filled from the survey's schema once it has loaded. */
  survey: Answers;
  /** An earlier task's survey answers (typed, secrets not kept), for a re-run to start from. */
  earlierSurvey?: Record<string, unknown>;
  debug: boolean;
  dry_run: boolean;
  diff: boolean;
  limit: string;
  tags: string;
  skip_tags: string;
  inventory_id: number;
  /** The environment the task runs with (the template's unless it allows another). */
  environment_id: number;
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
    survey: {},
    debug: false,
    dry_run: false,
    diff: false,
    limit: (params.limit ?? []).join(', '),
    tags: (params.tags ?? []).join(', '),
    skip_tags: (params.skip_tags ?? []).join(', '),
    inventory_id: template.inventory_id ?? 0,
    environment_id: template.environment_id ?? 0,
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
  environment_id?: number | null;
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
  const surveyNames = new Set(template.survey_vars.map((v) => v.name));
  const earlierSurvey = Object.fromEntries(
    Object.entries(environment).filter(([name]) => surveyNames.has(name)),
  );
  const extraEnvironment = Object.fromEntries(
    Object.entries(environment).filter(([name]) => !surveyNames.has(name)),
  );
  const { limit, tags, skip_tags, debug: _d, dry_run: _r, diff: _f, ...extraParams } = task.params ?? {};
  return {
    ...base,
    message: task.message ?? '',
    build_task_id: task.build_task_id ?? 0,
    earlierSurvey,
    debug: !!task.debug,
    dry_run: !!task.dry_run,
    diff: !!task.diff,
    limit: joinList(limit) ?? base.limit,
    tags: joinList(tags) ?? base.tags,
    skip_tags: joinList(skip_tags) ?? base.skip_tags,
    inventory_id: task.inventory_id ?? base.inventory_id,
    environment_id: task.environment_id ?? base.environment_id,
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
 * Checks the new-task form's own fields and builds the POST tasks body. Errors map a field to its coded message.
 * The survey's answers are not checked here: the server checks them against the survey's schema and answers each
 * field's error (`survey.<name>`).
 */
export function validateRun(template: Template, v: RunValues, fields: SurveyField[]) {
  const errors: Record<string, string> = {};
  const answers = surveyBody(fields, v.survey);
  const environment: Record<string, unknown> = { ...(v.extraEnvironment ?? {}), ...answers.environment };
  const secret = answers.secret;
  if (template.type === 'deploy' && !v.build_task_id) errors.build_task_id = BUILD_VERSION_REQUIRED;
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
  if (params.allow_override_environment && v.environment_id && v.environment_id !== template.environment_id)
    body.environment_id = v.environment_id;
  if (template.allow_override_branch_in_task && v.git_branch.trim()) body.git_branch = v.git_branch.trim();
  return { errors, body };
}
