import { z } from 'zod';
import { jsonDepth, MAX_JSON_DEPTH, messages } from './common';
import { keyTypes } from './keys';
import { taskRetentionDays } from './projects';
import { branchMessages, isBranchName, isUsableRepositoryUrl } from './repositories';
import { runnerTagField } from './runners';
import { RUN_AT_FORMAT, scheduleTypes } from './schedules';
import { PLAYBOOK_MAX, playbookPathProblem } from './templates';

/**
 * The project backup of GET project/{id}/backup and POST projects/restore, in the peer's format: objects refer to
 * each other by name, never by id, and secrets are not included. The restore schema is lenient where the peer's
 * backups differ (nulls for empty values, extra fields, survey variables as text) and bounded everywhere.
 */

const MAX_ITEMS = 5000;

const list = <T extends z.ZodType>(label: string, item: T) =>
  z
    .array(item, { error: `${label} must be a list` })
    .max(MAX_ITEMS, `${label} has more than ${MAX_ITEMS} entries`)
    .nullish()
    .transform((v) => v ?? []);

const name = (label: string, max = 255) =>
  z
    .string({ error: messages.required(label) })
    .trim()
    .min(1, messages.required(label))
    .max(max, messages.tooLong(label, max));

const text = (label: string, max: number) =>
  z
    .string({ error: `${label} must be a string` })
    .max(max, messages.tooLong(label, max))
    .nullish()
    .transform((v) => v ?? '');

const nullableText = (label: string, max: number) =>
  z
    .string({ error: `${label} must be a string` })
    .max(max, messages.tooLong(label, max))
    .nullish()
    .transform((v) => (v ? v : null));

/** A reference to another object of the backup by its name; empty means none. */
const ref = (label: string) =>
  z
    .string({ error: `${label} must be a name` })
    .max(255, `${label} must be at most 255 characters`)
    .nullish()
    .transform((v) => (v?.trim() ? v.trim() : null));

const bool = (label: string, fallback = false) =>
  z
    .boolean({ error: `${label} must be true or false` })
    .nullish()
    .transform((v) => v ?? fallback);

/** A lowercase identifier such as an app or inventory type. */
const slug = (label: string, max: number) =>
  z
    .string({ error: `${label} must be a string` })
    .trim()
    .max(max, messages.tooLong(label, max))
    .regex(/^[a-z0-9_-]*$/, `${label} must be a lowercase identifier`)
    .nullish()
    .transform((v) => v ?? '');

const choice = <const T extends readonly string[]>(label: string, values: T, fallback: T[number]) =>
  z
    .string({ error: `${label} must be one of ${values.join(', ')}` })
    .nullish()
    .transform((v) => (v ? v : fallback))
    .refine((v) => (values as readonly string[]).includes(v), `${label} must be one of ${values.join(', ')}`)
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
const jsonDoc = (label: string, fallback: string, max = 500_000) =>
  z
    .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())], {
      error: `${label} must be JSON text`,
    })
    .nullish()
    .transform((v) => (v == null || v === '' ? fallback : typeof v === 'string' ? v : JSON.stringify(v)))
    .refine((v) => v.length <= max, messages.tooLong(label, max))
    .refine(isJson, `${label} must be valid JSON`)
    .refine((v) => jsonDepth(v) <= MAX_JSON_DEPTH, messages.tooDeep(label));

/** A JSON object given as an object or as its text; anything else reads as {}. */
const jsonObject = (label: string) =>
  jsonDoc(label, '{}', 100_000)
    .transform((v) => JSON.parse(v) as unknown)
    .refine((v) => typeof v === 'object' && v !== null && !Array.isArray(v), messages.notJsonObject(label))
    .transform((v) => v as Record<string, unknown>);

const surveyVar = z.looseObject({
  name: z.string({ error: 'Survey variable name must be a string' }).max(255),
  title: z.string({ error: 'Survey variable title must be a string' }).max(255).nullish(),
  type: z.string({ error: 'Survey variable type must be a string' }).max(20).nullish(),
});

/** Survey variables: a list, its JSON text, or null. Each is checked but kept as written (field order too). */
const surveyVars = z
  .union([z.array(z.unknown()), z.string()], { error: 'Survey variables must be a list' })
  .nullish()
  .transform((v, ctx) => {
    if (v == null || v === '') return [];
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'Survey variables must be valid JSON' });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .array(z.unknown(), { error: 'Survey variables must be a list' })
      .max(100, 'At most 100 survey variables'),
  )
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
  name: name('Project name', 100),
  alert: bool('Alert'),
  alert_chat: nullableText('Alert chat', 30),
  max_parallel_tasks: z
    .number({ error: 'Max parallel tasks must be a number' })
    .int('Must be integer')
    .min(0, 'Must be 0 or greater')
    .max(10_000, messages.maxParallelTooLarge(10_000))
    .nullish()
    .transform((v) => v ?? 0),
  /** Absent in Semaphore's backups (and in ours before 0003): the project then uses the server default. */
  task_retention_days: taskRetentionDays.nullish().transform((v) => v ?? 0),
  type: text('Project type', 20),
});

export const backupKey = z.looseObject({
  name: name('Key name'),
  type: choice('Key type', keyTypes, 'none'),
  /** '' for the key store; the peer also lists environment secrets, which have no secret to restore. */
  owner: text('Key owner', 20),
});

export const backupRepository = z.looseObject({
  name: name('Repository name'),
  // The same URL and branch rules as a repository saved through the API: nothing git would read as an option,
  // a helper transport or a relative path is restored.
  git_url: name('Repository URL', 2048).refine(isUsableRepositoryUrl, 'Incorrect URL'),
  git_branch: text('Repository branch', 255).refine(
    (v) => v === '' || isBranchName(v),
    branchMessages.incorrect,
  ),
  ssh_key: ref('Repository key'),
});

export const backupInventory = z.looseObject({
  name: name('Inventory name'),
  type: slug('Inventory type', 30).transform((v) => (v ? v : 'static')),
  inventory: text('Inventory', 500_000),
  ssh_key: ref('Inventory user credentials'),
  become_key: ref('Inventory sudo credentials'),
  repository: ref('Inventory repository'),
  runner_tag: runnerTagField,
});

export const backupEnvironment = z.looseObject({
  name: name('Environment name'),
  json: jsonDoc('Extra variables', '{}'),
  env: jsonDoc('Environment variables', '{}'),
});

export const backupView = z
  .looseObject({
    title: z.string({ error: 'View title must be a string' }).nullish(),
    name: z.string({ error: 'View title must be a string' }).nullish(),
    position: z
      .number({ error: 'View position must be a number' })
      .int('View position must be an integer')
      .min(-1_000_000)
      .max(1_000_000)
      .nullish()
      .transform((v) => v ?? 0),
  })
  .transform(({ name: alias, ...v }) => ({ ...v, title: v.title ?? alias ?? '' }))
  .pipe(z.looseObject({ title: name('View title'), position: z.number() }));

const backupVault = z.looseObject({
  /** The vault's name (null: `default`), checked as the template API checks it. */
  name: z.string({ error: 'Vault name must be a string' }).max(100).nullish(),
  vault_key: ref('Vault key'),
  type: z.string().max(20).nullish(),
  /** A script vault's script. */
  script: z.string({ error: 'Vault script must be a string' }).max(255).nullish(),
});

export const backupTemplate = z.looseObject({
  name: name('Template name', 100),
  description: text('Description', 10_000),
  type: choice('Template type', ['', 'build', 'deploy'] as const, ''),
  /** The peer's backups may omit the app: that means ansible. */
  app: slug('App', 50).transform((v) => (v ? v : 'ansible')),
  playbook: text('Playbook filename', PLAYBOOK_MAX).superRefine((path, ctx) => {
    const problem = playbookPathProblem(path);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  arguments: nullableText('CLI args', 10_000),
  inventory: ref('Template inventory'),
  repository: ref('Template repository'),
  environment: ref('Template environment'),
  view: ref('Template view'),
  build_template: ref('Build template'),
  vault_key: ref('Vault key'),
  vaults: list('Vaults', backupVault),
  start_version: nullableText('Start version', 50),
  autorun: bool('Autorun'),
  suppress_success_alerts: bool('Suppress success alerts'),
  allow_override_args_in_task: bool('Allow CLI args override'),
  allow_override_branch_in_task: bool('Allow branch override'),
  allow_parallel_tasks: bool('Allow parallel tasks'),
  git_branch: nullableText('Branch', 255).refine(
    (v) => v === null || isBranchName(v),
    branchMessages.incorrect,
  ),
  survey_vars: surveyVars,
  task_params: jsonObject('Task params'),
  /** The peer writes the cron of the template's first schedule here; used only by backups without `schedules`. */
  cron: nullableText('Cron', 100),
  runner_tag: runnerTagField,
});

export const backupSchedule = z
  .looseObject({
    name: text('Schedule name', 255),
    template: name('Schedule template'),
    cron_format: text('Cron', 100).transform((v) => v.trim()),
    active: bool('Active', true),
    checkable_repository: ref('Schedule repository'),
    /** A run-once schedule: type 'run_at' with its time (the peer exports both); absent in older backups. */
    type: choice('Schedule type', scheduleTypes, ''),
    run_at: nullableText('Run at', 40).refine(
      (v) => v === null || z.iso.datetime({ offset: true }).safeParse(v).success,
      RUN_AT_FORMAT,
    ),
    delete_after_run: bool('Delete after run'),
    /** Its default task parameters, the inventory by name (`inventory_name`); absent in older backups. */
    task_params: jsonObject('Schedule task params'),
  })
  .superRefine((s, ctx) => {
    const once = s.type === 'run_at';
    if (once ? !s.run_at : !s.cron_format)
      ctx.addIssue({
        code: 'custom',
        message: messages.required(once ? 'Run at' : 'Cron'),
        path: [once ? 'run_at' : 'cron_format'],
      });
  });

const backupMatcher = z.looseObject({
  name: name('Matcher name'),
  match_type: choice('Match type', ['body', 'header'] as const, 'body'),
  body_data_type: choice('Body data type', ['json', 'string'] as const, 'json'),
  key: text('Matcher key', 255),
  method: choice('Matcher method', ['equals', 'unequals', 'contains'] as const, 'equals'),
  value: text('Matcher value', 1000),
});

const backupExtractValue = z.looseObject({
  name: name('Extracted value name'),
  value_source: choice('Value source', ['body', 'header'] as const, 'body'),
  body_data_type: choice('Body data type', ['json', 'string'] as const, 'json'),
  key: text('Extracted value key', 255),
  variable: text('Variable', 255),
  variable_type: choice('Variable type', ['environment', 'task'] as const, 'environment'),
});

const alias = z
  .string({ error: 'Alias must be a string' })
  .trim()
  .min(1, 'Alias must not be empty')
  .max(64, 'Alias must be at most 64 characters');

export const backupIntegration = z.looseObject({
  name: name('Integration name'),
  template: name('Integration template'),
  auth_method: slug('Auth method', 20),
  auth_header: text('Auth header', 255),
  auth_secret: ref('Auth secret'),
  searchable: bool('Searchable'),
  task_params: jsonObject('Integration task params'),
  aliases: list('Aliases', alias),
  matchers: list('Matchers', backupMatcher),
  extract_values: list('Extracted values', backupExtractValue),
});

export const projectBackup = z.looseObject(
  {
    meta: backupMeta,
    templates: list('Templates', backupTemplate),
    repositories: list('Repositories', backupRepository),
    keys: list('Keys', backupKey),
    views: list('Views', backupView),
    inventories: list('Inventories', backupInventory),
    environments: list('Environments', backupEnvironment),
    integrations: list('Integrations', backupIntegration),
    integration_aliases: list('Integration aliases', alias),
    /** Absent in old backups: then each template's `cron` becomes its schedule. */
    schedules: z
      .array(backupSchedule, { error: 'Schedules must be a list' })
      .max(MAX_ITEMS, `Schedules has more than ${MAX_ITEMS} entries`)
      .nullish(),
  },
  { error: 'A backup must be a JSON object' },
);
export type ProjectBackupInput = z.infer<typeof projectBackup>;

/** The backup as GET project/{id}/backup writes it. */
export type ProjectBackup = {
  meta: {
    name: string;
    alert: boolean;
    alert_chat: string | null;
    max_parallel_tasks: number;
    task_retention_days: number;
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
    template: string;
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
  schedules: Array<{
    name: string;
    template: string;
    cron_format: string;
    active: boolean;
    checkable_repository: string | null;
    type: '' | 'run_at';
    run_at: string | null;
    delete_after_run: boolean;
    task_params: Record<string, unknown>;
  }>;
};
