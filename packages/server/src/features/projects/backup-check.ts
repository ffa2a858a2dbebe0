import { type ProjectBackupInput, projectBackup } from '@signalbox/contracts';
import { badRequest } from '../../lib/errors';
import { uniqueSuffix } from './backup';

/** `templates[2].inventory` from a zod path. */
function pathText(path: readonly PropertyKey[]) {
  return path.reduce<string>(
    (text, part) =>
      typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${String(part)}` : String(part),
    '',
  );
}

/** Parses the raw backup (JSON text or an already parsed body); a bad one is a 400 naming the place. */
export function parseBackup(body: unknown): ProjectBackupInput {
  let data = body;
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    try {
      data = JSON.parse(body.toString());
    } catch {
      throw badRequest('The backup is not valid JSON');
    }
  }
  const result = projectBackup.safeParse(data);
  if (!result.success) {
    // A failed parse names at least one issue; the first is the one shown.
    const [issue] = result.error.issues;
    const where = issue ? pathText(issue.path) : '';
    const message = issue?.message ?? 'not a project backup';
    throw badRequest(where ? `Invalid backup: ${where}: ${message}` : `Invalid backup: ${message}`);
  }
  return result.data;
}

/** Renames later duplicates as the peer does; references by name then mean the first object of that name. */
function dedupe<K extends string>(items: Array<Record<K, string>>, key: K) {
  const seen = new Set<string>();
  for (const item of items) {
    let name = item[key];
    while (seen.has(name)) name = uniqueSuffix(item[key]);
    seen.add(name);
    item[key] = name;
  }
}

/** Every name reference must point at an object of the backup; the first broken one is a 400. */
function checkReferences(b: ProjectBackupInput) {
  const names = (items: { name: string }[]) => new Set(items.map((i) => i.name));
  const keys = names(b.keys);
  const repositories = names(b.repositories);
  const inventories = names(b.inventories);
  const environments = names(b.environments);
  const templates = names(b.templates);
  const views = new Set(b.views.map((v) => v.title));
  const check = (where: string, kind: string, list: string, set: Set<string>, name: string | null) => {
    if (name != null && !set.has(name))
      throw badRequest(`Invalid backup: ${where}: ${kind} "${name}" is not in ${list}`);
  };
  b.repositories.forEach((r, i) => {
    check(`repositories[${i}].ssh_key`, 'key', 'keys', keys, r.ssh_key);
  });
  b.inventories.forEach((inv, i) => {
    check(`inventories[${i}].ssh_key`, 'key', 'keys', keys, inv.ssh_key);
    check(`inventories[${i}].become_key`, 'key', 'keys', keys, inv.become_key);
    check(`inventories[${i}].repository`, 'repository', 'repositories', repositories, inv.repository);
  });
  b.templates.forEach((t, i) => {
    const at = `templates[${i}]`;
    check(`${at}.inventory`, 'inventory', 'inventories', inventories, t.inventory);
    check(`${at}.repository`, 'repository', 'repositories', repositories, t.repository);
    check(`${at}.environment`, 'environment', 'environments', environments, t.environment);
    check(`${at}.view`, 'view', 'views', views, t.view);
    check(`${at}.vault_key`, 'key', 'keys', keys, t.vault_key);
    t.vaults.forEach((v, k) => {
      check(`${at}.vaults[${k}].vault_key`, 'key', 'keys', keys, v.vault_key);
    });
    check(`${at}.build_template`, 'template', 'templates', templates, t.build_template);
    if (t.type === 'deploy' && !t.build_template)
      throw badRequest(`Invalid backup: ${at}.build_template: a deploy template needs a build template`);
  });
  b.integrations.forEach((integration, i) => {
    check(`integrations[${i}].template`, 'template', 'templates', templates, integration.template);
    check(`integrations[${i}].auth_secret`, 'key', 'keys', keys, integration.auth_secret);
  });
  b.schedules?.forEach((s, i) => {
    check(`schedules[${i}].template`, 'template', 'templates', templates, s.template);
    check(
      `schedules[${i}].checkable_repository`,
      'repository',
      'repositories',
      repositories,
      s.checkable_repository,
    );
  });
}

/**
 * Reads a backup for restoring: parses it, renames later duplicates, and checks every reference by name, so that
 * nothing is written for a backup that cannot be restored whole.
 */
export function checkBackup(body: unknown): ProjectBackupInput {
  const backup = parseBackup(body);
  dedupe(backup.keys, 'name');
  dedupe(backup.repositories, 'name');
  dedupe(backup.inventories, 'name');
  dedupe(backup.environments, 'name');
  dedupe(backup.views, 'title');
  dedupe(backup.templates, 'name');
  dedupe(backup.integrations, 'name');
  checkReferences(backup);
  return backup;
}
