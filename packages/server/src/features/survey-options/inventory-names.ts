import { parse as parseYaml } from 'yaml';

/** The hosts and groups a static inventory names, each once, in the order they first appear. */
export type InventoryNames = { hosts: string[]; groups: string[] };

/** Groups every inventory has implicitly: they are no choice. */
const implicitGroups = new Set(['all', 'ungrouped']);

class Names {
  private readonly hostSet = new Set<string>();
  private readonly groupSet = new Set<string>();
  host(name: string) {
    if (name) this.hostSet.add(name);
  }
  group(name: string) {
    if (name && !implicitGroups.has(name)) this.groupSet.add(name);
  }
  result(): InventoryNames {
    return { hosts: [...this.hostSet], groups: [...this.groupSet] };
  }
}

/** At most this many hosts from one range pattern (`web[01:50]`), so a pattern cannot make millions. */
const MAX_RANGE = 1000;

/**
 * Ansible's host range patterns: `web[01:03].example.com` is web01…web03 (leading zeros kept), `db-[a:c]` is
 * db-a…db-c, with an optional step (`[1:9:2]`). A name without a pattern is itself.
 */
export function expandHostPattern(name: string): string[] {
  const match = /^(.*?)\[([0-9a-z]+):([0-9a-z]+)(?::(\d+))?\](.*)$/i.exec(name);
  if (!match) return [name];
  const before = match[1] ?? '';
  const from = match[2] ?? '';
  const to = match[3] ?? '';
  const stepText = match[4];
  const after = match[5] ?? '';
  const step = stepText ? Number(stepText) : 1;
  if (step < 1) return [name];
  const out: string[] = [];
  const numeric = /^\d+$/.test(from) && /^\d+$/.test(to);
  if (numeric) {
    const width = from.length;
    for (let i = Number(from); i <= Number(to) && out.length < MAX_RANGE; i += step)
      for (const rest of expandHostPattern(after))
        out.push(`${before}${String(i).padStart(width, '0')}${rest}`);
  } else if (/^[a-z]$/i.test(from) && /^[a-z]$/i.test(to)) {
    for (let c = from.charCodeAt(0); c <= to.charCodeAt(0) && out.length < MAX_RANGE; c += step)
      for (const rest of expandHostPattern(after)) out.push(`${before}${String.fromCharCode(c)}${rest}`);
  } else return [name];
  return out.slice(0, MAX_RANGE);
}

/** The hosts and groups of an INI inventory (Ansible's format: `[group]`, `[group:children]`, `[group:vars]`). */
export function iniInventoryNames(text: string): InventoryNames {
  const names = new Names();
  let section: { group: string; kind: 'hosts' | 'children' | 'vars' } = { group: 'ungrouped', kind: 'hosts' };
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[([^\]:]+)(?::(children|vars))?\]$/.exec(line);
    if (header) {
      section = {
        group: (header[1] ?? '').trim(),
        kind: (header[2] as 'children' | 'vars' | undefined) ?? 'hosts',
      };
      names.group(section.group);
      continue;
    }
    if (section.kind === 'vars') continue;
    const first = line.split(/\s+/)[0] ?? '';
    if (section.kind === 'children') names.group(first);
    else for (const host of expandHostPattern(first)) names.host(host);
  }
  return names.result();
}

/** The hosts and groups of a YAML inventory (groups with `hosts` and `children` maps, `all` at the top). */
export function yamlInventoryNames(text: string): InventoryNames {
  const doc: unknown = parseYaml(text, { maxAliasCount: 100 });
  const names = new Names();
  const seen = new Set<unknown>();
  const visit = (groups: unknown) => {
    if (!groups || typeof groups !== 'object' || Array.isArray(groups) || seen.has(groups)) return;
    seen.add(groups);
    for (const [group, body] of Object.entries(groups as Record<string, unknown>)) {
      names.group(group);
      if (!body || typeof body !== 'object') continue;
      const { hosts, children } = body as { hosts?: unknown; children?: unknown };
      if (hosts && typeof hosts === 'object' && !Array.isArray(hosts))
        for (const host of Object.keys(hosts)) for (const one of expandHostPattern(host)) names.host(one);
      visit(children);
    }
  };
  if (doc != null && (typeof doc !== 'object' || Array.isArray(doc))) throw new Error('not a YAML inventory');
  visit(doc);
  return names.result();
}
