import type { CheckRules } from './swagger-spec';

/**
 * What the Swagger conformance test holds each answer to, beyond the document itself: the fields Signalbox
 * documents per entity, the fields that may be null, write-only fields, fields stored in a normal form, and the
 * operations it does not send. Each exception says why.
 */

/** Operations the test does not send, each with the reason (and where else they are tested). */
export const NOT_EXERCISED: Record<string, string> = {
  'GET /ws': 'a WebSocket upgrade, not a request and answer (features/live/live.test.ts drives the socket)',
  'GET /auth/oidc/{provider_id}/login':
    'an OIDC redirect to an identity provider (features/auth/oidc.test.ts runs the flow against a local one)',
  'GET /auth/oidc/{provider_id}/redirect':
    'an OIDC redirect from an identity provider (features/auth/oidc.test.ts runs the flow against a local one)',
  'POST /debug/gc': "a debug hook of the peer's Go runtime (garbage collection); nothing like it in Node",
};

/**
 * Operations whose route is being built in another branch: their steps are skipped so this test stays green
 * meanwhile. The allowlist test fails once the route exists, so the entry is removed at merge (and the step runs).
 */
export const PENDING_ELSEWHERE: Record<string, string> = {};

/**
 * Mismatches in folders other people own at the moment (none now): each entry is `<op> <json path>: <problem>`.
 * The test fails when one disappears, so fixed ones get removed here too.
 */
export const KNOWN_ELSEWHERE: Record<string, string> = {};

/** Folders other people own at the moment: only their mismatches may be listed in KNOWN_ELSEWHERE. */
export const ELSEWHERE = new Set<string>();

/** The folder (of the server's features) an operation belongs to, to say who fixes a mismatch. */
export function owner(path: string) {
  const m = /^\/project\/\{project_id\}\/(\w+)/.exec(path);
  if (m) {
    const part = m[1]!;
    if (part === 'environment') return 'environments';
    if (part === 'users' || part === 'invites') return 'team';
    if (part === 'backup' || part === 'role') return 'projects';
    if (part === 'notifications') return 'alerts';
    return part;
  }
  if (path.startsWith('/project/') || path.startsWith('/projects')) return 'projects';
  if (path.startsWith('/users')) return 'users';
  if (path.startsWith('/events')) return 'events';
  if (path.startsWith('/user/tokens')) return 'tokens';
  return 'auth';
}

/**
 * The fields we document per entity (Swagger definition name, or `Definition.field` for a nested one): each must be
 * present. Fields the peer answers beyond its document are listed too (a task's `limit`, an output row's `task`, a
 * template's `tasks`).
 */
const DOCUMENTED_FIELDS: Record<string, string[]> = {
  User: ['id', 'name', 'username', 'email', 'admin', 'alert', 'external', 'can_create_project'],
  Project: ['id', 'name', 'alert', 'alert_chat', 'max_parallel_tasks', 'type'],
  ProjectUser: ['id', 'name', 'username', 'role', 'user_id'],
  // user_id and user are absent for an invite of an address without an account, accepted_at until it is
  // accepted, as the peer leaves them out.
  ProjectInvite: [
    'id',
    'project_id',
    'email',
    'role',
    'status',
    'inviter_user_id',
    'created',
    'expires_at',
    'inviter_user',
  ],
  // A project member who is no administrator never sees another user's flags: the invite names its users only.
  'ProjectInvite.user': ['id', 'name', 'username', 'email'],
  'ProjectInvite.inviter_user': ['id', 'name', 'username', 'email'],
  APIToken: ['id', 'created', 'expired', 'user_id'],
  Task: [
    'id',
    'template_id',
    'project_id',
    'status',
    'message',
    'user_id',
    'integration_id',
    'start',
    'end',
    'version',
    'build_task_id',
    'tpl_type',
    'tpl_alias',
    'user_name',
    'commit_hash',
    'commit_message',
    'environment',
    'arguments',
    'debug',
    'dry_run',
    'diff',
    'limit',
    'secret',
  ],
  TaskOutput: ['task_id', 'task', 'time', 'output'],
  Template: [
    'id',
    'project_id',
    'name',
    'description',
    'type',
    'app',
    'playbook',
    'inventory_id',
    'repository_id',
    'environment_id',
    'vault_key_id',
    'vaults',
    'view_id',
    'build_template_id',
    'start_version',
    'autorun',
    'suppress_success_alerts',
    'arguments',
    'allow_override_args_in_task',
    'survey_vars',
    'last_task',
    'last_task_id',
    'tasks',
  ],
  TemplateVault: ['name', 'type', 'vault_key_id', 'script'],
  TemplateSurveyVar: ['name', 'title', 'description', 'type', 'required', 'values'],
  Schedule: ['id', 'project_id', 'template_id', 'cron_format', 'repository_id', 'tpl_name'],
  View: ['id', 'project_id', 'title', 'position'],
  Environment: ['id', 'name', 'project_id', 'json', 'env'],
  Inventory: [
    'id',
    'name',
    'project_id',
    'type',
    'inventory',
    'ssh_key_id',
    'become_key_id',
    'repository_id',
  ],
  AccessKey: ['id', 'name', 'type', 'project_id'],
  Repository: ['id', 'name', 'project_id', 'git_url', 'git_branch', 'ssh_key_id'],
  Integration: ['id', 'name', 'template_id', 'auth_method', 'auth_header', 'auth_secret_id', 'searchable'],
  IntegrationMatcher: ['name', 'match_type', 'body_data_type', 'key', 'method', 'value', 'integration_id'],
  IntegrationExtractValue: ['name', 'value_source', 'body_data_type', 'key', 'variable', 'integration_id'],
  Event: ['created', 'username', 'description'],
  InfoType: ['version'],
  LoginMetadata: ['oidc_providers', 'login_with_password'],
};

/**
 * Fields that may be null: optional in our API, or a pointer (`*int`, `*string`, `*time.Time`) in
 * Semaphore's own Go model, which it sends as null too.
 */
const NULLABLE = new Set([
  'Project.alert_chat', // optional
  'Project.max_parallel_tasks', // optional
  'Inventory.ssh_key_id', // *int in Semaphore (workspace inventories)
  'Inventory.become_key_id', // optional
  'Inventory.repository_id', // *int
  'Template.arguments', // *string
  'Template.git_branch', // *string (no branch override)
  'Template.inventory_id', // *int (terraform without inventory)
  'Template.environment_id', // *int
  'Template.view_id', // *int
  'Template.vault_key_id', // *int
  'Template.build_template_id', // *int (only deploy templates)
  'Template.start_version', // *string (only build templates)
  'Template.last_task', // *TaskWithTpl: no task yet
  'Template.last_task_id', // *int
  'TemplateVault.vault_key_id', // *int: a script vault has no key
  'Schedule.repository_id', // *int
  'Integration.auth_secret_id', // *int
  'Task.user_id', // *int (tasks started by schedules or integrations)
  'Task.integration_id', // *int
  'Task.build_task_id', // *int
  'Task.version', // *string
  'Task.start', // *time.Time
  'Task.end', // *time.Time
  'Task.commit_hash', // *string
  'Task.commit_message', // string, null until the repository is checked out
  'Task.inventory_id', // *int
  'Task.arguments', // *string
  'Task.git_branch', // *string
  'Task.environment', // JSON text, optional
  'Event.project_id', // *int (global events)
  'Event.user_id', // *int
  'Event.object_id', // *int
  'ProjectInvite.expires_at', // *time.Time: an invite may never expire
  'ProjectInvite.inviter_user_id', // the inviter's account was deleted since
  'ProjectInvite.inviter_user', // the same
  // The backup's *string fields: null in the peer's own ProjectBackup example (type, vault_key, build_template)
  // and in its Go model (alert_chat, arguments, start_version, become_key, and a template's inventory,
  // environment, view and cron, a repository's or inventory's ssh_key).
  'ProjectBackup.inventory',
  'ProjectBackup.environment',
  'ProjectBackup.view',
  'ProjectBackup.cron',
  'ProjectBackup.ssh_key',
  'ProjectBackup.alert_chat',
  'ProjectBackup.type',
  'ProjectBackup.arguments',
  'ProjectBackup.build_template',
  'ProjectBackup.start_version',
  'ProjectBackup.vault_key',
  'ProjectBackup.become_key',
]);

/**
 * Types the peer's behaviour sets apart from its Swagger file: the ProjectBackup definition calls a template's
 * survey_vars a string, but the peer's own example of that definition (and its backups) carry the array.
 */
const TYPES: Record<string, string> = { 'ProjectBackup.survey_vars': 'array' };

/**
 * Secrets and request-only flags that a response must not carry a value of (DESIGN: the API never returns a
 * secret). A task's `secret` is answered, as the peer's, and always empty.
 */
export const WRITE_ONLY = new Set([
  'User.password',
  'Environment.password',
  'Task.secret',
  'AccessKey.login_password',
  'AccessKey.ssh',
  'AccessKey.override_secret',
]);

/**
 * Fields a write stores in a normal form instead of as sent, each with the reason; any other field sent in a
 * body and named in the answer's definition must come back as sent.
 */
export const NORMALIZED: Record<string, string> = {
  'Template.start_version': 'only a build template has a start version: another answers null',
  'Task.environment': 'no extra variables are stored as the empty JSON object, {}',
  'Task.arguments': 'no CLI arguments are null, as in the peer (*string)',
  'Task.git_branch': "no branch override is null: the template's branch is used",
  'Task.inventory_id':
    'an inventory override is kept only when the template allows one (allow_override_inventory), as the peer does',
};

export const rules: CheckRules = {
  spec: DOCUMENTED_FIELDS,
  nullable: NULLABLE,
  writeOnly: WRITE_ONLY,
  types: TYPES,
};
