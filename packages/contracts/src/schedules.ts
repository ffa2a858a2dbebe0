import { z } from 'zod';
import { optionalId } from './common';
import { issue } from './errors';
import { defaultTaskParamsInput, defaultTaskParamsSchema } from './task-params';

/** '' = a cron schedule (the peer's empty type); 'run_at' = runs its template once, at `run_at`. */
export const scheduleTypes = ['', 'run_at'] as const;
export type ScheduleType = (typeof scheduleTypes)[number];

/**
 * A schedule of a template: a cron schedule (with a repository_id it runs only when the repository has new
 * commits), or a run-once schedule that starts its task at `run_at` and is then disabled (or deleted).
 */
export const scheduleSchema = z.strictObject({
  id: z.number().int(),
  project_id: z.number().int(),
  template_id: z.number().int().describe('The template the schedule runs; 0 when it starts a workflow.'),
  workflow_id: z
    .number()
    .int()
    .nullable()
    .describe(
      'The workflow the schedule starts a run of (instead of a template); null: it runs its template.',
    ),
  type: z.enum(scheduleTypes).describe("'' for a cron schedule, 'run_at' for a run-once schedule."),
  cron_format: z.string().describe("The cron of a cron schedule; '' for a run-once schedule."),
  run_at: z
    .string()
    .nullable()
    .describe('When a run-once schedule starts its task (ISO 8601, UTC); null for a cron schedule.'),
  delete_after_run: z
    .boolean()
    .describe('A run-once schedule is deleted, instead of disabled, once it has started its task.'),
  last_run_at: z
    .string()
    .nullable()
    .describe('When the scheduler last started a task of this schedule (ISO 8601, UTC); null: never.'),
  run_missed: z
    .boolean()
    .describe(
      'A run-once schedule whose time passed while no server was running (beyond the grace), disabled without running.',
    ),
  repository_id: z
    .number()
    .int()
    .nullable()
    .describe('Repository checked for new commits at each tick; null: the schedule runs at every tick.'),
  name: z.string(),
  active: z.boolean(),
  tpl_name: z.string().describe('Name of the template (or workflow) the schedule runs.'),
  task_params: defaultTaskParamsSchema.describe(
    'Default parameters of every task it starts (extra variables, message, branch, inventory, arguments, app parameters); blank where not set.',
  ),
});
export type Schedule = z.infer<typeof scheduleSchema>;

export const CRON_MAX = 100;
export const DEFAULT_CRON = '* * * * *';

/** Intervals offered for the check-new-commits option; any valid cron is accepted too. */
export const commitCheckIntervals = [
  { title: '1 minute', cron: '* * * * *' },
  { title: '5 minutes', cron: '*/5 * * * *' },
  { title: '10 minutes', cron: '*/10 * * * *' },
  { title: '1 hour', cron: '@hourly' },
  { title: '24 hours', cron: '@daily' },
] as const;

/** Cron text: required, trimmed, bounded. Whether it is a valid cron is checked by the server (croner). */
export const cronText = z.string().trim().min(1).max(CRON_MAX);

/** The template a schedule runs: required unless it starts a workflow (0 and null count as missing). */
const scheduleTemplateId = z
  .number()
  .int()
  .min(0)
  .max(2_147_483_647)
  .nullish()
  .transform((v) => v ?? 0);

/** A date-time with a time zone (RFC 3339: 2030-01-31T09:30:00Z or …+02:00), normalised to UTC. */
export const RUN_AT_FORMAT = issue('invalid_date_offset');
const runAtText = z
  .string()
  .trim()
  .max(40, RUN_AT_FORMAT)
  .nullish()
  .transform((v, ctx) => {
    if (!v) return null;
    if (!z.iso.datetime({ offset: true }).safeParse(v).success) {
      ctx.addIssue({ code: 'custom', message: RUN_AT_FORMAT });
      return z.NEVER;
    }
    return new Date(v).toISOString();
  });

/** Body of POST schedules and PUT schedules/{id}. */
export const scheduleInput = z
  .object({
    id: z.number().int().nullish(),
    project_id: z.number().int().nullish(),
    template_id: scheduleTemplateId,
    /** Starts a run of this workflow instead of a template's task (template_id then 0 or absent). */
    workflow_id: optionalId(),
    type: z
      .enum(scheduleTypes)
      .nullish()
      .transform((v) => v ?? ''),
    /** Required for a cron schedule; ignored (stored as '') for a run-once schedule. */
    cron_format: z
      .string()
      .trim()
      .max(CRON_MAX)
      .nullish()
      .transform((v) => v ?? ''),
    /** Required for a run-once schedule; ignored for a cron schedule. Whether it is in the future: the server. */
    run_at: runAtText,
    delete_after_run: z
      .boolean()
      .nullish()
      .transform((v) => v ?? false),
    repository_id: optionalId(),
    name: z
      .string()
      .trim()
      .max(100)
      .nullish()
      .transform((v) => v ?? ''),
    active: z
      .boolean()
      .nullish()
      .transform((v) => v ?? true),
    task_params: defaultTaskParamsInput,
  })
  .superRefine(
    (input, ctx) => {
      if (!input.workflow_id && !input.template_id)
        ctx.addIssue({ code: 'custom', message: issue('required'), path: ['template_id'] });
      if (input.workflow_id && input.template_id)
        ctx.addIssue({ code: 'custom', message: issue('template_or_workflow'), path: ['workflow_id'] });
      if (input.type === 'run_at') {
        if (!input.run_at) ctx.addIssue({ code: 'custom', message: issue('required'), path: ['run_at'] });
        if (input.repository_id)
          ctx.addIssue({
            code: 'custom',
            message: issue('run_once_checks_commits'),
            path: ['repository_id'],
          });
      } else if (!input.cron_format) {
        ctx.addIssue({ code: 'custom', message: issue('required'), path: ['cron_format'] });
      }
    },
    // Also when another field is wrong, so a form shows every missing field at once.
    { when: ({ value }) => !!value && typeof value === 'object' && !Array.isArray(value) },
  );
export type ScheduleInput = z.infer<typeof scheduleInput>;

/** Body of POST schedules/validate. */
export const cronValidateInput = z.object({ cron_format: cronText });
