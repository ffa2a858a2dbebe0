import { z } from 'zod';
import { flag, id, jsonDepth, MAX_JSON_DEPTH, messages, optionalId, optionalString } from './common';
import { optionalBranch } from './repositories';
import { taskStatuses } from './tasks';

/** Task API requests. */

const jsonOf = (label: string, kind: 'object' | 'array', max: number) =>
  z
    .string({ error: `${label} must be a string` })
    .max(max, `${label} must be at most ${max} characters`)
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
      { message: kind === 'array' ? `${label} must be a JSON array` : messages.notJsonObject(label) },
    )
    .refine((v) => jsonDepth(v) <= MAX_JSON_DEPTH, { message: messages.tooDeep(label) });

const listItem = z.string({ error: 'Must be a string' }).trim().max(1000, 'Must be at most 1000 characters');
/** A host/tag list: an array of strings or comma-separated text. */
const stringList = (label: string) =>
  z
    .union([listItem, z.array(listItem).max(1000, `${label} has too many items`)], {
      error: `${label} must be a string or a list of strings`,
    })
    .nullish()
    .transform((v) =>
      v == null ? [] : (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean),
    );

const params = z
  .record(z.string().max(100, 'Parameter names must be at most 100 characters'), z.unknown(), {
    error: 'Params must be an object',
  })
  .nullish()
  .transform((v) => v ?? {})
  .refine((v) => JSON.stringify(v).length <= 100_000, { message: 'Params are too large' });

/** A deploy task needs the build it deploys: the server and the run form refuse a task without one so. */
export const BUILD_VERSION_REQUIRED = messages.required('Build version');

export const newTaskInput = z.object(
  {
    template_id: id('Template'),
    message: optionalString('Message', 500),
    build_task_id: optionalId('Build task'),
    debug: flag('Debug'),
    dry_run: flag('Dry run'),
    diff: flag('Diff'),
    arguments: jsonOf('CLI args', 'array', 100_000),
    environment: jsonOf('Environment', 'object', 500_000),
    secret: jsonOf('Secret', 'object', 500_000),
    git_branch: optionalBranch(),
    inventory_id: optionalId('Inventory'),
    limit: stringList('Limit'),
    tags: stringList('Tags'),
    skip_tags: stringList('Skip tags'),
    playbook: optionalString('Playbook', 255),
    params,
  },
  { error: messages.bodyNotObject },
);
export type NewTaskInput = z.infer<typeof newTaskInput>;

export const stopTaskInput = z
  .object({ force: flag('Force') }, { error: messages.bodyNotObject })
  .nullish()
  .transform((v) => v ?? { force: false });

const intQuery = (label: string, min: number, max: number) =>
  z.coerce
    .number({ error: `${label} must be a number` })
    .int(`${label} must be an integer`)
    .min(min, `${label} must be ${min} or greater`)
    .max(max, `${label} must be at most ${max}`);

export const lastTasksQuery = z.object({ limit: intQuery('Limit', 1, 1000).default(200) });
export const taskListQuery = z.object({
  limit: intQuery('Limit', 1, 10_000).default(1000),
  offset: intQuery('Offset', 0, 1_000_000_000).default(0),
});
export const templateTasksQuery = z.object({
  status: z.enum(taskStatuses, { error: 'Unknown status' }).optional(),
  limit: intQuery('Limit', 1, 10_000).default(1000),
  offset: intQuery('Offset', 0, 1_000_000_000).default(0),
});
/** Lines per page of GET tasks/{id}/output: the default and the largest `limit`. */
export const OUTPUT_PAGE_LINES = 10_000;

/**
 * GET tasks/{id}/output: a page of at most `limit` lines starting at line `offset` (0-based) or after the line
 * whose id is `after` (the keyset cursor the next-page link uses); without either, the first page.
 */
export const outputQuery = z
  .object({
    offset: intQuery('Offset', 0, 1_000_000_000).optional(),
    after: intQuery('After', 0, Number.MAX_SAFE_INTEGER).optional(),
    limit: intQuery('Limit', 1, OUTPUT_PAGE_LINES).default(OUTPUT_PAGE_LINES),
  })
  .refine((q) => q.offset === undefined || q.after === undefined, {
    message: 'Use either offset or after, not both',
    path: ['after'],
  });

/** A task as the API returns it (secret is never returned). */
export type TaskView = {
  id: number;
  template_id: number;
  project_id: number;
  status: string;
  status_detail: string | null;
  message: string;
  user_id: number | null;
  integration_id: number | null;
  schedule_id: number | null;
  created: string;
  start: string | null;
  end: string | null;
  version: string | null;
  build_task_id: number | null;
  commit_hash: string | null;
  commit_message: string | null;
  playbook: string;
  environment: string;
  arguments: string | null;
  git_branch: string | null;
  inventory_id: number | null;
  params: Record<string, unknown>;
  debug: boolean;
  dry_run: boolean;
  diff: boolean;
};

export type TaskOutputLine = { id: number; task_id: number; time: string; output: string };
