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
