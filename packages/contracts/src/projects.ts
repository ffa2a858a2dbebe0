import { z } from 'zod';
import { flag, requiredString } from './common';
import { projectRoles } from './permissions';

/** A project as the API answers it (GET projects, GET project/{id}, and the create and restore routes). */
export const projectSchema = z.strictObject({
  id: z.number().int(),
  created: z.string().describe('When the project was created (ISO 8601).'),
  name: z.string(),
  alert: z.boolean().describe("Whether the project's tasks send alerts through the enabled channels."),
  alert_chat: z
    .string()
    .nullable()
    .describe("Telegram chat the project's alerts go to; null or empty: the server's configured chat."),
  max_parallel_tasks: z.number().int().describe('Tasks of the project that may run at once; 0 = no limit.'),
  type: z.string(),
  task_retention_days: z
    .number()
    .int()
    .describe('Days finished tasks and their output are kept; 0 = the server default.'),
  agent_runs_need_approval: z
    .boolean()
    .describe('Whether tasks AI agents start (through the MCP endpoint) wait for a member to approve them.'),
});
export type Project = z.infer<typeof projectSchema>;

/** Upper bound of `task_retention_days` (and of SIGNALBOX_TASK_RETENTION_DAYS): a hundred years. */
export const MAX_TASK_RETENTION_DAYS = 36_500;

/** Days finished tasks are kept, 0 meaning the server default. Absent or null: unchanged on update, 0 on create. */
export const taskRetentionDays = z.number().int().min(0).max(MAX_TASK_RETENTION_DAYS);

export const projectInput = z.object({
  name: requiredString(100),
  alert: flag(),
  alert_chat: z
    .string()
    .trim()
    .max(30)
    .nullish()
    .transform((v) => (v ? v : null)),
  max_parallel_tasks: z
    .number()
    .int()
    .min(0)
    .max(10_000)
    .nullish()
    .transform((v) => v ?? 0),
  task_retention_days: taskRetentionDays.nullish().transform((v) => v ?? undefined),
  /** Absent or null: unchanged on update, true on create. */
  agent_runs_need_approval: z
    .boolean()
    .nullish()
    .transform((v) => v ?? undefined),
  type: z
    .string()
    .max(20)
    .nullish()
    .transform((v) => v ?? ''),
  demo: flag(),
});
export type ProjectInput = z.infer<typeof projectInput>;

/** The caller's place in a project (GET project/{id}/role). */
export const projectRoleInfoSchema = z.strictObject({
  role: z
    .enum(projectRoles)
    .or(z.literal(''))
    .describe("The caller's role in the project; empty for an administrator who is not a member."),
  permissions: z
    .number()
    .int()
    .describe(
      'Bit mask of the permissions the caller holds in the project (every bit for an administrator).',
    ),
});
export type ProjectRoleInfo = z.infer<typeof projectRoleInfoSchema>;
