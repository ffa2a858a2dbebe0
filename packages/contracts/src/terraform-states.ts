import { z } from 'zod';
import { issue } from './errors';

/**
 * The built-in Terraform state backend: Terraform's `http` backend protocol at
 * `/api/project/{id}/terraform/states/{name}` (GET, POST, DELETE, LOCK, UNLOCK), and the console's view of each
 * state: its versions, the lock, a diff between two versions.
 */

/**
 * A state's name: letters, digits, ".", "_" and "-", starting with a letter or digit, at most 100 characters (the
 * longest path parameter the server takes).
 */
export const STATE_NAME_MAX = 100;
const STATE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const isStateName = (name: string) => STATE_NAME.test(name);
export const stateNameSchema = z
  .string()
  .regex(STATE_NAME, { message: issue('state_name') })
  .describe('The state name: letters, digits, ".", "_" and "-", starting with a letter or digit (max 100).');

/**
 * Terraform's LockInfo, as its http backend sends it with LOCK (and back with UNLOCK), and as a 423 answer gives the
 * holder's. Only `ID` is required; every field is bounded.
 */
export const lockInfoInput = z.object({
  ID: z.string().trim().min(1).max(200),
  Operation: z.string().max(200).optional(),
  Info: z.string().max(2000).optional(),
  Who: z.string().max(500).optional(),
  Version: z.string().max(100).optional(),
  Created: z.string().max(100).optional(),
  Path: z.string().max(1000).optional(),
});
export type LockInfo = z.infer<typeof lockInfoInput>;

/** The lock a state is under, as the console shows it. */
export const stateLockSchema = z.strictObject({
  id: z.string().describe("The lock's ID, as Terraform gave it."),
  operation: z
    .string()
    .describe('What Terraform was doing (OperationTypeApply, OperationTypePlan…); may be empty.'),
  who: z.string().describe('Who Terraform says holds it (user@host); may be empty.'),
  info: z.string(),
  version: z.string().describe('The Terraform version that took the lock; may be empty.'),
  created: z.string().describe('When Terraform says it took the lock; may be empty.'),
  locked_at: z.string().describe('When Signalbox granted the lock (ISO 8601).'),
  user_id: z.number().int().nullable().describe('The user who took it (a task: the user who started it).'),
  user_name: z.string().nullable(),
  task_id: z
    .number()
    .int()
    .nullable()
    .describe('The task that took it, with its own credentials; null: an API token.'),
});
export type StateLock = z.infer<typeof stateLockSchema>;

/** Who wrote a version: a user (with an API token), a task (with its own credentials), or both. */
const writerFields = {
  user_id: z.number().int().nullable(),
  user_name: z.string().nullable(),
  task_id: z.number().int().nullable(),
};

/** One state of a project, as the States page lists it. */
export const stateSummarySchema = z.strictObject({
  name: z.string(),
  size: z.number().int().describe('Bytes of the current version; 0 without one.'),
  serial: z.number().int().nullable().describe("The current version's serial; null without one."),
  lineage: z.string().nullable(),
  updated: z.string().nullable().describe('When the current version was written.'),
  ...writerFields,
  versions: z.number().int().describe('How many versions are kept.'),
  lock: stateLockSchema.nullable(),
});
export type StateSummary = z.infer<typeof stateSummarySchema>;

export const stateVersionSources = ['write', 'rollback'] as const;

/** One kept version of a state, newest first. */
export const stateVersionSchema = z.strictObject({
  id: z.number().int(),
  serial: z.number().int(),
  lineage: z.string(),
  size: z.number().int(),
  created: z.string(),
  ...writerFields,
  source: z.enum(stateVersionSources).describe('write: Terraform wrote it; rollback: a manager rolled back.'),
  rolled_back_from: z.number().int().nullable().describe('The version a rollback copied.'),
  current: z.boolean(),
});
export type StateVersion = z.infer<typeof stateVersionSchema>;

/** A state with its versions (newest first). */
export const stateDetailSchema = z.strictObject({
  state: stateSummarySchema,
  versions: z.array(stateVersionSchema),
});
export type StateDetail = z.infer<typeof stateDetailSchema>;

/** How many attribute changes a diff lists per resource, and how many resources it lists per kind. */
export const STATE_DIFF_ATTRIBUTES_MAX = 200;
export const STATE_DIFF_RESOURCES_MAX = 2000;
/** How long a value of a diff may be (longer values are cut). */
export const STATE_DIFF_VALUE_MAX = 300;

export const stateAttributeChangeSchema = z.strictObject({
  path: z.string().describe('The attribute path, e.g. tags.env or ingress[0].cidr_blocks.'),
  before: z
    .string()
    .nullable()
    .describe('The value before, as JSON text (cut); null when absent or sensitive.'),
  after: z
    .string()
    .nullable()
    .describe('The value after, as JSON text (cut); null when absent or sensitive.'),
  sensitive: z.boolean().describe('Terraform marks the value sensitive: it is never shown.'),
});
export type StateAttributeChange = z.infer<typeof stateAttributeChangeSchema>;

export const stateResourceChangeSchema = z.strictObject({
  address: z
    .string()
    .describe('The resource instance address, e.g. aws_instance.web[0] or module.a.null_resource.x.'),
  attributes: z.array(stateAttributeChangeSchema),
});

/** What changed from one version of a state to another, by resource instance. */
export const stateDiffSchema = z.strictObject({
  from: z.strictObject({ id: z.number().int(), serial: z.number().int() }),
  to: z.strictObject({ id: z.number().int(), serial: z.number().int() }),
  added: z.array(z.string()).describe('Resource instances in `to` only.'),
  removed: z.array(z.string()).describe('Resource instances in `from` only.'),
  changed: z.array(stateResourceChangeSchema).describe('Resource instances in both whose attributes differ.'),
  truncated: z.boolean().describe('Some resources or attributes were left out (too many).'),
});
export type StateDiff = z.infer<typeof stateDiffSchema>;

const versionId = z.coerce.number().int().positive().max(2_147_483_647);
export const stateDiffQuery = z.strictObject({
  from: versionId.describe('The older version id.'),
  to: versionId.describe('The newer version id.'),
});
