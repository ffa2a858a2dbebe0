import { z } from 'zod';
import { flag, optionalId, requiredString } from './common';
import { type CodedMessage, coded, issue, issueOf } from './errors';
import { optionalBranch } from './repositories';
import { runnerTagField } from './runners';
import { CRON_MAX, cronText, DEFAULT_CRON } from './schedules';
import { surveyVarSchema, templateSurveyVarSchema } from './surveys';
import { taskViewSchema } from './task-api';
import { apps, templateTypes } from './tasks';
import {
  DEFAULT_PLAN_TTL_HOURS,
  driftStatuses,
  isDriftPattern,
  LOCK_TIMEOUT_MAX,
  lockTimeoutMs,
  PLAN_TTL_HOURS_MAX,
} from './terraform-plan';
import { isStateName } from './terraform-states';
import { checkVaults, templateVaultSchema, vaultColumns, vaultInput } from './vaults';

/** Inventory types each app accepts (bash, powershell, python and pulumi take any). */
export const inventoryTypesForApp: Partial<Record<(typeof apps)[number], readonly string[]>> = {
  ansible: ['static', 'static-yaml', 'file'],
  terraform: ['terraform-workspace'],
  tofu: ['tofu-workspace'],
  terragrunt: ['terragrunt-workspace'],
};

/** Apps whose `playbook` is a file that must be named; for the others it is a sub-directory and may be empty. */
export const appsNeedingPlaybook: readonly string[] = ['ansible', 'bash', 'powershell', 'python'];

export const PLAYBOOK_MAX = 255;

/** Why a playbook path cannot be used, as the template form, the task API and backup restore say it. */
export const playbookPathMessages = {
  absolute: coded('path_absolute', { field: 'playbook' }),
  outside: coded('path_outside', { field: 'playbook' }),
  option: coded('path_option', { field: 'playbook' }),
  control: coded('control_chars', { field: 'playbook' }),
  tooLong: coded('too_long', { field: 'playbook', max: PLAYBOOK_MAX }),
} as const;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * A playbook (ansible, bash, powershell, python) or sub-directory (terraform, tofu, terragrunt, pulumi) is always relative to the repository
 * checkout: never absolute, never leaving it through "..", never read as an option, no control characters.
 * Returns the problem's message, or null when the path is acceptable (an empty path is acceptable here; whether
 * the app needs one is checked separately). The server checks the real path again after checkout (symlinks).
 */
export function playbookPathProblem(path: string): CodedMessage | null {
  if (path.length > PLAYBOOK_MAX) return playbookPathMessages.tooLong;
  if (CONTROL_CHARS.test(path)) return playbookPathMessages.control;
  if (path.startsWith('/')) return playbookPathMessages.absolute;
  if (path.startsWith('-')) return playbookPathMessages.option;
  let depth = 0;
  for (const part of path.split('/')) {
    if (part === '..') depth -= 1;
    else if (part !== '' && part !== '.') depth += 1;
    if (depth < 0) return playbookPathMessages.outside;
  }
  return null;
}

const text = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => v ?? '');

const stringList = () => z.array(z.string().max(255)).max(100);

/** Where a Terraform template's state lives: its configuration's backend (''), or Signalbox's own. */
export const stateBackends = ['', 'builtin'] as const;

const stateBackendMessage = issue('not_one_of', { options: "'' (the configuration's own), builtin" });
const lockTimeoutMessage = issue('lock_timeout_invalid', { max: LOCK_TIMEOUT_MAX });
const planTtlMessage = issue('plan_ttl_invalid', { max: PLAN_TTL_HOURS_MAX });
const driftPatternMessage = issue('drift_pattern_invalid');
/** Drift ignore rules: at most 100 patterns (see globMatcher). */
const driftPatterns = () =>
  z
    .array(z.string({ error: driftPatternMessage }).trim().refine(isDriftPattern, driftPatternMessage), {
      error: driftPatternMessage,
    })
    .max(100, issue('too_many', { max: 100 }));

/** App-specific template parameters (ansible: allow_debug, limit, tags…; terraform: auto_approve…). */
export const templateTaskParams = z
  .object({
    allow_debug: z.boolean().optional(),
    allow_override_inventory: z.boolean().optional(),
    /** A task may run with another environment of the project (its environment_id); every app. */
    allow_override_environment: z.boolean().optional(),
    allow_override_limit: z.boolean().optional(),
    allow_override_tags: z.boolean().optional(),
    allow_override_skip_tags: z.boolean().optional(),
    limit: stringList().optional(),
    tags: stringList().optional(),
    skip_tags: stringList().optional(),
    allow_destroy: z.boolean().optional(),
    allow_auto_approve: z.boolean().optional(),
    auto_approve: z.boolean().optional(),
    override_backend: z.boolean().optional(),
    backend_filename: z.string().max(255).optional(),
    /** terraform, tofu, terragrunt: -lock-timeout, how long a run waits for the state lock (empty: 5m). */
    lock_timeout: z
      .string({ error: lockTimeoutMessage })
      .trim()
      .refine((v) => v === '' || lockTimeoutMs(v) !== null, lockTimeoutMessage)
      .optional(),
    /** terraform, tofu, terragrunt: how many hours a plan-only task's plan may be applied by a later task (24). */
    plan_ttl_hours: z
      .number({ error: planTtlMessage })
      .int(planTtlMessage)
      .min(1, planTtlMessage)
      .max(PLAN_TTL_HOURS_MAX, planTtlMessage)
      .optional(),
    /** A plan is confirmed or applied only by someone other than who started its run. */
    approver_must_differ: z.boolean().optional(),
    /** Check for drift on a cron schedule (drift_cron): a refresh-only plan and a plan, in plan-only mode. */
    drift_check: z.boolean().optional(),
    drift_cron: z.string().trim().max(100).optional(),
    /** Drifted resources whose address matches one of these patterns are not drift. */
    drift_ignore_addresses: driftPatterns().optional(),
    /** Attribute paths (of any resource) whose changes are not drift. */
    drift_ignore_attributes: driftPatterns().optional(),
    /** terraform, tofu, terragrunt: `builtin` keeps the state in Signalbox's own backend (empty: the code's). */
    state_backend: z
      .string({ error: stateBackendMessage })
      .refine((v) => (stateBackends as readonly string[]).includes(v), stateBackendMessage)
      .optional(),
    /** The built-in backend's state name (empty: the workspace's name). */
    state_name: z
      .string({ error: issue('state_name') })
      .trim()
      .refine((v) => v === '' || isStateName(v), issue('state_name'))
      .optional(),
  })
  .catchall(z.union([z.string().max(1000), z.number(), z.boolean(), z.null(), stringList()]))
  .refine((v) => Object.keys(v).length <= 50, issue('too_many', { max: 50 }));
export type TemplateTaskParams = z.infer<typeof templateTaskParams>;

/** `arguments`: empty, or a JSON array of strings. */
export const templateArgsMessage = issue('not_json_array');
export function isTemplateCliArgs(value: string): boolean {
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) && parsed.every((item) => typeof item === 'string');
  } catch {
    return false;
  }
}

/**
 * The template's own cron schedule, saved with the template in one request: the first cron schedule of the
 * template that checks no repository (others are left to the schedule API).
 */
export const templateScheduleInput = z
  .object(
    {
      cron_format: cronText.describe(
        'The cron (5 fields or a nickname such as @daily) the schedule runs on.',
      ),
    },
    { error: 'Schedule must be an object with cron_format, or null' },
  )
  .describe(
    "The template's own cron schedule, stored in the same transaction as the template: an object creates it (active) or changes its cron, null removes it, and leaving the field out leaves the template's schedules as they are.",
  );
export type TemplateScheduleInput = z.infer<typeof templateScheduleInput>;

/** Body of POST templates and PUT templates/{id}. */
export const templateInput = z
  .object({
    id: z.number().int().nullish(),
    project_id: z.number().int().nullish(),
    name: requiredString(100),
    description: text(10_000),
    type: z
      .enum(templateTypes)
      .nullish()
      .transform((v) => v ?? ''),
    app: z
      .enum(['', ...apps])
      .nullish()
      .transform((v) => (v ? v : 'ansible')),
    playbook: z
      .string()
      .trim()
      .max(255)
      .nullish()
      .transform((v) => v ?? ''),
    inventory_id: optionalId(),
    repository_id: optionalId(),
    environment_id: optionalId(),
    vault_key_id: optionalId(),
    vaults: z
      .array(vaultInput)
      .max(10)
      .nullish()
      .transform((v) => v ?? []),
    view_id: optionalId(),
    build_template_id: optionalId(),
    start_version: z
      .string()
      .trim()
      .max(50)
      .nullish()
      .transform((v) => (v ? v : null)),
    autorun: flag(),
    suppress_success_alerts: flag(),
    arguments: z
      .string({ error: templateArgsMessage })
      .trim()
      .max(10_000)
      .nullish()
      .transform((v) => (v ? v : null))
      .refine((v) => v === null || isTemplateCliArgs(v), templateArgsMessage),
    allow_override_args_in_task: flag(),
    allow_override_branch_in_task: flag(),
    allow_parallel_tasks: flag(),
    git_branch: optionalBranch().transform((v) => (v ? v : null)),
    survey_vars: z
      .array(surveyVarSchema)
      .max(100)
      .nullish()
      .transform((v) => v ?? []),
    task_params: templateTaskParams.nullish().transform((v) => v ?? {}),
    /** Swagger's comma-separated ansible limit; stored as task_params.limit. */
    limit: text(1000),
    // Check-new-commits schedule. Absent `check_new_commits` leaves the template's schedules alone.
    check_new_commits: z.boolean().nullish(),
    cron_format: z
      .string()
      .trim()
      .max(CRON_MAX)
      .nullish()
      .transform((v) => (v ? v : DEFAULT_CRON)),
    check_new_commits_repository_id: optionalId(),
    runner_tag: runnerTagField,
    // Absent `schedule` (every Semaphore client) leaves the template's schedules alone.
    schedule: templateScheduleInput.nullish(),
  })
  .superRefine((t, ctx) => {
    const report = (path: string, message: string) => ctx.addIssue({ code: 'custom', message, path: [path] });
    const required = issue('required');
    if (appsNeedingPlaybook.includes(t.app) && t.playbook === '') report('playbook', required);
    const playbookProblem = playbookPathProblem(t.playbook);
    if (playbookProblem) report('playbook', issueOf(playbookProblem));
    if (!t.repository_id) report('repository_id', required);
    if (!t.environment_id) report('environment_id', required);
    if (t.app === 'ansible' && !t.inventory_id) report('inventory_id', required);
    if (t.type === 'build' && !t.start_version) report('start_version', required);
    if (t.type === 'deploy' && !t.build_template_id) report('build_template_id', required);
    if (t.check_new_commits && !t.check_new_commits_repository_id)
      report('check_new_commits_repository_id', required);
    // A template keeps one vault (`vault_key_id` is the short form of a password vault named default): a vault
    // it could not keep is refused rather than dropped, since the playbook would then run without it.
    checkVaults(t.vault_key_id, t.vaults, (path, message) => ctx.addIssue({ code: 'custom', message, path }));
  })
  .transform(({ vaults, limit, ...t }) => {
    const vault = vaultColumns(t.vault_key_id, vaults);
    const task_params =
      limit.trim() && !t.task_params.limit
        ? {
            ...t.task_params,
            limit: limit
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          }
        : t.task_params;
    return { ...t, ...vault, task_params };
  });
export type TemplateInput = z.infer<typeof templateInput>;

/** The latest task of a template, as listed with it (secrets never included). */
export const templateLastTaskSchema = taskViewSchema.omit({ status_detail: true }).extend({
  user_name: z.string().nullable().describe('The name of who started the task.'),
  tpl_alias: z.string().describe("The template's name (Semaphore's TaskWithTpl field)."),
  tpl_type: z.string().describe("The template's type."),
  tpl_app: z.string().describe("The template's app."),
});
export type TemplateLastTask = z.infer<typeof templateLastTaskSchema>;

/** App-specific template parameters as the API answers them (see templateTaskParams). */
export const templateTaskParamsSchema = z
  .strictObject({
    allow_debug: z.boolean().optional(),
    allow_override_inventory: z.boolean().optional(),
    /** A task may run with another environment of the project (its environment_id); every app. */
    allow_override_environment: z.boolean().optional(),
    allow_override_limit: z.boolean().optional(),
    allow_override_tags: z.boolean().optional(),
    allow_override_skip_tags: z.boolean().optional(),
    limit: z.array(z.string()).optional(),
    tags: z.array(z.string()).optional(),
    skip_tags: z.array(z.string()).optional(),
    allow_destroy: z.boolean().optional(),
    allow_auto_approve: z.boolean().optional(),
    auto_approve: z.boolean().optional(),
    override_backend: z.boolean().optional(),
    backend_filename: z.string().optional(),
    lock_timeout: z
      .string()
      .optional()
      .describe(
        'terraform, tofu, terragrunt: how long a run waits for the state lock (-lock-timeout, e.g. 30s, 5m; at most 1h; empty: 5m).',
      ),
    plan_ttl_hours: z
      .number()
      .int()
      .optional()
      .describe(
        `terraform, tofu, terragrunt: how many hours after it was made a plan-only task's plan may be applied by a later task (1 to ${PLAN_TTL_HOURS_MAX}; absent: ${DEFAULT_PLAN_TTL_HOURS}).`,
      ),
    approver_must_differ: z
      .boolean()
      .optional()
      .describe('A plan is confirmed or applied only by someone other than who started its run.'),
    drift_check: z.boolean().optional().describe('Check for drift on the drift_cron schedule.'),
    drift_cron: z.string().optional().describe('The cron schedule of the drift checks.'),
    drift_ignore_addresses: z
      .array(z.string())
      .optional()
      .describe('Resource address patterns (* any text, ? one character) whose drift is ignored.'),
    drift_ignore_attributes: z
      .array(z.string())
      .optional()
      .describe(
        'Attribute path patterns (* one path part), e.g. tags.LastScanned, whose changes are ignored.',
      ),
    state_backend: z
      .string()
      .optional()
      .describe(
        "terraform, tofu, terragrunt: `builtin` keeps the state in Signalbox's built-in backend (the run gets TF_HTTP_* variables); empty: the configuration's own backend.",
      ),
    state_name: z
      .string()
      .optional()
      .describe("The built-in backend's state for this template (empty: the workspace's name)."),
  })
  .catchall(z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string())]));

/** A template as the API answers it. */
export const templateSchema = z.strictObject({
  id: z.number().int(),
  project_id: z.number().int(),
  name: z.string(),
  description: z.string(),
  type: z.enum(templateTypes),
  app: z.enum(apps),
  playbook: z
    .string()
    .describe(
      'The playbook or script (ansible, bash, powershell, python) or sub-directory (terraform, tofu, terragrunt, pulumi) in the repository.',
    ),
  inventory_id: z.number().int().nullable(),
  repository_id: z.number().int().nullable(),
  environment_id: z.number().int().nullable(),
  vault_key_id: z.number().int().nullable(),
  vaults: z
    .array(templateVaultSchema)
    .describe('The vault, in the list shape of Semaphore: none, or one (its password key or its script).'),
  view_id: z.number().int().nullable(),
  build_template_id: z.number().int().nullable().describe('The build template a deploy template deploys.'),
  start_version: z.string().nullable().describe('The first version of a build template.'),
  autorun: z.boolean().describe('A deploy template runs after each successful build.'),
  suppress_success_alerts: z.boolean(),
  arguments: z.string().nullable().describe('CLI args: a JSON array of strings as text, or null.'),
  allow_override_args_in_task: z.boolean(),
  allow_override_branch_in_task: z.boolean(),
  allow_parallel_tasks: z.boolean(),
  git_branch: z.string().nullable().describe("Overrides the repository's branch when set."),
  survey_vars: z.array(templateSurveyVarSchema),
  task_params: templateTaskParamsSchema,
  check_new_commits: z
    .boolean()
    .describe("Derived from the template's single schedule that has a repository (check-new-commits)."),
  cron_format: z.string(),
  check_new_commits_repository_id: z.number().int().nullable(),
  last_task_id: z.number().int().nullable(),
  last_task: templateLastTaskSchema.nullable(),
  tasks: z
    .number()
    .int()
    .describe('How many tasks of the template are kept (Semaphore answers this count too).'),
  runner_tag: z
    .string()
    .nullable()
    .describe("Its tasks run only on a remote runner carrying this tag (Semaphore's runner_tag); null: any."),
  drift: z
    .enum(driftStatuses)
    .nullable()
    .describe('The outcome of its last drift check (terraform, tofu, terragrunt); null: never checked.'),
});
export type Template = z.infer<typeof templateSchema>;
