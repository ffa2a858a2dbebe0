import { createRequire } from 'node:module';
import {
  coded,
  codeOfIssue,
  environmentInput,
  errorMessage,
  integrationExtractValueInput,
  integrationInput,
  integrationMatcherInput,
  inventoryInput,
  inventoryTypesForApp,
  isWorkspaceInventory,
  type KeyType,
  keyCreateInput,
  type ProjectBackupInput,
  projectBackup,
  repositoryInput,
  scheduleInput,
  templateInput,
  viewInput,
} from '@signalbox/contracts';
import type { z } from 'zod';
import { badRequest } from '../../lib/errors';
import { defaultParamsText } from '../../tasks/run/default-params';
import { cronError } from '../schedules';

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
  'templates',
  'schedules',
  'integrations',
  'integration_aliases',
] as const;

/**
 * Lists of newer peer versions (and its Pro edition) that Signalbox has no place for: a backup holding any is
 * refused, naming them, rather than restored without them.
 */
const unsupportedKinds = {
  secret_storages: 'secret storages',
  roles: 'custom roles',
  runners: 'project runners',
  host_configs: 'ssh host configs',
  workflows: 'workflows',
};

/** `templates[2].inventory` from a zod path. */
function pathText(path: readonly PropertyKey[]) {
  return path.reduce<string>(
    (text, part) =>
      typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${String(part)}` : String(part),
    '',
  );
}

const invalid = (where: string, message: string) =>
  // The problem is worded from its own code (a schema's or the check's), in English, after where it is.
  badRequest(coded('backup_invalid', { detail: where ? `${where}: ${message}` : message }));

/** The English wording of a schema's issue, as a detail of the backup's refusal. */
const said = (issue: z.core.$ZodIssue) => errorMessage(codeOfIssue(issue));

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
function checkAs<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
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
const REF = 1;
const refId = (name: string | null) => (name == null ? null : REF);

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const environmentSecretOwners = new Set(['environment', 'variable']);

// Loaded on first use: an idle server holds no YAML parser (and the check stays synchronous).
const requireModule = createRequire(import.meta.url);
function isYaml(text: string) {
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
const ALIAS = /^[A-Za-z0-9_-]{1,64}$/;

export type PlannedKey = {
  name: string;
  type: KeyType;
  /** The secret's JSON text as the key store keeps it (empty fields when the backup has none); null for `none`. */
  secret: string | null;
};
export type PlannedTemplate = Omit<
  z.output<typeof templateInput>,
  | 'inventory_id'
  | 'repository_id'
  | 'environment_id'
  | 'vault_key_id'
  | 'vault_name'
  | 'vault_script'
  | 'view_id'
  | 'build_template_id'
  | 'survey_vars'
  | 'task_params'
  | 'check_new_commits'
  | 'cron_format'
  | 'check_new_commits_repository_id'
  | 'id'
  | 'project_id'
> & {
  inventory: string | null;
  repository: string | null;
  environment: string;
  vault_key: string | null;
  /** The vault's name and, for a script vault, its script (as the template API stores them). */
  vault_name: string | null;
  vault_script: string | null;
  view: string | null;
  build_template: string | null;
  /** Survey variables and task params as the backup wrote them (checked; the API reads them with defaults). */
  survey_vars: string;
  task_params: string;
};
type MatcherValues = Omit<z.output<typeof integrationMatcherInput>, 'integration_id' | 'id'>;
type ExtractValueValues = Omit<z.output<typeof integrationExtractValueInput>, 'integration_id' | 'id'>;

/** A checked backup, every reference a name of an object of the plan (or the project's own None key / Empty). */
export type RestorePlan = {
  meta: ProjectBackupInput['meta'];
  keys: PlannedKey[];
  repositories: Array<{ name: string; git_url: string; git_branch: string; ssh_key: string }>;
  inventories: Array<{
    name: string;
    type: string;
    inventory: string;
    /** Null for a workspace inventory: it runs with the project's None key, as one saved through the API. */
    ssh_key: string | null;
    become_key: string | null;
    repository: string | null;
    runner_tag: string | null;
  }>;
  environments: Array<{
    name: string;
    json: string;
    env: string;
    secrets: Array<{ type: 'var' | 'env'; name: string; secret: string }>;
  }>;
  views: Array<{ title: string; position: number }>;
  templates: PlannedTemplate[];
  schedules: Array<{
    name: string;
    template: string;
    type: '' | 'run_at';
    cron_format: string;
    run_at: string | null;
    delete_after_run: boolean;
    active: boolean;
    repository: string | null;
    /** The stored text of its default task parameters, without the inventory (by name in `inventory`). */
    task_params: string;
    inventory: string | null;
  }>;
  integrations: Array<{
    name: string;
    template: string;
    auth_method: string;
    auth_header: string;
    auth_secret: string | null;
    searchable: boolean;
    /** The stored default task parameters, the inventory (by name) taken out. */
    task_params: Record<string, unknown>;
    inventory: string | null;
    aliases: string[];
    matchers: MatcherValues[];
    extract_values: ExtractValueValues[];
  }>;
  integration_aliases: string[];
};

/**
 * Checks, object by object, that no later object of a kind reuses a name: references by name would not know which
 * one they mean. Called as each object is checked, so the error names the first bad object.
 */
function uniqueNames(kind: string, field = 'name') {
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
function assertRef(where: string, what: string, list: string, names: Set<string>, name: string | null) {
  if (name != null && !names.has(name))
    throw invalid(where, `${what} ${JSON.stringify(name)} is not in ${list}`);
}

function planKeys(b: ProjectBackupInput): PlannedKey[] {
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

/**
 * Checks the whole backup and turns it into a restore plan. Nothing is written for a backup that fails here.
 */
/**
 * A template's vault in a backup: the deprecated `vault_key`, or the one entry of the `vaults` list of newer
 * versions with its name (a password vault by its key, a script vault by its script). A password vault without a
 * key is no vault; two different vaults are refused, since a template keeps one.
 */
function planVault(
  t: ProjectBackupInput['templates'][number],
  at: string,
  keyNames: Set<string>,
): { name: string | null; key: string | null; script: string } | null {
  const found: { name: string | null; key: string | null; script: string }[] = [];
  if (t.vault_key) {
    assertRef(`${at}.vault_key`, 'key', 'keys', keyNames, t.vault_key);
    found.push({ name: null, key: t.vault_key, script: '' });
  }
  t.vaults.forEach((v, k) => {
    const where = `${at}.vaults[${k}]`;
    const name = v.name ?? null;
    if (v.type === 'script') {
      const script = v.script ?? '';
      if (!script) throw invalid(`${where}.script`, 'Vault script is required');
      found.push({ name, key: null, script });
      return;
    }
    if (!v.vault_key) return;
    assertRef(`${where}.vault_key`, 'key', 'keys', keyNames, v.vault_key);
    // The deprecated field beside the list names the same vault: the list's entry (with its name) is the one.
    const same = found.findIndex((f) => f.key === v.vault_key && f.name === null);
    if (same >= 0) found.splice(same, 1);
    found.push({ name, key: v.vault_key, script: '' });
  });
  if (found.length > 1) throw invalid(`${at}.vaults`, 'a template holds one vault here, not several');
  return found[0] ?? null;
}

export function planRestore(b: ProjectBackupInput): RestorePlan {
  for (const [kind, what] of Object.entries(unsupportedKinds)) {
    const list = (b as Record<string, unknown>)[kind];
    if (Array.isArray(list) && list.length > 0)
      throw invalid(kind, `${what} cannot be restored here; remove them from the backup`);
  }

  const keys = planKeys(b);
  const keyNames = new Set(['None', ...keys.map((k) => k.name)]);
  const keyType = (name: string) => keys.find((k) => k.name === name)?.type ?? 'none';

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
  const repositoryNames = new Set(repositories.map((r) => r.name));

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
  const inventoryType = new Map(inventories.map((inv) => [inv.name, inv.type]));

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
  const environmentNames = new Set(['Empty', ...environments.map((e) => e.name)]);

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
  const viewNames = new Set(views.map((v) => v.title));

  const templateNames = new Set(b.templates.map((t) => t.name));
  const templateType = new Map(b.templates.map((t) => [t.name, t.type]));
  const uniqueTemplate = uniqueNames('templates');
  const templates = b.templates.map((t, i): PlannedTemplate => {
    const at = `templates[${i}]`;
    uniqueTemplate(i, t.name);
    if (Array.isArray(t.roles) && t.roles.length > 0)
      throw invalid(`${at}.roles`, 'template roles cannot be restored here; remove them from the backup');
    const environment = t.environment ?? 'Empty';
    const view = t.view != null && allTabs.has(t.view) ? null : t.view;
    assertRef(`${at}.inventory`, 'inventory', 'inventories', new Set(inventoryType.keys()), t.inventory);
    assertRef(`${at}.repository`, 'repository', 'repositories', repositoryNames, t.repository);
    assertRef(`${at}.environment`, 'environment', 'environments', environmentNames, environment);
    assertRef(`${at}.view`, 'view', 'views', viewNames, view);
    assertRef(`${at}.build_template`, 'template', 'templates', templateNames, t.build_template);

    const vault = planVault(t, at, keyNames);

    const input = checkAs(
      templateInput,
      {
        name: t.name,
        description: t.description,
        type: t.type,
        app: t.app,
        playbook: t.playbook,
        inventory_id: refId(t.inventory),
        repository_id: refId(t.repository),
        environment_id: REF,
        view_id: refId(view),
        build_template_id: refId(t.build_template),
        start_version: t.start_version,
        autorun: t.autorun,
        suppress_success_alerts: t.suppress_success_alerts,
        arguments: t.arguments,
        allow_override_args_in_task: t.allow_override_args_in_task,
        allow_override_branch_in_task: t.allow_override_branch_in_task,
        allow_parallel_tasks: t.allow_parallel_tasks,
        git_branch: t.git_branch,
        survey_vars: t.survey_vars,
        task_params: t.task_params,
        runner_tag: t.runner_tag,
        // The vault's name and script are checked as the template API checks them.
        vaults: vault
          ? [
              vault.script
                ? { name: vault.name, type: 'script', script: vault.script }
                : { name: vault.name, type: 'password', vault_key_id: REF },
            ]
          : [],
      },
      at,
    );
    if (t.inventory) {
      const allowed = inventoryTypesForApp[input.app];
      const type = inventoryType.get(t.inventory) ?? '';
      if (allowed && !allowed.includes(type))
        throw invalid(
          `${at}.inventory`,
          `the ${input.app} app needs an inventory of type ${allowed.join(', ')}; ${JSON.stringify(t.inventory)} is ${type}`,
        );
    }
    if (input.type === 'deploy' && t.build_template) {
      if (t.build_template === t.name || templateType.get(t.build_template) !== 'build')
        throw invalid(`${at}.build_template`, `${JSON.stringify(t.build_template)} is not a build template`);
    }
    if (t.cron && !b.schedules) {
      const error = cronError(t.cron, 'cron');
      if (error) throw invalid(`${at}.cron`, errorMessage(error));
    }
    return {
      name: input.name,
      description: input.description,
      type: input.type,
      app: input.app,
      playbook: input.playbook,
      inventory: t.inventory,
      repository: t.repository,
      environment,
      vault_key: vault?.key ?? null,
      vault_name: input.vault_name,
      vault_script: input.vault_script,
      view,
      // As the template API stores them: only a deploy follows a build, only a build has a start version.
      build_template: input.type === 'deploy' ? t.build_template : null,
      start_version: input.type === 'build' ? input.start_version : null,
      autorun: input.type === 'deploy' && input.autorun,
      suppress_success_alerts: input.suppress_success_alerts,
      arguments: input.arguments,
      allow_override_args_in_task: input.allow_override_args_in_task,
      allow_override_branch_in_task: input.allow_override_branch_in_task,
      allow_parallel_tasks: input.allow_parallel_tasks,
      git_branch: input.git_branch,
      survey_vars: JSON.stringify(t.survey_vars),
      task_params: JSON.stringify(t.task_params),
      runner_tag: input.runner_tag,
    };
  });

  const inventoryNames = new Set(inventoryType.keys());
  // Old backups have no schedules list: each template's cron was its schedule.
  const scheduleList =
    b.schedules ??
    b.templates.flatMap((t) =>
      t.cron
        ? [{ name: '', template: t.name, cron_format: t.cron, active: true, checkable_repository: null }]
        : [],
    );
  const schedules = scheduleList.map((s, i) => {
    const at = `schedules[${i}]`;
    const raw = s as Record<string, unknown>;
    const {
      inventory_name,
      inventory_id: _stale,
      ...params
    } = isRecord(raw.task_params) ? raw.task_params : {};
    const inventory = typeof inventory_name === 'string' && inventory_name ? inventory_name : null;
    assertRef(`${at}.task_params.inventory_name`, 'inventory', 'inventories', inventoryNames, inventory);
    assertRef(`${at}.template`, 'template', 'templates', templateNames, s.template);
    assertRef(
      `${at}.checkable_repository`,
      'repository',
      'repositories',
      repositoryNames,
      s.checkable_repository,
    );
    const once = raw.type === 'run_at';
    const input = checkAs(
      scheduleInput,
      {
        template_id: REF,
        type: once ? 'run_at' : '',
        cron_format: s.cron_format,
        run_at: once ? raw.run_at : null,
        delete_after_run: once ? raw.delete_after_run : false,
        repository_id: refId(s.checkable_repository),
        name: s.name,
        active: s.active,
        task_params: { ...params, inventory_id: refId(inventory) },
      },
      at,
    );
    if (!once) {
      const error = cronError(input.cron_format);
      if (error) throw invalid(`${at}.cron_format`, errorMessage(error));
    }
    const runAt = once ? input.run_at : null;
    return {
      name: input.name,
      template: s.template,
      type: input.type,
      cron_format: once ? '' : input.cron_format,
      run_at: runAt,
      delete_after_run: once && input.delete_after_run,
      // A run-once schedule whose time has passed comes back disabled, so a restore never runs it.
      active: input.active && (!runAt || Date.parse(runAt) > Date.now()),
      repository: once ? null : s.checkable_repository,
      task_params: defaultParamsText(input.task_params && { ...input.task_params, inventory_id: null }),
      inventory,
    };
  });

  const integrations = b.integrations.map((integration, i) => {
    const at = `integrations[${i}]`;
    assertRef(`${at}.template`, 'template', 'templates', templateNames, integration.template);
    assertRef(`${at}.auth_secret`, 'key', 'keys', keyNames, integration.auth_secret);
    const { inventory_name, inventory_id: _stale, ...params } = integration.task_params;
    const inventory = typeof inventory_name === 'string' && inventory_name ? inventory_name : null;
    assertRef(`${at}.task_params.inventory_name`, 'inventory', 'inventories', inventoryNames, inventory);
    const input = checkAs(
      integrationInput,
      {
        name: integration.name,
        template_id: REF,
        auth_method: integration.auth_method,
        auth_secret_id: refId(integration.auth_secret),
        auth_header: integration.auth_header,
        searchable: integration.searchable,
        task_params: { ...params, inventory_id: refId(inventory) },
      },
      at,
    );
    if (
      input.auth_secret_id &&
      integration.auth_secret &&
      keyType(integration.auth_secret) !== 'login_password'
    )
      throw invalid(`${at}.auth_secret`, 'Auth secret must be a login_password key');
    // A rule reading the whole body as text has no key; the peer keeps it empty, the API asks for one.
    const wholeBody = (source: string, type: string, key: string) =>
      source === 'body' && type === 'string' && key.trim() === '';
    const matchers = integration.matchers.map((m, k) => {
      const keyless = wholeBody(m.match_type, m.body_data_type, m.key);
      const checked = checkAs(
        integrationMatcherInput,
        keyless ? { ...m, key: 'body' } : m,
        `${at}.matchers[${k}]`,
      );
      const { integration_id: _i, id: _id, ...values } = checked;
      return keyless ? { ...values, key: '' } : values;
    });
    const extract_values = integration.extract_values.map((v, k) => {
      const keyless = wholeBody(v.value_source, v.body_data_type, v.key);
      const checked = checkAs(
        integrationExtractValueInput,
        keyless ? { ...v, key: 'body' } : v,
        `${at}.extract_values[${k}]`,
      );
      const { integration_id: _i, id: _id, ...values } = checked;
      return keyless ? { ...values, key: '' } : values;
    });
    integration.aliases.forEach((alias, k) => {
      if (!ALIAS.test(alias))
        throw invalid(`${at}.aliases[${k}]`, 'Alias may contain only letters, digits, "_" and "-"');
    });
    return {
      name: input.name,
      template: integration.template,
      auth_method: input.auth_method,
      auth_header: input.auth_header,
      auth_secret: input.auth_secret_id ? integration.auth_secret : null,
      searchable: input.searchable,
      task_params: params,
      inventory,
      aliases: integration.aliases,
      matchers,
      extract_values,
    };
  });
  b.integration_aliases.forEach((alias, k) => {
    if (!ALIAS.test(alias))
      throw invalid(`integration_aliases[${k}]`, 'Alias may contain only letters, digits, "_" and "-"');
  });

  return {
    meta: b.meta,
    keys,
    repositories,
    inventories,
    environments,
    views,
    templates,
    schedules,
    integrations,
    integration_aliases: b.integration_aliases,
  };
}

/** Plans made by checkBackup: restoring one again needs no second check. */
const checkedPlans = new WeakSet<RestorePlan>();
export const isCheckedPlan = (value: unknown): value is RestorePlan =>
  isRecord(value) && checkedPlans.has(value as RestorePlan);

/**
 * Reads a backup for restoring: parses it, checks every object as its API would and every reference by name, so
 * that nothing is written for a backup that cannot be restored whole.
 */
export function checkBackup(body: unknown): RestorePlan {
  if (isCheckedPlan(body)) return body;
  const plan = planRestore(parseBackup(body));
  checkedPlans.add(plan);
  return plan;
}
