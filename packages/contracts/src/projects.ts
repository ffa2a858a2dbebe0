import { z } from 'zod';
import { flag, messages, requiredString } from './common';
import type { ProjectRole } from './permissions';

export type Project = {
  id: number;
  created: string;
  name: string;
  alert: boolean;
  alert_chat: string | null;
  max_parallel_tasks: number;
  type: string;
  /** Days finished tasks and their output are kept; 0 = the server default. */
  task_retention_days: number;
};

/** Upper bound of `task_retention_days` (and of SIGNALBOX_TASK_RETENTION_DAYS): a hundred years. */
export const MAX_TASK_RETENTION_DAYS = 36_500;

/** Days finished tasks are kept, 0 meaning the server default. Absent or null: unchanged on update, 0 on create. */
export const taskRetentionDays = z
  .number({ error: messages.retentionNotInteger })
  .int(messages.retentionNotInteger)
  .min(0, messages.retentionNegative)
  .max(MAX_TASK_RETENTION_DAYS, messages.retentionTooLarge(MAX_TASK_RETENTION_DAYS));

export const projectInput = z.object({
  name: requiredString('Name', 100),
  alert: flag('Alert'),
  alert_chat: z
    .string({ error: 'Alert chat must be a string' })
    .trim()
    .max(30, messages.tooLong('Alert chat', 30))
    .nullish()
    .transform((v) => (v ? v : null)),
  max_parallel_tasks: z
    .number({ error: messages.mustBeInteger })
    .int(messages.mustBeInteger)
    .min(0, messages.mustBeNonNegative)
    .max(10_000, messages.maxParallelTooLarge(10_000))
    .nullish()
    .transform((v) => v ?? 0),
  task_retention_days: taskRetentionDays.nullish().transform((v) => v ?? undefined),
  type: z
    .string()
    .max(20)
    .nullish()
    .transform((v) => v ?? ''),
  demo: flag('Demo'),
});
export type ProjectInput = z.infer<typeof projectInput>;

export type ProjectRoleInfo = { role: ProjectRole | ''; permissions: number };
