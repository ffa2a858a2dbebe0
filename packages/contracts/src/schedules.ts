import { z } from 'zod';
import { messages, optionalId } from './common';

/** A cron schedule of a template; with a repository_id it runs only when the repository has new commits. */
export const scheduleSchema = z.strictObject({
  id: z.number().int(),
  project_id: z.number().int(),
  template_id: z.number().int(),
  cron_format: z.string(),
  repository_id: z
    .number()
    .int()
    .nullable()
    .describe('Repository checked for new commits at each tick; null: the schedule runs at every tick.'),
  name: z.string(),
  active: z.boolean(),
  tpl_name: z.string().describe('Name of the template the schedule runs.'),
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
export const cronText = z
  .string({ error: messages.required('Cron') })
  .trim()
  .min(1, messages.required('Cron'))
  .max(CRON_MAX, messages.tooLong('Cron', CRON_MAX));

/** A required reference to the template a schedule runs (0 and null count as missing). */
const scheduleTemplateId = z
  .number({
    error: (issue) =>
      issue.input === undefined || issue.input === null
        ? messages.required('Template')
        : 'Template must be a number',
  })
  .int('Template must be an integer')
  .min(0, 'Template must be 0 or greater')
  .max(2_147_483_647, 'Template is too large')
  .refine((v) => v > 0, messages.required('Template'));

/** Body of POST schedules and PUT schedules/{id}. */
export const scheduleInput = z.object({
  id: z.number({ error: 'ID must be a number' }).int().nullish(),
  project_id: z.number({ error: 'Project ID must be a number' }).int().nullish(),
  template_id: scheduleTemplateId,
  cron_format: cronText,
  repository_id: optionalId('Repository'),
  name: z
    .string({ error: 'Name must be a string' })
    .trim()
    .max(100, messages.tooLong('Name', 100))
    .nullish()
    .transform((v) => v ?? ''),
  active: z
    .boolean({ error: 'Active must be true or false' })
    .nullish()
    .transform((v) => v ?? true),
});
export type ScheduleInput = z.infer<typeof scheduleInput>;

/** Body of POST schedules/validate. */
export const cronValidateInput = z.object({ cron_format: cronText });
