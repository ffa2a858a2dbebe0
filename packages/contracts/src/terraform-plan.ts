import { z } from 'zod';

/**
 * Terraform's -lock-timeout: Go's duration syntax (one or more number-and-unit parts: `30s`, `5m`, `1h`,
 * `1m30s`, `500ms`), from 0 (try the lock once) to LOCK_TIMEOUT_MAX_MS. A task waits this long for a state lock
 * another run holds.
 */
export const DEFAULT_LOCK_TIMEOUT = '5m';
export const LOCK_TIMEOUT_MAX = '1h';
const LOCK_TIMEOUT_MAX_MS = 3_600_000;
const DURATION = /^(?:\d{1,7}(?:\.\d{1,6})?(?:ns|us|µs|ms|s|m|h))+$/;
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** The milliseconds of a lock timeout, or null when it is not Terraform's duration syntax within the bound. */
export function lockTimeoutMs(text: string): number | null {
  if (text.length > 40 || !DURATION.test(text)) return null;
  let total = 0;
  for (const [, n, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g))
    total += Number(n) * (UNIT_MS[unit as string] ?? Number.NaN);
  return Number.isFinite(total) && total <= LOCK_TIMEOUT_MAX_MS ? total : null;
}

/** The normalised action of one resource change, as `change.actions` of Terraform's plan JSON gives it. */
export const planActions = ['create', 'update', 'delete', 'replace', 'read', 'no-op'] as const;
export type PlanAction = (typeof planActions)[number];

/** How many resource changes a stored plan summary lists (the rest are counted as omitted). */
export const PLAN_CHANGES_MAX = 5000;
/** How many changed attribute names one resource change lists. */
export const PLAN_ATTRIBUTES_MAX = 100;

export const planResourceChangeSchema = z.strictObject({
  address: z.string().describe('The resource instance address, e.g. aws_instance.web[0].'),
  action: z
    .enum(planActions)
    .describe('create, update, delete, replace (delete and create, in either order), read or no-op.'),
  actions: z.array(z.string()).describe("Terraform's own change.actions, in its order."),
  attributes: z
    .array(z.string())
    .describe('The top-level attribute names whose value changes (names only: values are never stored).'),
  sensitive: z.array(z.string()).describe('Which of those attributes are sensitive.'),
});
export type PlanResourceChange = z.infer<typeof planResourceChangeSchema>;

/** The readable summary of a Terraform/OpenTofu saved plan (`show -json`), kept with the task. */
export const planSummarySchema = z.strictObject({
  format_version: z.string().describe("The plan JSON's format_version."),
  counts: z
    .strictObject({
      add: z.number().int(),
      change: z.number().int(),
      destroy: z.number().int(),
      replace: z.number().int(),
      read: z.number().int(),
      no_op: z.number().int(),
    })
    .describe(
      'Resource changes by action, as Terraform counts them (a replacement counts once, as replace).',
    ),
  drift: z.number().int().describe('How many resources changed outside Terraform since the last run.'),
  changes: z
    .array(planResourceChangeSchema)
    .describe(`The resource changes other than no-op, at most ${PLAN_CHANGES_MAX}.`),
  omitted: z.number().int().describe('Resource changes past the listed ones (not stored).'),
});
export type PlanSummary = z.infer<typeof planSummarySchema>;

/** The counts line of a plan summary, as alerts say it: "2 to add, 1 to change, 1 to replace, 0 to destroy". */
export function planCountsText(counts: PlanSummary['counts']): string {
  return `${counts.add} to add, ${counts.change} to change, ${counts.replace} to replace, ${counts.destroy} to destroy`;
}

/** How long a stored plan may be applied after it was made, unless the template says (plan_ttl_hours). */
export const DEFAULT_PLAN_TTL_HOURS = 24;
export const PLAN_TTL_HOURS_MAX = 720;
/** The largest plan file a plan-only task keeps (to be applied later); a larger one is only summarised. */
export const PLAN_FILE_MAX_BYTES = 4 * 1024 * 1024;

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

/** The stored plan file of a task (never its content), and what was decided about it. */
export const planFileSchema = z.strictObject({
  digest: z.string().describe('The SHA-256 (hex) of the saved plan file: an approval binds to it.'),
  commit_hash: z.string().nullable().describe('The commit the plan was made from.'),
  workspace: z.string().nullable(),
  state_serial: z.number().int().nullable().describe('The serial of the state the plan was made from.'),
  state_lineage: z.string().nullable().describe('The lineage of the state the plan was made from.'),
  created: z.string().nullable().describe('When the plan was made.'),
  stored: z.boolean().describe('The plan file is kept (encrypted) so that a later task can apply it.'),
  expires_at: z
    .string()
    .nullable()
    .describe("Until when a later task may apply it (the template's plan_ttl_hours after it was made)."),
  approved_by: z.number().int().nullable(),
  approved_by_name: z.string().nullable(),
  approved_at: z.string().nullable(),
  applied_by_task: z.number().int().nullable().describe('The task that applied this stored plan.'),
});
export type PlanFile = z.infer<typeof planFileSchema>;

/** GET tasks/{id}/plan: the summary and, when the run kept its digest, the plan file's facts. */
export const taskPlanSchema = planSummarySchema.extend({
  plan_file: planFileSchema.nullable(),
});
export type TaskPlan = z.infer<typeof taskPlanSchema>;

/** POST tasks/{id}/confirm and tasks/{id}/apply_plan: the digest of the plan the approver read (optional). */
export const planApprovalInput = z
  .strictObject({
    plan_digest: sha256Hex
      .optional()
      .describe('The SHA-256 of the plan the approver read: refused when the plan differs.'),
  })
  .nullish()
  .transform((v) => v ?? {});

/** One drifted resource: what changed outside Terraform (drift) or differs from the configuration (change). */
export const driftResourceSchema = z.strictObject({
  address: z.string(),
  kind: z
    .enum(['drift', 'change'])
    .describe('drift: changed outside Terraform (resource_drift); change: the plan would change it.'),
  action: z.enum(planActions),
  paths: z
    .array(z.string())
    .describe('The attribute paths whose value differs, e.g. tags.Owner (names only: never values).'),
});
export type DriftResource = z.infer<typeof driftResourceSchema>;

/** How many drifted resources a report lists, and how many attribute paths each. */
export const DRIFT_RESOURCES_MAX = 1000;
export const DRIFT_PATHS_MAX = 50;

/** What a drift check found, after the template's ignore rules. */
export const driftReportSchema = z.strictObject({
  drifted: z.boolean(),
  resources: z.array(driftResourceSchema),
  ignored: z.number().int().describe('Drifted resources the ignore rules left out.'),
  omitted: z.number().int().describe('Drifted resources past the listed ones.'),
});
export type DriftReport = z.infer<typeof driftReportSchema>;

export const driftStatuses = ['drifted', 'in_sync'] as const;

/** GET templates/{id}/drift: the outcome of the template's last drift check. */
export const templateDriftSchema = driftReportSchema.extend({
  template_id: z.number().int(),
  status: z.enum(driftStatuses),
  since: z.string().nullable().describe('Since when the template has drifted (null: in sync).'),
  checked_at: z.string(),
  task_id: z.number().int().describe('The drift check task.'),
});
export type TemplateDrift = z.infer<typeof templateDriftSchema>;

/**
 * An ignore rule of a drift check: a resource address pattern (`*` any text, `?` one character, e.g.
 * `aws_autoscaling_group.*`) or an attribute path pattern (`*` one path part, e.g. `tags.LastScanned`, `tags.*`).
 */
export type GlobMatcher = { test(text: string): boolean };

/**
 * The matcher of a drift ignore pattern: `*` any text (with `star: 'part'`, any text within one path part: no ".",
 * "[" or "]"), `?` one character, anything else itself. It walks the text once per pattern character (no regular
 * expression, so a pattern a manager writes, such as `*a*a*a*a*b`, cannot backtrack for ever on a long address).
 */
export function globMatcher(pattern: string, star: 'any' | 'part' = 'any'): GlobMatcher {
  const tokens = [...pattern].filter((ch, i, all) => ch !== '*' || all[i - 1] !== '*');
  const separator = (ch: string) => star === 'part' && (ch === '.' || ch === '[' || ch === ']');
  return {
    test(text) {
      const chars = [...text];
      const n = chars.length;
      // reach[i]: the pattern so far matches the text's first i characters.
      let reach = new Uint8Array(n + 1);
      reach[0] = 1;
      for (const token of tokens) {
        const next = new Uint8Array(n + 1);
        if (token === '*') {
          let open = false;
          for (let i = 0; i <= n; i++) {
            if (reach[i]) open = true;
            if (open) next[i] = 1;
            if (i < n && separator(chars[i] as string)) open = false;
          }
        } else {
          for (let i = 0; i < n; i++) if (reach[i] && (token === '?' || chars[i] === token)) next[i + 1] = 1;
        }
        reach = next;
      }
      return reach[n] === 1;
    },
  };
}

/** A drift ignore pattern is printable text without control characters, at most 255 characters. */
export const isDriftPattern = (text: string) =>
  text.length > 0 &&
  text.length <= 255 &&
  [...text].every((ch) => ch.charCodeAt(0) >= 0x20 && ch !== '\u007f');
