import { z } from 'zod';
import { beforeCursor, notOffsetAndBefore, offsetAndBeforeIssue } from './common';
import { issue } from './errors';

/** One entry of the activity log, as GET events and GET project/{id}/events list it (newest first). */
export const eventSchema = z.strictObject({
  id: z.number().int(),
  project_id: z
    .number()
    .int()
    .nullable()
    .describe('The project the event belongs to; null: not of a project.'),
  user_id: z
    .number()
    .int()
    .nullable()
    .describe('The user who acted; null: the server itself (a task no user started, task retention).'),
  object_id: z
    .number()
    .int()
    .nullable()
    .describe('The id of the object acted on, of the kind `object_type` names; null: no single object.'),
  object_type: z.string().describe('The kind of object acted on (task, template, user…); may be empty.'),
  description: z.string().describe('What happened, in English.'),
  kind: z
    .string()
    .nullable()
    .describe(
      "What happened, as a code (e.g. `task.finished`, `template.created`) the console words in the reader's language with `params`; null for older events and those without one.",
    ),
  params: z
    .record(z.string(), z.union([z.string(), z.number(), z.null()]))
    .nullable()
    .describe('The values of `kind` (e.g. `{"task_id": 7, "status": "success"}`); null with no kind.'),
  created: z.string().describe('When it happened (ISO 8601).'),
  username: z
    .string()
    .nullable()
    .describe("The acting user's username; null when there is none or it was deleted."),
  user_name: z
    .string()
    .nullable()
    .describe("The acting user's name; null when there is none or it was deleted."),
  project_name: z
    .string()
    .nullable()
    .describe("The project's name; null when not of a project or it was deleted."),
});
export type EventView = z.infer<typeof eventSchema>;

/** The kinds of object the activity log records (`object_type`), for filter choices. */
export const eventObjectTypes = [
  'project',
  'user',
  'task',
  'template',
  'schedule',
  'view',
  'inventory',
  'environment',
  'option_list',
  'key',
  'repository',
  'integration',
  'integration_alias',
  'integration_matcher',
  'integration_extract_value',
  'runner',
  'terraform_state',
] as const;

/** Rows per page of the event routes: the default and the largest `limit`. */
export const EVENT_PAGE_DEFAULT = 200;
export const EVENT_PAGE_MAX = 1000;
/** The longest text filter (`q`, `user`). */
export const EVENT_TEXT_FILTER_MAX = 200;

const intQuery = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;

/**
 * A point in time of a filter: an ISO 8601 date (`2025-03-01`, midnight UTC) or date and time with its offset
 * (`2025-03-01T08:00:00Z`, `…+02:00`); read as the UTC text events store (`created`), so it compares as text.
 */
const timeQuery = () =>
  z.string().transform((text, ctx) => {
    const date = new Date(text);
    const valid =
      ISO_TIME.test(text) &&
      !Number.isNaN(date.getTime()) &&
      // A date alone must be a real day (2025-02-30 is not).
      (text.length !== 10 || date.toISOString().slice(0, 10) === text);
    if (valid) return date.toISOString();
    ctx.addIssue({
      code: 'custom',
      message: issue('invalid_date'),
    });
    return z.NEVER;
  });

const textQuery = () =>
  z
    .string()
    .max(EVENT_TEXT_FILTER_MAX)
    .transform((v) => v.trim())
    .optional();

/** The filters every event route takes (the global routes add `project_id`). */
const eventFilterFields = {
  from: timeQuery().optional().describe('Events at or after this time (ISO 8601).'),
  to: timeQuery().optional().describe('Events before this time (ISO 8601).'),
  user_id: intQuery(1, 2_147_483_647).optional().describe('Only events of this user.'),
  user: textQuery().describe("Events whose user's username or name contains this text (any case)."),
  object_type: z
    .string()
    .regex(/^[a-z_]{1,50}$/)
    .optional()
    .describe(`Only events about this kind of object (${eventObjectTypes.join(', ')}).`),
  q: textQuery().describe('Events whose description contains this text (any case).'),
};

const fromBeforeTo = <T extends { from?: string; to?: string }>(q: T) =>
  q.from === undefined || q.to === undefined || q.from < q.to;
const fromBeforeToIssue = { message: issue('from_after_to'), path: ['to'] };

const pageFields = {
  limit: intQuery(1, EVENT_PAGE_MAX).default(EVENT_PAGE_DEFAULT),
  offset: intQuery(0, 1_000_000_000).optional().describe('Rows to skip (newest first).'),
  before: beforeCursor('events'),
};

/** GET project/{id}/events[/last]: the project's events, newest first, filtered and paged. */
export const projectEventsQuery = z
  .object({ ...eventFilterFields, ...pageFields })
  .refine(fromBeforeTo, fromBeforeToIssue)
  .refine(notOffsetAndBefore, offsetAndBeforeIssue);
export type ProjectEventsQuery = z.output<typeof projectEventsQuery>;

const projectFilter = {
  project_id: intQuery(1, 2_147_483_647)
    .optional()
    .describe('Only events of this project (among those the caller may see).'),
};

/** GET events[/last]: the events of every project the caller belongs to (admins: all events), filtered and paged. */
export const eventsQuery = z
  .object({ ...eventFilterFields, ...projectFilter, ...pageFields })
  .refine(fromBeforeTo, fromBeforeToIssue)
  .refine(notOffsetAndBefore, offsetAndBeforeIssue);
export type EventsQuery = z.output<typeof eventsQuery>;

export const eventExportFormats = ['csv', 'json', 'jsonl'] as const;
export type EventExportFormat = (typeof eventExportFormats)[number];
const formatField = {
  format: z
    .enum(eventExportFormats)
    .describe('csv (a header row, then one row per event), json (an array) or jsonl (one object per line).'),
};

/** GET project/{id}/events/export: every matching event of the project, as a file. */
export const projectEventsExportQuery = z
  .object({ ...eventFilterFields, ...formatField })
  .refine(fromBeforeTo, fromBeforeToIssue);

/** GET events/export: every matching event the caller may see, as a file. */
export const eventsExportQuery = z
  .object({ ...eventFilterFields, ...projectFilter, ...formatField })
  .refine(fromBeforeTo, fromBeforeToIssue);
export type EventsExportQuery = z.output<typeof eventsExportQuery>;
