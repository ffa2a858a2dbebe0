// A survey variable's options source refers to objects of its project: an inventory (hosts, groups), an option
// list, a key (an HTTP source's credentials). The project stores them by id; a backup names them (as it names
// every other reference), so that a restore into a new project points them at the new objects.

export type SourceRefKind = 'inventory' | 'option_list' | 'key';

const refs: Record<string, { id: string; name: string; kind: SourceRefKind }> = {
  inventory_hosts: { id: 'inventory_id', name: 'inventory', kind: 'inventory' },
  inventory_groups: { id: 'inventory_id', name: 'inventory', kind: 'inventory' },
  option_list: { id: 'option_list_id', name: 'option_list', kind: 'option_list' },
  http: { id: 'key_id', name: 'key', kind: 'key' },
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Each variable with its source's reference rewritten by `rewrite` (other variables and fields as they are). */
function mapSources(vars: unknown[], rewrite: (source: Record<string, unknown>) => Record<string, unknown>) {
  return vars.map((v) => {
    if (!isRecord(v) || !isRecord(v.options_source)) return v;
    return { ...v, options_source: rewrite(v.options_source) };
  });
}

/**
 * The survey as a backup writes it: each source's id replaced by the name `nameOf` gives it (an HTTP source
 * without credentials names no key). An id `nameOf` does not know is left as it is.
 */
export function surveyByName(
  vars: unknown[],
  nameOf: (kind: SourceRefKind, id: number) => string | null,
): unknown[] {
  return mapSources(vars, (source) => {
    const ref = refs[String(source.type)];
    if (!ref) return source;
    const id = source[ref.id];
    if (id == null) return source;
    const name = typeof id === 'number' ? nameOf(ref.kind, id) : null;
    if (name === null) return source;
    const { [ref.id]: _id, ...rest } = source;
    return { ...rest, [ref.name]: name };
  });
}

/**
 * The survey as the project stores it: each source's name (as a backup writes it) replaced by the id `idOf`
 * gives it. A source that already holds an id (a backup of another tool) is left as it is.
 */
export function surveyById(vars: unknown[], idOf: (kind: SourceRefKind, name: string) => number): unknown[] {
  return mapSources(vars, (source) => {
    const ref = refs[String(source.type)];
    if (!ref || !(ref.name in source)) return source;
    const { [ref.name]: name, ...rest } = source;
    return { ...rest, [ref.id]: typeof name === 'string' ? idOf(ref.kind, name) : null };
  });
}
