import {
  DRIFT_PATHS_MAX,
  DRIFT_RESOURCES_MAX,
  type DriftReport,
  type DriftResource,
  type GlobMatcher,
  globMatcher,
} from '@signalbox/contracts';
import { actionOf } from './terraform-plan';

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The template's ignore rules of drift checks. */
export type DriftRules = { addresses: string[]; attributes: string[] };

/** The ignore rules a template's parameters hold (anything that is not a list of text is none). */
export function driftRulesOf(templateParams: Record<string, unknown>): DriftRules {
  const list = (v: unknown) =>
    Array.isArray(v)
      ? v.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim())
      : [];
  return {
    addresses: list(templateParams.drift_ignore_addresses),
    attributes: list(templateParams.drift_ignore_attributes),
  };
}

/**
 * The attribute paths whose value differs between `before` and `after` (names only: no value leaves this
 * function): `tags.Owner`, `ingress[0].from_port`. A value that appears or goes is one path; at most `max` paths,
 * 8 levels deep.
 */
export function changedPaths(before: Json, after: Json, max = DRIFT_PATHS_MAX): string[] {
  const out: string[] = [];
  const walk = (a: Json, b: Json, path: string, depth: number) => {
    if (out.length >= max) return;
    if (isObject(a) && isObject(b) && depth < 8) {
      for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort())
        walk(a[k], b[k], path ? `${path}.${k}` : k, depth + 1);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length && depth < 8) {
      for (const [i, v] of a.entries()) walk(v, b[i], `${path}[${i}]`, depth + 1);
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(path ? clip(path, 300) : '(whole value)');
  };
  walk(before, after, '', 0);
  return out;
}

/** True when an attribute path rule covers the path: the same path, or a path inside it (`tags` covers `tags.a`). */
function covers(rule: GlobMatcher, path: string): boolean {
  if (rule.test(path)) return true;
  // Each shorter prefix of the path, cut before a "." or "[".
  for (let i = path.length - 1; i > 0; i--)
    if ((path[i] === '.' || path[i] === '[') && rule.test(path.slice(0, i))) return true;
  return false;
}

/**
 * Judges drift from the JSON of a refresh-only plan (`resource_drift`: changed outside Terraform) and of a normal
 * plan (`resource_changes` other than no-op and read: the infrastructure differs from the configuration), leaving
 * out what the rules ignore: resources whose address matches an address pattern, and changes whose every
 * attribute path matches an attribute pattern.
 */
export function judgeDrift(refreshPlan: Json, plan: Json, rules: DriftRules): DriftReport {
  const addressRules = rules.addresses.map((p) => globMatcher(p));
  const attributeRules = rules.attributes.map((p) => globMatcher(p, 'part'));
  const resources: DriftResource[] = [];
  let ignored = 0;
  let omitted = 0;
  const take = (list: Json, kind: DriftResource['kind']) => {
    for (const rc of Array.isArray(list) ? list : []) {
      if (!isObject(rc) || !isObject(rc.change) || typeof rc.address !== 'string') continue;
      const actions = Array.isArray(rc.change.actions)
        ? rc.change.actions.filter((a): a is string => typeof a === 'string')
        : [];
      const action = actionOf(actions);
      if (!action || action === 'no-op' || action === 'read') continue;
      const address = rc.address;
      if (addressRules.some((r) => r.test(address))) {
        ignored += 1;
        continue;
      }
      const paths =
        action === 'update' || action === 'replace' ? changedPaths(rc.change.before, rc.change.after) : [];
      const kept = paths.filter((p) => !attributeRules.some((r) => covers(r, p)));
      if (paths.length > 0 && kept.length === 0) {
        ignored += 1;
        continue;
      }
      if (resources.length >= DRIFT_RESOURCES_MAX) {
        omitted += 1;
        continue;
      }
      resources.push({ address: clip(address, 500), kind, action, paths: kept });
    }
  };
  take(isObject(refreshPlan) ? refreshPlan.resource_drift : [], 'drift');
  take(isObject(plan) ? plan.resource_changes : [], 'change');
  return { drifted: resources.length + omitted > 0, resources, ignored, omitted };
}
