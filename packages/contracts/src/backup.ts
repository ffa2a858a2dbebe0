import { z } from 'zod';
import { jsonDepth, MAX_JSON_DEPTH } from './common';
import { issue, issueOf } from './errors';
import { keyTypes } from './keys';
import { taskRetentionDays } from './projects';
import { branchMessages, isBranchName, isUsableRepositoryUrl } from './repositories';
import { runnerTagField } from './runners';
import { RUN_AT_FORMAT, scheduleTypes } from './schedules';
import { PLAYBOOK_MAX, playbookPathProblem } from './templates';
import { stateNameSchema } from './terraform-states';

/**
 * The project backup of GET project/{id}/backup and POST projects/restore, in the peer's format: objects refer to
 * each other by name, never by id, and secrets are not included. The restore schema is lenient where the peer's
 * backups differ (nulls for empty values, extra fields, survey variables as text) and bounded everywhere.
 */

const MAX_ITEMS = 5000;

const list = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .max(MAX_ITEMS)
    .nullish()
    .transform((v) => v ?? []);

const name = (max = 255) => z.string().trim().min(1).max(max);

const text = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => v ?? '');

const nullableText = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => (v ? v : null));

/** A reference to another object of the backup by its name; empty means none. */
const ref = () =>
  z
    .string()
    .max(255)
    .nullish()
    .transform((v) => (v?.trim() ? v.trim() : null));

const bool = (fallback = false) =>
  z
    .boolean()
    .nullish()
    .transform((v) => v ?? fallback);

/** A lowercase identifier such as an app or inventory type. */
const slug = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .regex(/^[a-z0-9_-]*$/)
    .nullish()
    .transform((v) => v ?? '');

const choice = <const T extends readonly string[]>(values: T, fallback: T[number]) =>
  z
    .string()
    .nullish()
    .transform((v) => (v ? v : fallback))
    .refine(
      (v) => (values as readonly string[]).includes(v),
      issue('not_one_of', { options: values.join(', ') }),
    )
    .transform((v) => v as T[number]);

const isJson = (v: string) => {
  try {
    JSON.parse(v);
    return true;
  } catch {
    return false;
  }
};

/** A JSON document stored as text: accepted as text or as the document itself; empty means `fallback`. */
const jsonDoc = (fallback: string, max = 500_000) =>
  z
    .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
    .nullish()
    .transform((v) => (v == null || v === '' ? fallback : typeof v === 'string' ? v : JSON.stringify(v)))
    .refine((v) => v.length <= max, issue('too_long', { max }))
    .refine(isJson, issue('invalid_json'))
    .refine((v) => jsonDepth(v) <= MAX_JSON_DEPTH, issue('too_deep', { max: MAX_JSON_DEPTH }));

/** A JSON object given as an object or as its text; anything else reads as {}. */
const jsonObject = () =>
  jsonDoc('{}', 100_000)
    .transform((v) => JSON.parse(v) as unknown)
    .refine((v) => typeof v === 'object' && v !== null && !Array.isArray(v), issue('not_json_object'))
    .transform((v) => v as Record<string, unknown>);

const surveyVar = z.looseObject({
  name: z.string().max(255),
  title: z.string().max(255).nullish(),
  type: z.string().max(20).nullish(),
});

/** Survey variables: a list, its JSON text, or null. Each is checked but kept as written (field order too). */
const surveyVars = z
  .union([z.array(z.unknown()), z.string()])
  .nullish()
  .transform((v, ctx) => {
    if (v == null || v === '') return [];
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: issue('invalid_json') });
      return z.NEVER;
    }
  })
  .pipe(z.array(z.unknown()).max(100))
  .superRefine((vars, ctx) => {
    vars.forEach((item, i) => {
      const result = surveyVar.safeParse(item);
      if (!result.success) {
        const [issue] = result.error.issues;
        if (issue) ctx.addIssue({ code: 'custom', message: issue.message, path: [i, ...issue.path] });
      }
    });
  })
  .transform((vars) => vars as Array<Record<string, unknown>>);

export const backupMeta = z.looseObject({
  name: name(100),
  alert: bool(),
  alert_chat: nullableText(30),
  max_parallel_tasks: z
    .number()
    .int()
    .min(0)
    .max(10_000)
    .nullish()
    .transform((v) => v ?? 0),
  /** Absent in Semaphore's backups (and in ours before 0003): the project then uses the server default. */
  task_retention_days: taskRetentionDays.nullish().transform((v) => v ?? 0),
  /** Absent in Semaphore's backups (and in ours before 0022): runs AI agents start wait for approval. */
  agent_runs_need_approval: z
    .boolean()
    .nullish()
    .transform((v) => v ?? true),
  type: text(20),
});

export const backupKey = z.looseObject({
  name: name(),
  type: choice(keyTypes, 'none'),
  /** '' for the key store; the peer also lists environment secrets, which have no secret to restore. */
  owner: text(20),
});

export const backupRepository = z.looseObject({
  name: name(),
  // The same URL and branch rules as a repository saved through the API: nothing git would read as an option,
  // a helper transport or a relative path is restored.
  git_url: name(2048).refine(isUsableRepositoryUrl, issue('incorrect_url')),
  git_branch: text(255).refine((v) => v === '' || isBranchName(v), branchMessages.incorrect),
  ssh_key: ref(),
});

export const backupInventory = z.looseObject({
  name: name(),
  type: slug(30).transform((v) => (v ? v : 'static')),
  inventory: text(500_000),
  ssh_key: ref(),
  become_key: ref(),
  repository: ref(),
  runner_tag: runnerTagField,
});

export const backupEnvironment = z.looseObject({
  name: name(),
  json: jsonDoc('{}'),
  env: jsonDoc('{}'),
});

export const backupView = z
  .looseObject({
    title: z.string().nullish(),
    name: z.string().nullish(),
    position: z
      .number()
      .int()
      .min(-1_000_000)
      .max(1_000_000)
      .nullish()
      .transform((v) => v ?? 0),
  })
  .transform(({ name: alias, ...v }) => ({ ...v, title: v.title ?? alias ?? '' }))
  .pipe(z.looseObject({ title: name(), position: z.number() }));

const backupVault = z.looseObject({
  /** The vault's name (null: `default`), checked as the template API checks it. */
  name: z.string().max(100).nullish(),
  vault_key: ref(),
  type: z.string().max(20).nullish(),
  /** A script vault's script. */
  script: z.string().max(255).nullish(),
});

export const backupTemplate = z.looseObject({
  name: name(100),
  description: text(10_000),
  type: choice(['', 'build', 'deploy'] as const, ''),
  /** The peer's backups may omit the app: that means ansible. */
  app: slug(50).transform((v) => (v ? v : 'ansible')),
  playbook: text(PLAYBOOK_MAX).superRefine((path, ctx) => {
    const problem = playbookPathProblem(path);
    if (problem) ctx.addIssue({ code: 'custom', message: issueOf(problem) });
  }),
  arguments: nullableText(10_000),
  inventory: ref(),
  repository: ref(),
  environment: ref(),
  view: ref(),
  build_template: ref(),
  vault_key: ref(),
  vaults: list(backupVault),
  start_version: nullableText(50),
  autorun: bool(),
  suppress_success_alerts: bool(),
  allow_override_args_in_task: bool(),
  allow_override_branch_in_task: bool(),
  allow_parallel_tasks: bool(),
  git_branch: nullableText(255).refine((v) => v === null || isBranchName(v), branchMessages.incorrect),
  survey_vars: surveyVars,
  task_params: jsonObject(),
  /** The peer writes the cron of the template's first schedule here; used only by backups without `schedules`. */
  cron: nullableText(100),
  runner_tag: runnerTagField,
});

/** A schedule or integration starts a template's task or, naming `workflow` instead, a workflow's run. */
const templateOrWorkflow = (
  v: { template: string | null; workflow: string | null },
  ctx: z.RefinementCtx,
) => {
  if (!v.template && !v.workflow)
    ctx.addIssue({ code: 'custom', message: issue('required'), path: ['template'] });
  if (v.template && v.workflow)
    ctx.addIssue({ code: 'custom', message: issue('template_or_workflow'), path: ['workflow'] });
};

export const backupSchedule = z
  .looseObject({
    name: text(255),
    /** The template it runs; null when it starts a workflow. */
    template: ref(),
    /** The workflow whose run it starts, by name; absent in Semaphore's backups and in ours before workflows. */
    workflow: ref(),
    cron_format: text(100).transform((v) => v.trim()),
    active: bool(true),
    checkable_repository: ref(),
    /** A run-once schedule: type 'run_at' with its time (the peer exports both); absent in older backups. */
    type: choice(scheduleTypes, ''),
    run_at: nullableText(40).refine(
      (v) => v === null || z.iso.datetime({ offset: true }).safeParse(v).success,
      RUN_AT_FORMAT,
    ),
    delete_after_run: bool(),
    /** Its default task parameters, the inventory by name (`inventory_name`); absent in older backups. */
    task_params: jsonObject(),
  })
  .superRefine((s, ctx) => {
    templateOrWorkflow(s, ctx);
    const once = s.type === 'run_at';
    if (once ? !s.run_at : !s.cron_format)
      ctx.addIssue({
        code: 'custom',
        message: issue('required'),
        path: [once ? 'run_at' : 'cron_format'],
      });
  });

const backupMatcher = z.looseObject({
  name: name(),
  match_type: choice(['body', 'header'] as const, 'body'),
  body_data_type: choice(['json', 'string'] as const, 'json'),
  key: text(255),
  method: choice(['equals', 'unequals', 'contains'] as const, 'equals'),
  value: text(1000),
});

const backupExtractValue = z.looseObject({
  name: name(),
  value_source: choice(['body', 'header'] as const, 'body'),
  body_data_type: choice(['json', 'string'] as const, 'json'),
  key: text(255),
  variable: text(255),
  variable_type: choice(['environment', 'task'] as const, 'environment'),
});

const alias = z.string().trim().min(1).max(64);

export const backupIntegration = z
  .looseObject({
    name: name(),
    /** The template whose task it starts; null when it starts a workflow. */
    template: ref(),
    /** The workflow whose run it starts, by name; absent in Semaphore's backups and in ours before workflows. */
    workflow: ref(),
    auth_method: slug(20),
    auth_header: text(255),
    auth_secret: ref(),
    searchable: bool(),
    task_params: jsonObject(),
    aliases: list(alias),
    matchers: list(backupMatcher),
    extract_values: list(backupExtractValue),
  })
  .superRefine(templateOrWorkflow);

/** A project's option list (survey options), by name; Semaphore's backups have none. */
export const backupOptionList = z.looseObject({
  name: name(100),
  options: z
    .array(z.looseObject({ name: text(255), value: text(1000) }))
    .max(1000)
    .nullish()
    .transform((v) => v ?? []),
});

/**
 * A Terraform state of the built-in state backend: its current version, sealed with the server's secret key as it
 * is stored (never in plain text). Only a server with that key (or a key rotation's previous one) can restore it.
 */
export const backupTerraformState = z.looseObject({
  name: stateNameSchema,
  serial: z.number().int().min(0).max(2_147_483_647),
  lineage: z.string().max(200),
  sealed: z
    .string()
    .min(1)
    .max(64 * 1024 * 1024),
});

/**
 * A workflow, its nodes as the API takes them but for what names objects of the project: a template node names its
 * template (`template`, by name), the inventory and environment it fixes (`inventory`, `environment`, by name: its
 * fixed `inventory_id` / `environment_id` value is the old project's id) and an approval node its named approvers
 * by username (`users`).
 */
export const backupWorkflow = z.looseObject({
  name: name(100),
  description: text(10_000),
  survey_vars: z
    .array(z.unknown())
    .max(100)
    .nullish()
    .transform((v) => v ?? []),
  nodes: z.array(z.looseObject({})).max(1000),
  edges: z
    .array(z.unknown())
    .max(5000)
    .nullish()
    .transform((v) => v ?? []),
});

export const projectBackup = z.looseObject({
  meta: backupMeta,
  templates: list(backupTemplate),
  repositories: list(backupRepository),
  keys: list(backupKey),
  views: list(backupView),
  inventories: list(backupInventory),
  environments: list(backupEnvironment),
  integrations: list(backupIntegration),
  integration_aliases: list(alias),
  option_lists: list(backupOptionList),
  terraform_states: list(backupTerraformState),
  /** Absent in Semaphore's backups and in ours before workflows. */
  workflows: list(backupWorkflow),
  /** Absent in old backups: then each template's `cron` becomes its schedule. */
  schedules: z.array(backupSchedule).max(MAX_ITEMS).nullish(),
});
export type ProjectBackupInput = z.infer<typeof projectBackup>;

/** The backup as GET project/{id}/backup writes it. */
export type ProjectBackup = {
  meta: {
    name: string;
    alert: boolean;
    alert_chat: string | null;
    max_parallel_tasks: number;
    task_retention_days: number;
    agent_runs_need_approval: boolean;
    type: string;
  };
  templates: Array<{
    name: string;
    description: string;
    type: string;
    app: string;
    playbook: string;
    arguments: string | null;
    inventory: string | null;
    repository: string | null;
    environment: string | null;
    view: string | null;
    build_template: string | null;
    vault_key: string | null;
    /** The template's vault as Semaphore writes it: none, or one (its name, and its key or its script). */
    vaults: Array<{
      name: string;
      type: 'password' | 'script';
      vault_key: string | null;
      script: string | null;
    }>;
    start_version: string | null;
    autorun: boolean;
    suppress_success_alerts: boolean;
    allow_override_args_in_task: boolean;
    allow_override_branch_in_task: boolean;
    allow_parallel_tasks: boolean;
    git_branch: string | null;
    survey_vars: unknown[];
    task_params: Record<string, unknown>;
    cron: string | null;
    runner_tag: string | null;
  }>;
  repositories: Array<{ name: string; git_url: string; git_branch: string; ssh_key: string | null }>;
  keys: Array<{ name: string; type: string; owner: string }>;
  views: Array<{ title: string; position: number }>;
  inventories: Array<{
    name: string;
    type: string;
    inventory: string;
    ssh_key: string | null;
    become_key: string | null;
    repository: string | null;
    runner_tag: string | null;
  }>;
  environments: Array<{ name: string; json: string; env: string }>;
  integrations: Array<{
    name: string;
    /** null when it starts a workflow (`workflow`, by name; absent otherwise). */
    template: string | null;
    workflow?: string;
    auth_method: string;
    auth_header: string;
    auth_secret: string | null;
    searchable: boolean;
    task_params: Record<string, unknown>;
    aliases: string[];
    matchers: Array<{
      name: string;
      match_type: string;
      body_data_type: string;
      key: string;
      method: string;
      value: string;
    }>;
    extract_values: Array<{
      name: string;
      value_source: string;
      body_data_type: string;
      key: string;
      variable: string;
      variable_type: string;
    }>;
  }>;
  integration_aliases: string[];
  /** A survey's options sources name these (and inventories and keys) by name: `option_list`, `inventory`, `key`. */
  option_lists: Array<{ name: string; options: Array<{ name: string; value: string }> }>;
  /** The built-in backend's states, each its current version sealed with the server's secret key. */
  terraform_states: Array<{ name: string; serial: number; lineage: string; sealed: string }>;
  /**
   * Template nodes name their template (`template`) and the inventory and environment they fix (`inventory`,
   * `environment`), approval nodes their named approvers (`users`, usernames).
   */
  workflows: Array<{
    name: string;
    description: string;
    survey_vars: unknown[];
    nodes: unknown[];
    edges: unknown[];
  }>;
  schedules: Array<{
    name: string;
    /** null when it starts a workflow (`workflow`, by name; absent otherwise). */
    template: string | null;
    workflow?: string;
    cron_format: string;
    active: boolean;
    checkable_repository: string | null;
    type: '' | 'run_at';
    run_at: string | null;
    delete_after_run: boolean;
    task_params: Record<string, unknown>;
  }>;
};
