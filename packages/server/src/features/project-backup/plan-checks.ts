import { createRequire } from 'node:module';
import type { z } from 'zod';
import { invalid, pathText, said } from './backup-parse';

// What every planner of a restore checks with: an object as its own API would check it, unique names, and a
// reference by name to an object of the plan.

const backupField: Record<string, string> = {
  inventory_id: 'inventory',
  repository_id: 'repository',
  environment_id: 'environment',
  vault_key_id: 'vault_key',
  view_id: 'view',
  build_template_id: 'build_template',
  ssh_key_id: 'ssh_key',
  become_key_id: 'become_key',
  template_id: 'template',
  auth_secret_id: 'auth_secret',
  check_new_commits_repository_id: 'checkable_repository',
};

/**
 * Checks `value` with an API input schema; the first refused field is a 400 at `where` (the backup's name for the
 * field). References are checked by name elsewhere: the schema sees a stand-in id for each.
 */
export function checkAs<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  const [head, ...rest] = issue?.path ?? [];
  const field = pathText([
    ...(typeof head === 'string' ? [backupField[head] ?? head] : head === undefined ? [] : [head]),
    ...rest,
  ]);
  throw invalid(field ? `${where}.${field}` : where, issue ? said(issue) : 'Invalid value');
}

/** The id the API schemas see for a reference given by name (resolved and checked separately). */
export const REF = 1;
export const refId = (name: string | null) => (name == null ? null : REF);

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

export const environmentSecretOwners = new Set(['environment', 'variable']);

// Loaded on first use: an idle server holds no YAML parser (and the check stays synchronous).
const requireModule = createRequire(import.meta.url);
export function isYaml(text: string) {
  const { parseAllDocuments } = requireModule('yaml') as typeof import('yaml');
  try {
    const docs = parseAllDocuments(text);
    const list = Array.isArray(docs) ? docs : [docs];
    return !list.some((doc) => doc.errors.length > 0);
  } catch {
    return false;
  }
}

/** An alias is the last segment of /api/integrations/{alias}: URL-safe characters only. */
export const ALIAS = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Checks, object by object, that no later object of a kind reuses a name: references by name would not know which
 * one they mean. Called as each object is checked, so the error names the first bad object.
 */
export function uniqueNames(kind: string, field = 'name') {
  const seen = new Map<string, number>();
  return (index: number, name: string) => {
    const first = seen.get(name);
    if (first !== undefined)
      throw invalid(
        `${kind}[${index}].${field}`,
        `${JSON.stringify(name)} is already the name of ${kind}[${first}]`,
      );
    seen.set(name, index);
  };
}

/** A name that must be one of `names`; `what` and `list` word the error. */
export function assertRef(
  where: string,
  what: string,
  list: string,
  names: Set<string>,
  name: string | null,
) {
  if (name != null && !names.has(name))
    throw invalid(where, `${what} ${JSON.stringify(name)} is not in ${list}`);
}
