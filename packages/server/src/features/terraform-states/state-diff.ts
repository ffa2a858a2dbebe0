import {
  STATE_DIFF_ATTRIBUTES_MAX,
  STATE_DIFF_RESOURCES_MAX,
  STATE_DIFF_VALUE_MAX,
  type StateAttributeChange,
  type StateDiff,
} from '@signalbox/contracts';

/**
 * The resource-level difference of two Terraform states (format version 4, which Terraform 0.12+ and OpenTofu
 * write): resource instances added, removed, and changed with the attribute paths whose value differs. A value
 * Terraform marks sensitive (an instance's `sensitive_attributes`) is never shown, only that it changed.
 */

type Instance = { attributes: Map<string, string>; sensitive: string[][] };

/** A state's resource instances by address. */
function instancesOf(state: unknown): Map<string, Instance> {
  const out = new Map<string, Instance>();
  const resources = (state as { resources?: unknown })?.resources;
  if (!Array.isArray(resources)) return out;
  for (const r of resources) {
    if (!r || typeof r !== 'object') continue;
    const { module, mode, type, name, instances } = r as Record<string, unknown>;
    if (typeof type !== 'string' || typeof name !== 'string' || !Array.isArray(instances)) continue;
    const base = `${typeof module === 'string' && module ? `${module}.` : ''}${mode === 'data' ? 'data.' : ''}${type}.${name}`;
    for (const inst of instances) {
      if (!inst || typeof inst !== 'object') continue;
      const { index_key, attributes, sensitive_attributes } = inst as Record<string, unknown>;
      const key =
        typeof index_key === 'number'
          ? `[${index_key}]`
          : typeof index_key === 'string'
            ? `[${JSON.stringify(index_key)}]`
            : '';
      const leaves = new Map<string, string>();
      flatten(attributes, '', leaves);
      out.set(`${base}${key}`, { attributes: leaves, sensitive: sensitivePaths(sensitive_attributes) });
    }
  }
  return out;
}

/** Every leaf value by its path (`a.b`, `list[0].c`), as JSON text; an empty object or list is a leaf. */
function flatten(value: unknown, path: string, into: Map<string, string>, depth = 0) {
  if (depth < 32 && value && typeof value === 'object') {
    const entries = Array.isArray(value)
      ? value.map((v, i) => [`${path}[${i}]`, v] as const)
      : Object.entries(value).map(([k, v]) => [path ? `${path}.${k}` : k, v] as const);
    if (entries.length) {
      for (const [p, v] of entries) flatten(v, p, into, depth + 1);
      return;
    }
  }
  if (path) into.set(path, JSON.stringify(value ?? null));
}

/**
 * Terraform's sensitive paths: a list of paths, each a list of steps (`{"type":"get_attr","value":"password"}`,
 * `{"type":"index","value":{"value":0,"type":"number"}}`), as parts of our path spelling.
 */
function sensitivePaths(marks: unknown): string[][] {
  if (!Array.isArray(marks)) return [];
  const out: string[][] = [];
  for (const path of marks) {
    if (!Array.isArray(path)) continue;
    const parts: string[] = [];
    for (const step of path) {
      const { type, value } = (step ?? {}) as { type?: unknown; value?: unknown };
      if (type === 'get_attr' && typeof value === 'string') parts.push(value);
      else if (type === 'index') {
        const v = (value as { value?: unknown } | null)?.value;
        parts.push(typeof v === 'number' ? `[${v}]` : String(v));
      }
    }
    if (parts.length) out.push(parts);
  }
  return out;
}

/** The parts of a flattened path: `a.b[0].c` → a, b, [0], c. */
const partsOf = (path: string) => path.match(/\[\d+\]|[^.[\]]+/g) ?? [];

function isSensitive(path: string, marks: string[][]) {
  const parts = partsOf(path);
  return marks.some((mark) => mark.length <= parts.length && mark.every((p, i) => p === parts[i]));
}

const cut = (text: string | undefined) =>
  text === undefined
    ? null
    : text.length > STATE_DIFF_VALUE_MAX
      ? `${text.slice(0, STATE_DIFF_VALUE_MAX)}…`
      : text;

export function diffStates(
  from: { id: number; serial: number; state: unknown },
  to: { id: number; serial: number; state: unknown },
): StateDiff {
  const before = instancesOf(from.state);
  const after = instancesOf(to.state);
  let truncated = false;
  const added: string[] = [];
  const removed: string[] = [];
  const changed: StateDiff['changed'] = [];
  const room = (list: unknown[]) => {
    if (list.length < STATE_DIFF_RESOURCES_MAX) return true;
    truncated = true;
    return false;
  };
  for (const address of after.keys()) if (!before.has(address) && room(added)) added.push(address);
  for (const address of before.keys()) if (!after.has(address) && room(removed)) removed.push(address);
  for (const [address, now] of after) {
    const was = before.get(address);
    if (!was) continue;
    const marks = [...was.sensitive, ...now.sensitive];
    const paths = [...new Set([...was.attributes.keys(), ...now.attributes.keys()])].sort();
    const attributes: StateAttributeChange[] = [];
    for (const path of paths) {
      const a = was.attributes.get(path);
      const b = now.attributes.get(path);
      if (a === b) continue;
      if (attributes.length >= STATE_DIFF_ATTRIBUTES_MAX) {
        truncated = true;
        break;
      }
      const sensitive = isSensitive(path, marks);
      attributes.push({
        path,
        before: sensitive ? null : cut(a),
        after: sensitive ? null : cut(b),
        sensitive,
      });
    }
    if (attributes.length && room(changed)) changed.push({ address, attributes });
  }
  return {
    from: { id: from.id, serial: from.serial },
    to: { id: to.id, serial: to.serial },
    added,
    removed,
    changed,
    truncated,
  };
}
