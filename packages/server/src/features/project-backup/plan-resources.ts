import {
  environmentInput,
  inventoryInput,
  isWorkspaceInventory,
  keyCreateInput,
  optionListInput,
  type ProjectBackupInput,
  repositoryInput,
  viewInput,
} from '@signalbox/contracts';
import { invalid } from './backup-parse';
import {
  assertRef,
  checkAs,
  environmentSecretOwners,
  isRecord,
  isYaml,
  REF,
  refId,
  uniqueNames,
} from './plan-checks';
import type { PlannedKey, RestorePlan } from './restore-plan';

// Planning a restore's keys, repositories, inventories, environments and views.

export function planKeys(b: ProjectBackupInput): PlannedKey[] {
  const keys: PlannedKey[] = [];
  const unique = uniqueNames('keys');
  b.keys.forEach((k, i) => {
    // The peer lists environment secrets among its keys in some versions: they have no secret and no link to
    // their environment in a backup, so there is nothing to restore (an environment's own `secrets` carry them).
    if (environmentSecretOwners.has(k.owner)) return;
    const at = `keys[${i}]`;
    unique(i, k.name);
    const given = { ssh: k.ssh ?? null, login_password: k.login_password ?? null };
    let secret: string | null = null;
    if (given.ssh !== null || given.login_password !== null) {
      // A hand-completed backup may carry secrets in the fields the key API takes; each key only its own kind.
      const own = k.type === 'none' ? null : k.type;
      for (const field of ['ssh', 'login_password'] as const)
        if (given[field] !== null && field !== own)
          throw invalid(`${at}.${field}`, `a key of type ${k.type} has no ${field} secret`);
      const input = checkAs(keyCreateInput, { name: k.name, type: k.type, ...given }, at);
      if (input.type === 'ssh' && input.ssh)
        secret = JSON.stringify({
          login: input.ssh.login,
          passphrase: input.ssh.passphrase,
          private_key: input.ssh.private_key,
        });
      if (input.type === 'login_password' && input.login_password)
        secret = JSON.stringify({
          login: input.login_password.login,
          password: input.login_password.password,
        });
    } else if (k.type === 'ssh') {
      // Secrets are never in a backup either side writes: the key comes back empty, to be filled in again.
      secret = JSON.stringify({ login: '', passphrase: '', private_key: '' });
    } else if (k.type === 'login_password') {
      secret = JSON.stringify({ login: '', password: '' });
    }
    keys.push({ name: k.name, type: k.type, secret });
  });
  return keys;
}

/** Checks the backup's repositories; each names its key by name. */
export function planRepositories(b: ProjectBackupInput, keyNames: Set<string>): RestorePlan['repositories'] {
  const uniqueRepository = uniqueNames('repositories');
  const repositories = b.repositories.map((r, i) => {
    const at = `repositories[${i}]`;
    uniqueRepository(i, r.name);
    const ssh_key = r.ssh_key ?? 'None';
    assertRef(`${at}.ssh_key`, 'key', 'keys', keyNames, ssh_key);
    const input = checkAs(
      repositoryInput,
      { name: r.name, git_url: r.git_url, git_branch: r.git_branch, ssh_key_id: REF },
      at,
    );
    return { name: input.name, git_url: input.git_url, git_branch: input.git_branch, ssh_key };
  });
  return repositories;
}

/** Checks the backup's inventories; each names its keys and repository by name. */
export function planInventories(
  b: ProjectBackupInput,
  keyNames: Set<string>,
  repositoryNames: Set<string>,
): RestorePlan['inventories'] {
  const uniqueInventory = uniqueNames('inventories');
  const inventories = b.inventories.map((inv, i) => {
    const at = `inventories[${i}]`;
    uniqueInventory(i, inv.name);
    const workspace = isWorkspaceInventory(inv.type);
    const ssh_key = workspace ? null : (inv.ssh_key ?? 'None');
    assertRef(`${at}.ssh_key`, 'key', 'keys', keyNames, ssh_key);
    assertRef(`${at}.become_key`, 'key', 'keys', keyNames, inv.become_key);
    assertRef(`${at}.repository`, 'repository', 'repositories', repositoryNames, inv.repository);
    // The peer keeps file inventories without a path (its own backup example has them): the checkout itself is
    // the inventory then. Checked as the API would with a path, restored without one.
    const noPath = inv.type === 'file' && inv.inventory.trim() === '';
    const input = checkAs(
      inventoryInput,
      {
        name: inv.name,
        type: inv.type,
        inventory: noPath ? '.' : inv.inventory,
        ssh_key_id: refId(ssh_key),
        become_key_id: refId(inv.become_key),
        repository_id: refId(inv.repository),
        runner_tag: inv.runner_tag,
      },
      at,
    );
    if (input.type === 'static-yaml' && !isYaml(input.inventory))
      throw invalid(`${at}.inventory`, 'Inventory must be valid YAML');
    return {
      name: input.name,
      type: input.type,
      inventory: noPath ? '' : input.inventory,
      ssh_key,
      become_key: inv.become_key,
      repository: inv.repository,
      runner_tag: input.runner_tag,
    };
  });
  return inventories;
}

/** Checks the backup's environments, with the secrets a hand-completed backup may list. */
export function planEnvironments(b: ProjectBackupInput): RestorePlan['environments'] {
  const uniqueEnvironment = uniqueNames('environments');
  const environments = b.environments.map((e, i) => {
    const at = `environments[${i}]`;
    uniqueEnvironment(i, e.name);
    // Secrets are not in a backup the peer writes; a hand-completed one may list them as the environment API does.
    const secrets = Array.isArray(e.secrets)
      ? e.secrets.map((s) => (isRecord(s) ? { ...s, id: null, operation: 'create' } : s))
      : e.secrets;
    const input = checkAs(environmentInput, { name: e.name, json: e.json, env: e.env, secrets }, at);
    return {
      name: input.name,
      json: input.json,
      env: input.env,
      secrets: input.secrets.map((s) => ({ type: s.type, name: s.name, secret: s.secret })),
    };
  });
  return environments;
}

/** Checks the backup's views, and names the peer's built-in All tab rows (not restored). */
export function planViews(b: ProjectBackupInput): { views: RestorePlan['views']; allTabs: Set<string> } {
  // The peer's built-in "All" tab is a view row of type `all` (and its settings a hidden row): every project here
  // shows all templates by itself, so those rows are not restored, and a reference to them means no view.
  const isAllTab = (v: Record<string, unknown>) => v.type === 'all' || v.title === '__all_tab_settings__';
  const allTabs = new Set(b.views.filter(isAllTab).map((v) => v.title));
  const viewRows = b.views.map((v, i) => [i, v] as const).filter(([, v]) => !isAllTab(v));
  const uniqueView = uniqueNames('views', 'title');
  const views = viewRows.map(([i, v]) => {
    uniqueView(i, v.title);
    const input = checkAs(viewInput, { title: v.title, position: v.position }, `views[${i}]`);
    return { title: input.title, position: input.position ?? 0 };
  });
  return { views, allTabs };
}

/** Checks the backup's option lists as the option list API would (absent in Semaphore's backups). */
export function planOptionLists(b: ProjectBackupInput): RestorePlan['option_lists'] {
  const unique = uniqueNames('option_lists');
  return b.option_lists.map((l, i) => {
    unique(i, l.name);
    const input = checkAs(optionListInput, { name: l.name, options: l.options }, `option_lists[${i}]`);
    return { name: input.name, options: input.options.map((o) => ({ name: o.name, value: o.value })) };
  });
}
