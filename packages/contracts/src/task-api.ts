import { z } from 'zod';
import {
  beforeCursor,
  flag,
  id,
  jsonDepth,
  MAX_JSON_DEPTH,
  notOffsetAndBefore,
  offsetAndBeforeIssue,
  optionalId,
  optionalString,
} from './common';
import { issue } from './errors';
import { optionalBranch } from './repositories';
import { taskSources, taskStatuses } from './tasks';

/** Task API requests. */

const jsonOf = (kind: 'object' | 'array', max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => (v ?? '').trim())
    .refine(
      (v) => {
        if (v === '') return true;
        try {
          const parsed = JSON.parse(v);
          if (kind === 'array') return Array.isArray(parsed);
          return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
        } catch {
          return false;
        }
      },
      { message: kind === 'array' ? issue('not_json_array') : issue('not_json_object') },
    )
    .refine((v) => jsonDepth(v) <= MAX_JSON_DEPTH, { message: issue('too_deep', { max: MAX_JSON_DEPTH }) });

const listItem = z.string().trim().max(1000);
/** A host/tag list: an array of strings or comma-separated text. */
const stringList = () =>
  z
    .union([listItem, z.array(listItem).max(1000)], { error: issue('not_string_or_list') })
    .nullish()
    .transform((v) =>
      v == null ? [] : (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean),
    );

const params = z
  .record(z.string().max(100), z.unknown())
  .nullish()
  .transform((v) => v ?? {})
  .refine((v) => JSON.stringify(v).length <= 100_000, { message: issue('too_big_json') });

/** A deploy task needs the build it deploys: the server and the run form refuse a task without one so. */
export const BUILD_VERSION_REQUIRED = issue('required');

export const newTaskInput = z.object(
  {
    template_id: id(),
    message: optionalString(500),
    build_task_id: optionalId(),
    debug: flag(),
    dry_run: flag(),
    diff: flag(),
    arguments: jsonOf('array', 100_000),
    environment: jsonOf('object', 500_000),
    secret: jsonOf('object', 500_000),
    git_branch: optionalBranch(),
    inventory_id: optionalId(),
    environment_id: optionalId().describe(
      "Runs with this environment of the project instead of the template's (its variables and secrets); only " +
        'when the template allows it (task_params.allow_override_environment).',
    ),
    limit: stringList(),
    tags: stringList(),
    skip_tags: stringList(),
    playbook: optionalString(255),
    params,
    commit_of_task: optionalId().describe(
      'Runs the commit an earlier task of the same template checked out (a re-run at its commit) instead of the ' +
        "branch's head.",
    ),
  },
  { error: issue('body_not_object') },
);
export type NewTaskInput = z.infer<typeof newTaskInput>;

/** POST tasks/{id}/reject: why a run waiting for approval is declined (its message), optional. */
export const rejectTaskInput = z
  .object({ reason: optionalString(500) }, { error: issue('body_not_object') })
  .nullish()
  .transform((v) => ({ reason: v?.reason ?? '' }));

export const stopTaskInput = z
  .object({ force: flag() })
  .nullish()
  .transform((v) => v ?? { force: false });

const intQuery = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const lastTasksQuery = z.object({ limit: intQuery(1, 1000).default(200) });
/**
 * A page of a task list, newest first: `offset` tasks skipped, or only the tasks whose id is below `before` (the
 * keyset cursor a full page's Link header names: it costs the same at any depth, and a task started meanwhile does
 * not shift the pages).
 */
const taskPageFields = {
  limit: intQuery(1, 10_000).default(1000),
  offset: intQuery(0, 1_000_000_000).optional().describe('Tasks to skip (newest first).'),
  before: beforeCursor('tasks'),
};

export const taskListQuery = z
  .object({
    status: z
      .enum(taskStatuses)
      .optional()
      .describe('Only the tasks in this status (e.g. waiting_approval).'),
    ...taskPageFields,
  })
  .refine(notOffsetAndBefore, offsetAndBeforeIssue);
export const templateTasksQuery = z
  .object({ status: z.enum(taskStatuses).optional(), ...taskPageFields })
  .refine(notOffsetAndBefore, offsetAndBeforeIssue);
/** Lines per page of GET tasks/{id}/output: the default and the largest `limit`. */
export const OUTPUT_PAGE_LINES = 10_000;

/**
 * GET tasks/{id}/output: a page of at most `limit` lines starting at line `offset` (0-based) or after the line
 * whose id is `after` (the keyset cursor the next-page link uses); without either, the first page.
 */
export const outputQuery = z
  .object({
    offset: intQuery(0, 1_000_000_000).optional(),
    after: intQuery(0, Number.MAX_SAFE_INTEGER).optional(),
    limit: intQuery(1, OUTPUT_PAGE_LINES).default(OUTPUT_PAGE_LINES),
  })
  .refine((q) => q.offset === undefined || q.after === undefined, {
    message: issue('offset_and_after'),
    path: ['after'],
  });

const time = (what: string) => z.string().describe(`${what} (ISO 8601, UTC)`);

/** A task as the API returns it (secret is never returned). */
export const taskViewSchema = z.strictObject({
  id: z.number().int(),
  template_id: z.number().int(),
  project_id: z.number().int(),
  status: z.enum(taskStatuses),
  status_detail: z
    .string()
    .nullable()
    .describe('Why a waiting task waits (e.g. a project limit of running tasks reached); null otherwise.'),
  message: z.string().describe('The message the task was started with.'),
  user_id: z.number().int().nullable().describe('Who started the task; null when no user did.'),
  integration_id: z.number().int().nullable(),
  schedule_id: z.number().int().nullable(),
  source: z
    .enum(taskSources)
    .nullable()
    .describe(
      'How the task was started (mcp: by an AI agent); null for tasks stored before it was recorded.',
    ),
  created: time('When the task was created'),
  start: time('When the task started running').nullable(),
  end: time('When the task finished').nullable(),
  version: z.string().nullable().describe('The version a build task made, or the one a deploy task deploys.'),
  build_task_id: z.number().int().nullable().describe('The build task a deploy task deploys.'),
  commit_hash: z.string().nullable(),
  commit_message: z.string().nullable(),
  playbook: z.string().describe('Overrides the template playbook when not empty.'),
  environment: z.string().describe('Extra variables of the task: a JSON object as text.'),
  arguments: z.string().nullable().describe('Extra CLI args: a JSON array of strings as text, or null.'),
  git_branch: z.string().nullable().describe("Overrides the repository's branch when set."),
  inventory_id: z.number().int().nullable().describe("Overrides the template's inventory when set."),
  environment_id: z
    .number()
    .int()
    .nullable()
    .describe("Overrides the template's environment when set (the project environment the task ran with)."),
  params: z
    .record(z.string(), z.unknown())
    .describe('App-specific task parameters (limit, tags, auto_approve…).'),
  debug: z.boolean(),
  dry_run: z.boolean(),
  diff: z.boolean(),
  limit: z
    .string()
    .describe("Semaphore's legacy limit: the hosts of params.limit, comma-separated ('' when none)."),
  secret: z
    .literal('')
    .describe(
      "Always '': secret survey values are stored encrypted for the run and never answered (Semaphore keeps the field).",
    ),
  outputs: z
    .record(z.string(), z.unknown())
    .describe(
      'The named values the task published by writing a JSON object (or NAME=value lines) to the file ' +
        'SIGNALBOX_OUTPUTS names; {} when none.',
    ),
  secret_outputs: z
    .array(z.string())
    .describe(
      'The names of the secret outputs the task published (to the file SIGNALBOX_SECRET_OUTPUTS names): their values are kept sealed and never answered.',
    ),
  workflow_run_id: z
    .number()
    .int()
    .nullable()
    .describe('The workflow run whose node started the task; null: none.'),
  workflow_node_id: z.string().nullable().describe('The node of that run.'),
});
export type TaskView = z.infer<typeof taskViewSchema>;

/** A task's `limit` as Semaphore's legacy field answers it: the hosts of params.limit, comma-separated. */
export function legacyLimitOf(params: Record<string, unknown>): string {
  const limit = params.limit;
  if (Array.isArray(limit)) return limit.filter((host) => typeof host === 'string').join(',');
  return typeof limit === 'string' ? limit : '';
}

/**
 * A task as the task lists and GET tasks/{id} answer it: with its template's name, type and app, the name of who
 * started it, and the build task it deploys.
 */
export const taskWithTemplateSchema = taskViewSchema.extend({
  tpl_alias: z.string().describe("The template's name."),
  tpl_type: z.string().describe("The template's type."),
  tpl_app: z.string().describe("The template's app."),
  user_name: z.string().nullable().describe('The name of who started the task.'),
  build_task: taskViewSchema.nullable().describe('The build task a deploy task deploys.'),
  runner: z
    .strictObject({
      id: z.number().int(),
      name: z.string().nullable().describe('null once the runner was deleted.'),
    })
    .nullable()
    .describe('The remote runner the task was given to; null when it runs (or ran) on the server.'),
});
export type TaskWithTemplate = z.infer<typeof taskWithTemplateSchema>;

/** A line of a task's log, as GET tasks/{id}/output pages them. */
export const taskOutputLineSchema = z.strictObject({
  id: z.number().int().describe('The line id: the `after` cursor of the next page.'),
  task_id: z.number().int(),
  task: z.literal('').describe("Always '': Semaphore's output rows carry this (unused) field too."),
  time: time('When the line was written'),
  output: z.string(),
  line: z
    .number()
    .int()
    .describe(
      "The line's 1-based position in the task's log (line n is at offset n - 1), as the live socket's `log` message carries it.",
    ),
});
export type TaskOutputLine = z.infer<typeof taskOutputLineSchema>;
