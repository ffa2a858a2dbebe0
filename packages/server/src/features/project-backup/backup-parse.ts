import {
  coded,
  codeOfIssue,
  errorMessage,
  type ProjectBackupInput,
  projectBackup,
} from '@signalbox/contracts';
import type { z } from 'zod';
import { badRequest } from '../../lib/errors';

// Reading a backup: its JSON parsed against the contracts' backup schema, and the first bad object named by its
// place (`templates[2].inventory`).

/**
 * Reading a backup for restoring. The backup is parsed leniently (the peer's backups differ between versions: nulls
 * for empty values, extra fields, fields missing), then every object is checked with the rules its own API applies
 * (an object a user could not save through the API is not restored either), every reference by name is resolved,
 * and what Signalbox cannot hold is refused rather than dropped. The result is a plan that can be written without
 * another check; a bad backup is a 400 naming the first bad object, before anything is written.
 */

/** The kinds of a backup in the order they are checked and restored: the first bad object is the first found. */
const kindOrder = [
  'meta',
  'secret_storages',
  'roles',
  'runners',
  'host_configs',
  'workflows',
  'keys',
  'repositories',
  'inventories',
  'environments',
  'views',
  'option_lists',
  'templates',
  'schedules',
  'integrations',
  'integration_aliases',
] as const;

/**
 * Lists of newer peer versions (and its Pro edition) that Signalbox has no place for: a backup holding any is
 * refused, naming them, rather than restored without them.
 */
export const unsupportedKinds = {
  secret_storages: 'secret storages',
  roles: 'custom roles',
  runners: 'project runners',
  host_configs: 'ssh host configs',
};

/** `templates[2].inventory` from a zod path. */
export function pathText(path: readonly PropertyKey[]) {
  return path.reduce<string>(
    (text, part) =>
      typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${String(part)}` : String(part),
    '',
  );
}

export const invalid = (where: string, message: string) =>
  // The problem is worded from its own code (a schema's or the check's), in English, after where it is.
  badRequest(coded('backup_invalid', { detail: where ? `${where}: ${message}` : message }));

/** The English wording of a schema's issue, as a detail of the backup's refusal. */
export const said = (issue: z.core.$ZodIssue) => errorMessage(codeOfIssue(issue));

/** The zod issue that comes first in restore order (kind, then index), so the error names the first bad object. */
function firstIssue(issues: readonly z.core.$ZodIssue[]) {
  const rank = (issue: z.core.$ZodIssue) => {
    const [kind, index] = issue.path;
    const k = kindOrder.indexOf(kind as (typeof kindOrder)[number]);
    return [k === -1 ? kindOrder.length : k, typeof index === 'number' ? index : -1] as const;
  };
  let best = issues[0];
  for (const issue of issues.slice(1)) {
    if (!best) break;
    const [a, b] = [rank(issue), rank(best)];
    if (a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])) best = issue;
  }
  return best;
}

/** Parses the raw backup (JSON text or an already parsed body); a bad one is a 400 naming the place. */
export function parseBackup(body: unknown): ProjectBackupInput {
  let data = body;
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    try {
      data = JSON.parse(body.toString());
    } catch {
      throw badRequest(coded('backup_not_json'));
    }
  }
  const result = projectBackup.safeParse(data, { reportInput: true });
  if (!result.success) {
    const issue = firstIssue(result.error.issues);
    if (!issue || issue.path.length === 0) throw badRequest(coded('backup_not_object'));
    throw invalid(pathText(issue.path), said(issue));
  }
  return result.data;
}

/** The backup's own field for an id field of the API input the object is checked with. */
