import { z } from 'zod';
import { requiredString } from './common';
import { issue } from './errors';

/** Most tags one runner may carry, and the longest tag. */
export const RUNNER_TAGS_MAX = 32;
export const RUNNER_TAG_MAX_LENGTH = 64;
export const RUNNER_MAX_PARALLEL_MAX = 1000;

/** Control characters (C0, DEL, C1) never belong in a tag or a runner name. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
const controlChars = /[\u0000-\u001f\u007f-\u009f]/;

/** One runner tag: trimmed, 1–64 characters, no control characters. */
export const runnerTag = () =>
  z
    .string()
    .trim()
    .min(1)
    .max(RUNNER_TAG_MAX_LENGTH)
    .refine((v) => !controlChars.test(v), issue('control_chars'));

/** A runner's tags: at most 32, duplicates dropped (first spelling kept, order kept). */
export const runnerTags = z
  .array(runnerTag())
  .max(RUNNER_TAGS_MAX)
  .transform((tags) => [...new Set(tags)]);

/**
 * The `runner_tag` of a template or an inventory: its tasks run only on a remote runner carrying it. Null, absent
 * and '' (after trimming) all mean "none" and read back as null.
 */
export const runnerTagField = z
  .string()
  .trim()
  .max(RUNNER_TAG_MAX_LENGTH)
  .refine((v) => !controlChars.test(v), issue('control_chars'))
  .nullish()
  .transform((v) => (v ? v : null));

/** What a runner's tasks can see: bubblewrap, no sandbox (with why when not asked for), or refused to run. */
export const runnerSandboxSchema = z.strictObject({
  mode: z.enum(['bwrap', 'off', 'refused']),
  reason: z.string().nullable(),
});
export type RunnerSandbox = z.infer<typeof runnerSandboxSchema>;

/** A remote runner as the management API answers it (never its token hash or public key). */
export const runnerSchema = z.strictObject({
  id: z.number().int(),
  project_id: z.number().int().nullable().describe('null: a global runner (admins); else its project.'),
  project_name: z
    .string()
    .nullable()
    .optional()
    .describe("The project's name, for project runners listed by GET /api/runners?all=1."),
  name: z.string(),
  tags: z.array(z.string()),
  version: z
    .string()
    .describe('The signalbox version the runner last said it runs (empty: never connected).'),
  max_parallel_tasks: z.number().int(),
  active: z.boolean().describe('A disabled runner is given no new tasks.'),
  online: z.boolean().describe('Connected to a server instance now.'),
  touched: z.string().nullable().describe('Its last heartbeat (ISO 8601), or null if it never connected.'),
  started_at: z.string().nullable().describe('When the runner process it last heard from started.'),
  running_tasks: z
    .number()
    .int()
    .describe('Its tasks that are starting, running or waiting for confirmation.'),
  created: z.string(),
  sandbox: runnerSandboxSchema
    .nullable()
    .describe('The task sandbox the runner last reported (null: it never connected or did not say).'),
  protocol: z
    .number()
    .int()
    .nullable()
    .describe('The runner protocol version it last spoke (null: it never connected).'),
  incompatible: z
    .boolean()
    .describe('It speaks another protocol version than this server: it was refused and must be upgraded.'),
});
export type Runner = z.infer<typeof runnerSchema>;

/** Body of PUT runners/{id}: what an admin or a project owner may change. Absent fields stay as they are. */
export const runnerUpdateInput = z.object({
  name: requiredString(255)
    .refine((v) => !controlChars.test(v), issue('control_chars'))
    .optional(),
  tags: runnerTags.optional(),
  max_parallel_tasks: z.number().int().min(1).max(RUNNER_MAX_PARALLEL_MAX).optional(),
  active: z.boolean().optional(),
});
export type RunnerUpdateInput = z.infer<typeof runnerUpdateInput>;

/** A one-time registration token, shown only in this answer (the server keeps its SHA-256). */
export const runnerRegistrationTokenSchema = z.strictObject({
  token: z.string().describe('Works for one registration; shown only here.'),
  expires_at: z.string().describe('ISO 8601; one hour after it was made.'),
  project_id: z.number().int().nullable(),
});
export type RunnerRegistrationToken = z.infer<typeof runnerRegistrationTokenSchema>;

/** Query of GET /api/runners: `all=1` adds the project runners. */
export const runnerListQuery = z.object({
  all: z
    .enum(['0', '1', 'true', 'false'])
    .optional()
    .transform((v) => v === '1' || v === 'true'),
});
