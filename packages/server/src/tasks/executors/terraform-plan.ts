import {
  PLAN_ATTRIBUTES_MAX,
  PLAN_CHANGES_MAX,
  type PlanAction,
  type PlanResourceChange,
  type PlanSummary,
} from '@signalbox/contracts';

/** The longest `show -json` output summarised (a larger plan is said in the log, and not summarised). */
export const PLAN_JSON_MAX_BYTES = 64 * 1024 * 1024;
/** The longest stored summary, as JSON text: resource changes past it are counted as omitted. */
export const PLAN_SUMMARY_MAX_CHARS = 4 * 1024 * 1024;
const ADDRESS_MAX = 500;
const ATTRIBUTE_MAX = 100;

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The action of Terraform's `change.actions`: a delete and a create, in either order, is a replacement. */
export function actionOf(actions: readonly string[]): PlanAction | null {
  const key = actions.join(',');
  switch (key) {
    case 'create':
    case 'update':
    case 'delete':
    case 'read':
    case 'no-op':
      return key;
    case 'delete,create':
    case 'create,delete':
      return 'replace';
    default:
      return null;
  }
}

/** True when a `*_sensitive` mark says the value (or something inside it) is sensitive. */
function marked(mark: Json): boolean {
  if (mark === true) return true;
  if (Array.isArray(mark)) return mark.some(marked);
  if (isObject(mark)) return Object.values(mark).some(marked);
  return false;
}

/** The equality of two JSON values (key order ignored). */
function same(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => same(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]))
    );
  }
  return false;
}

/**
 * The top-level attribute names a change touches (names only: no value leaves this function), and which of
 * them are sensitive. A created resource touches what it will have; a deleted one what it had; an update or
 * replacement the attributes whose value differs or is known only after apply (`after_unknown`).
 */
function changedAttributes(change: Record<string, Json>, action: PlanAction) {
  const before = isObject(change.before) ? change.before : {};
  const after = isObject(change.after) ? change.after : {};
  const unknown = isObject(change.after_unknown) ? change.after_unknown : {};
  const names = new Set<string>();
  if (action === 'delete') for (const k of Object.keys(before)) names.add(k);
  else if (action === 'create' || action === 'read') {
    for (const k of Object.keys(after)) names.add(k);
    for (const k of Object.keys(unknown)) if (marked(unknown[k])) names.add(k);
  } else if (action !== 'no-op') {
    for (const k of new Set([...Object.keys(before), ...Object.keys(after)]))
      if (!same(before[k], after[k])) names.add(k);
    for (const k of Object.keys(unknown)) if (marked(unknown[k])) names.add(k);
  }
  // A whole value marked sensitive (true) makes every attribute of it sensitive.
  const sensitiveIn = (mark: Json, k: string) => mark === true || (isObject(mark) && marked(mark[k]));
  const list = [...names].sort().slice(0, PLAN_ATTRIBUTES_MAX);
  return {
    attributes: list.map((k) => clip(k, ATTRIBUTE_MAX)),
    sensitive: list
      .filter((k) => sensitiveIn(change.before_sensitive, k) || sensitiveIn(change.after_sensitive, k))
      .map((k) => clip(k, ATTRIBUTE_MAX)),
  };
}

/**
 * The summary of `terraform show -json <planfile>`: counts by action, drift, and the resource changes other
 * than no-op with their changed attribute names (never values), bounded in number and size. Null when the
 * text is not a plan's JSON.
 */
export function summarisePlan(jsonText: string): PlanSummary | null {
  const plan = readPlanJson(jsonText);
  return plan === null ? null : summarisePlanJson(plan);
}

/** The parsed JSON of `show -json`; null when the text is not a plan's JSON. */
export function readPlanJson(jsonText: string): Record<string, Json> | null {
  let plan: Json;
  try {
    plan = JSON.parse(jsonText);
  } catch {
    return null;
  }
  return isObject(plan) && typeof plan.format_version === 'string' ? plan : null;
}

/**
 * The state a plan was made from, as its JSON says (`prior_state`'s `serial` and `lineage`, when it carries
 * them): a later apply of that state makes the plan stale.
 */
export function priorStateOf(plan: Json): { serial: number | null; lineage: string | null } {
  const prior = isObject(plan) && isObject(plan.prior_state) ? plan.prior_state : {};
  const serial = prior.serial;
  const lineage = prior.lineage;
  return {
    serial: typeof serial === 'number' && Number.isSafeInteger(serial) && serial >= 0 ? serial : null,
    lineage: typeof lineage === 'string' && lineage.length > 0 && lineage.length <= 64 ? lineage : null,
  };
}

/** The summary of a plan's parsed JSON (see summarisePlan); null when it is not a plan's JSON. */
export function summarisePlanJson(plan: Json): PlanSummary | null {
  if (!isObject(plan) || typeof plan.format_version !== 'string') return null;
  const counts = { add: 0, change: 0, destroy: 0, replace: 0, read: 0, no_op: 0 };
  const changes: PlanResourceChange[] = [];
  let omitted = 0;
  let size = 0;
  for (const rc of Array.isArray(plan.resource_changes) ? plan.resource_changes : []) {
    if (!isObject(rc) || !isObject(rc.change) || typeof rc.address !== 'string') continue;
    const actions = Array.isArray(rc.change.actions)
      ? rc.change.actions.filter((a): a is string => typeof a === 'string')
      : [];
    const action = actionOf(actions);
    if (!action) continue;
    if (action === 'create') counts.add += 1;
    else if (action === 'update') counts.change += 1;
    else if (action === 'delete') counts.destroy += 1;
    else if (action === 'replace') counts.replace += 1;
    else if (action === 'read') counts.read += 1;
    else counts.no_op += 1;
    if (action === 'no-op') continue;
    const entry: PlanResourceChange = {
      address: clip(rc.address, ADDRESS_MAX),
      action,
      actions,
      ...changedAttributes(rc.change, action),
    };
    const entrySize = JSON.stringify(entry).length + 1;
    if (changes.length >= PLAN_CHANGES_MAX || size + entrySize > PLAN_SUMMARY_MAX_CHARS) {
      omitted += 1;
      continue;
    }
    size += entrySize;
    changes.push(entry);
  }
  return {
    format_version: clip(plan.format_version, 20),
    counts,
    drift: Array.isArray(plan.resource_drift) ? plan.resource_drift.length : 0,
    changes,
    omitted,
  };
}

/** What Terraform (and OpenTofu) print when the state lock is held: the error, and who holds it when it says. */
export function lockFailure(output: string): { holder: string | null } | null {
  if (!/Error acquiring the state lock|Error locking state/.test(output)) return null;
  // "Lock Info:" is followed by "  ID: …", "  Path: …", "  Operation: …", "  Who: user@host", …
  // Each line may carry the box Terraform draws around a diagnostic ("│ ").
  const who = /^[\s│|]*Who:[ \t]*(\S.*?)\s*$/m.exec(output)?.[1];
  const operation = /^[\s│|]*Operation:[ \t]*(\S.*?)\s*$/m.exec(output)?.[1];
  const holder = who ? clip(operation ? `${who} (${operation})` : who, 200) : null;
  return { holder };
}

/** The reason a run that could not take the state lock ends with. */
export const lockFailureMessage = (holder: string | null, timeout: string) =>
  `The state is locked${holder ? ` by ${holder}` : ''}: the lock was not released within the lock timeout (${timeout})`;
