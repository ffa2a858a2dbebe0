import type { Generated } from 'kysely';

/**
 * Table types. Booleans are stored as 0/1 integers and times as ISO-8601 strings on every dialect;
 * `db/values.ts` converts them. JSON documents are stored as text.
 */
type Bool = number;
type Time = string;

export interface UserTable {
  id: Generated<number>;
  created: Time;
  username: string;
  name: string;
  email: string;
  password: string;
  admin: Bool;
  alert: Bool;
  external: Bool;
  can_create_project: Bool;
}

export interface SessionTable {
  id: Generated<number>;
  token_hash: string;
  user_id: number;
  created: Time;
  last_active: Time;
  expired: Bool;
  ip: string;
  user_agent: string;
  /** 0 while the session waits for its second factor (TOTP): it reaches only the routes that complete or end it. */
  verified: Generated<Bool>;
}

export interface ApiTokenTable {
  id: string;
  token_hash: string;
  name: string;
  user_id: number;
  created: Time;
  expired: Bool;
  /** When the token stops working (migration 0006-token-expiry); null = never. */
  expires: Time | null;
  /** What the token may do, comma-separated (migration 0020-token-scopes); null = its owner's full rights. */
  scopes: string | null;
  /** The only projects the token reaches, a JSON array of ids; null = every project of its owner. */
  project_ids: string | null;
}

export interface ProjectTable {
  id: Generated<number>;
  created: Time;
  name: string;
  alert: Bool;
  alert_chat: string | null;
  max_parallel_tasks: number;
  type: string;
  /** Days finished tasks and their output are kept; 0 = the server default (SIGNALBOX_TASK_RETENTION_DAYS). */
  task_retention_days: Generated<number>;
  /** Tasks started through the MCP endpoint wait for a member's approval (migration 0022-agent-approval). */
  agent_runs_need_approval: Generated<Bool>;
}

export interface ProjectUserTable {
  id: Generated<number>;
  project_id: number;
  user_id: number;
  role: string;
  created: Time;
}

export interface AccessKeyTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  type: string;
  /** AES-256-GCM ciphertext of the JSON secret ({login,password} or {login,passphrase,private_key}). */
  secret: string | null;
  /** '' for the key store; 'environment' / 'variable' for environment secrets. */
  owner: string;
  environment_id: number | null;
  /** Where the secret is read at task time: null = `secret` (stored), 'env' or 'file' (migration 0011). */
  source_storage_type: string | null;
  /** The environment variable name or file path of an 'env' / 'file' key. */
  source_storage_key: string | null;
}

export interface RepositoryTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  git_url: string;
  git_branch: string;
  ssh_key_id: number | null;
}

export interface InventoryTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  type: string;
  inventory: string;
  ssh_key_id: number | null;
  become_key_id: number | null;
  repository_id: number | null;
  /** Tasks run with this inventory run only on a remote runner with this tag (migration 0013). */
  runner_tag: string | null;
}

export interface EnvironmentTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  json: string;
  env: string;
}

/** The summary of a task's saved Terraform/OpenTofu plan (migration 0021): a JSON object as text. */
export interface TaskPlanTable {
  task_id: number;
  project_id: number;
  summary: string;
  /** The plan file of a plan-only task: its bytes as base64, sealed (migration 0025); null: not kept. */
  plan_file: string | null;
  /** SHA-256 (hex) of the plan file's bytes. */
  plan_digest: string | null;
  commit_hash: string | null;
  workspace: string | null;
  /** The prior state the plan was made from, as its JSON says (null: not said). */
  state_lineage: string | null;
  state_serial: number | null;
  created: string | null;
  approved_by: number | null;
  approved_at: string | null;
  approved_digest: string | null;
  /** The task that applied this stored plan. */
  applied_by_task: number | null;
}

/** The last apply a task made on a template's workspace (migration 0025). */
export interface TerraformApplyTable {
  template_id: number;
  workspace: string;
  project_id: number;
  task_id: number;
  state_lineage: string | null;
  state_serial: number | null;
  applied_at: string;
}

/** The outcome of a template's last drift check (migration 0025). */
export interface TemplateDriftTable {
  template_id: number;
  project_id: number;
  /** drifted, in_sync or error */
  status: string;
  /** Since when the template has drifted (the first check of this drift); null when it has not. */
  since: string | null;
  checked_at: string;
  task_id: number;
  /** JSON: the drifted resources (addresses, actions, attribute paths; never values). */
  report: string;
  alert_pending: Generated<number>;
}

/** A named list of options a survey's choice variable may offer (migration 0019). */
/** A named Terraform state of a project (migration 0026-terraform-states), with its lock. */
export interface TerraformStateTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  created: Time;
  /** The version Terraform reads; null: none written yet (a lock taken before the first write). */
  current_version_id: number | null;
  /** The lock's ID as Terraform gave it; null: not locked. */
  lock_id: string | null;
  /** Terraform's LockInfo of the holder, as JSON text. */
  lock_info: string | null;
  locked_at: Time | null;
  locked_by_user_id: number | null;
  locked_by_task_id: number | null;
}

/** One written version of a Terraform state: the state sealed at rest (gzip inside). */
export interface TerraformStateVersionTable {
  id: Generated<number>;
  state_id: number;
  project_id: number;
  serial: number;
  lineage: string;
  /** Bytes of the state as Terraform sent it. */
  size: number;
  /** The state, gzipped and sealed with the secret key (re-encrypted by a key rotation like every `secret`). */
  secret: string;
  created: Time;
  user_id: number | null;
  task_id: number | null;
  /** `write` (Terraform wrote it) or `rollback` (a manager rolled the state back to `rolled_back_from`). */
  source: string;
  rolled_back_from: number | null;
}

/** The state backend credential of a running task: the SHA-256 of its secret (valid while the task runs). */
export interface TaskStateCredentialTable {
  task_id: number;
  project_id: number;
  secret_hash: string;
  created: Time;
}

export interface OptionListTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  /** A JSON array of {name, value}. */
  options: string;
}

export interface ViewTable {
  id: Generated<number>;
  project_id: number;
  title: string;
  position: number;
}

export interface TemplateTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  description: string;
  type: string;
  app: string;
  playbook: string;
  inventory_id: number | null;
  repository_id: number | null;
  environment_id: number | null;
  vault_key_id: number | null;
  view_id: number | null;
  build_template_id: number | null;
  start_version: string | null;
  autorun: Bool;
  suppress_success_alerts: Bool;
  arguments: string | null;
  allow_override_args_in_task: Bool;
  allow_override_branch_in_task: Bool;
  allow_parallel_tasks: Bool;
  git_branch: string | null;
  survey_vars: string;
  /** JSON object of app-specific template parameters (allow_debug, auto_approve, limit, tags…). */
  task_params: string;
  /** Its tasks run only on a remote runner with this tag (migration 0013). */
  runner_tag: string | null;
  /** The vault's name, the vault id Ansible is given; null reads as `default` (migration 0015). */
  vault_name: string | null;
  /** A vault whose password a script prints: its path (repository-relative or absolute); null: none. */
  vault_script: string | null;
  /** How many tasks it has; kept by triggers on task (migration 0027). */
  task_count: Generated<number>;
  /** Its newest task; null: none. Kept by triggers on task (migration 0027). */
  last_task_id: Generated<number | null>;
  /** Counted up by the database on every change of the row but its task counters (migration 0029). */
  rev: Generated<number>;
}

export interface ScheduleTable {
  id: Generated<number>;
  project_id: number;
  template_id: number;
  cron_format: string;
  repository_id: number | null;
  name: string;
  active: Bool;
  last_commit_hash: string | null;
  /** ISO time of the last cron tick claimed by a scheduler (migration 0002-scheduler). */
  last_tick: string | null;
  /** '' = cron, 'run_at' = once at `run_at` (migration 0011). */
  type: Generated<string>;
  /** ISO time (UTC) a run-once schedule starts its task. */
  run_at: string | null;
  /** A run-once schedule is deleted, not disabled, once it started its task. */
  delete_after_run: Generated<Bool>;
  /** When the scheduler last started a task of this schedule. */
  last_run_at: string | null;
  /** A run-once schedule whose time passed while no server ran (beyond the grace): disabled without running. */
  run_missed: Generated<Bool>;
  /** Default task parameters as JSON object text, given to every task it starts; null: none (0018). */
  task_params: string | null;
  /** The workflow it starts a run of instead of its template (template_id then 0); null: none (0023). */
  workflow_id: Generated<number | null>;
}

export interface TaskTable {
  id: Generated<number>;
  project_id: number;
  template_id: number;
  status: string;
  message: string;
  user_id: number | null;
  integration_id: number | null;
  schedule_id: number | null;
  created: Time;
  start: Time | null;
  end: Time | null;
  version: string | null;
  build_task_id: number | null;
  commit_hash: string | null;
  commit_message: string | null;
  playbook: string;
  environment: string;
  /** Encrypted JSON of secret survey values; cleared when the task finishes. */
  secret: string | null;
  arguments: string | null;
  git_branch: string | null;
  inventory_id: number | null;
  /** Overrides the template's environment (migration 0028); null: the template's. */
  environment_id: Generated<number | null>;
  /** Counted up by the database on every change of the row (migration 0029). */
  rev: Generated<number>;
  params: string;
  debug: Bool;
  dry_run: Bool;
  diff: Bool;
  /** The instance that claimed the task (task_runner.id); null on rows from before 0004. */
  runner: string | null;
  /** A control request for the claiming instance: 'stop' | 'force' | 'confirm' | 'reject'; cleared when acted on. */
  control: string | null;
  /** The remote runner the task was given to (migration 0013); null: run by a server instance. */
  remote_runner_id: number | null;
  /** The last output batch of its remote runner the server stored (0: none). */
  runner_seq: Generated<number>;
  /** The named values the task published (SIGNALBOX_OUTPUTS), a JSON object as text; null: none (0019). */
  outputs: string | null;
  /** How the task was started: ui, api, schedule, integration, autorun or mcp (0022); null on older rows. */
  source: string | null;
  /** The id of the API token that started the task (0022); null when none did. */
  source_token: string | null;
  /** The plan-only task whose stored plan this task applies (migration 0025); null: an ordinary run. */
  plan_of: Generated<number | null>;
  /** The workflow run whose template node started the task (0023); null: none. */
  workflow_run_id: number | null;
  /** The node of that run (its id in the workflow definition). */
  workflow_node_id: string | null;
  /** The secret outputs the task published (SIGNALBOX_SECRET_OUTPUTS), a sealed JSON object; null: none (0023). */
  secret_outputs: string | null;
}

/** One row per running server instance (SIGNALBOX_INSTANCE_ID or the data-dir hash) with its last heartbeat. */
export interface TaskRunnerTable {
  id: string;
  heartbeat: Time;
  /** The host and process holding the id (migration 0007-runner-owner; null on older rows). */
  host: string | null;
  pid: number | null;
}

/** The single row (id 1) leasing the queue to one instance while it claims waiting tasks. */
export interface TaskQueueLockTable {
  id: number;
  holder: string | null;
  expires: Time;
}

export interface TaskOutputTable {
  id: Generated<number>;
  task_id: number;
  time: Time;
  output: string;
}

export interface EventTable {
  id: Generated<number>;
  project_id: number | null;
  user_id: number | null;
  object_id: number | null;
  object_type: string;
  description: string;
  /** What happened, for the console to say in the reader's language (migration 0014); null: older events. */
  kind: string | null;
  /** The values of `kind`'s text, a JSON object; null with no kind. */
  params: string | null;
  created: Time;
}

export interface OptionTable {
  key: string;
  value: string;
}

export interface IntegrationTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  template_id: number;
  auth_method: string;
  auth_header: string;
  auth_secret_id: number | null;
  searchable: Bool;
  task_params: string;
  /** The workflow it starts a run of instead of its template (template_id then 0); null: none (0023). */
  workflow_id: Generated<number | null>;
}

export interface IntegrationAliasTable {
  id: Generated<number>;
  project_id: number;
  integration_id: number | null;
  alias: string;
}

export interface IntegrationMatcherTable {
  id: Generated<number>;
  integration_id: number;
  name: string;
  match_type: string;
  body_data_type: string;
  key: string;
  method: string;
  value: string;
}

export interface IntegrationExtractValueTable {
  id: Generated<number>;
  integration_id: number;
  name: string;
  value_source: string;
  body_data_type: string;
  key: string;
  variable: string;
  variable_type: string;
}

/** A delivery id an integration accepted (migration 0005-webhook-deliveries); pruned after 24 hours. */
export interface IntegrationDeliveryTable {
  id: Generated<number>;
  integration_id: number;
  delivery_id: string;
  created: Time;
}

/**
 * Failed password sign-ins (migration 0008-sign-in-throttle): a login+address pair row (`login` set, `user_id`
 * when the login names a user) or an address row (`login` empty). `id` is the SHA-256 of the row's key.
 */
export interface SignInThrottleTable {
  id: string;
  user_id: number | null;
  login: string;
  address: string;
  failures: number;
  /** Start of an address row's counting window; the first counted failure of a pair. */
  first_failure: Time;
  last_failure: Time;
  /** A pair may not try again before this time; null when it need not wait (address rows: always null). */
  blocked_until: Time | null;
}

/** A project's templates' revision, counted up by the database as they change (migration 0030). */
export interface ProjectTemplateRevTable {
  project_id: number;
  rev: number;
}

/**
 * A revision of what task lists show, counted up by the database (migration 0031): per project (its tasks), and
 * under scope 0 the names of users and remote runners.
 */
export interface TaskListRevTable {
  scope: number;
  rev: number;
}

export interface Database {
  user: UserTable;
  session: SessionTable;
  api_token: ApiTokenTable;
  project: ProjectTable;
  project_user: ProjectUserTable;
  access_key: AccessKeyTable;
  repository: RepositoryTable;
  inventory: InventoryTable;
  environment: EnvironmentTable;
  view: ViewTable;
  option_list: OptionListTable;
  template: TemplateTable;
  project_template_rev: ProjectTemplateRevTable;
  task_list_rev: TaskListRevTable;
  schedule: ScheduleTable;
  task: TaskTable;
  task_output: TaskOutputTable;
  task_plan: TaskPlanTable;
  terraform_apply: TerraformApplyTable;
  template_drift: TemplateDriftTable;
  terraform_state: TerraformStateTable;
  terraform_state_version: TerraformStateVersionTable;
  task_state_credential: TaskStateCredentialTable;
  task_runner: TaskRunnerTable;
  task_queue_lock: TaskQueueLockTable;
  event: EventTable;
  option: OptionTable;
  integration: IntegrationTable;
  integration_alias: IntegrationAliasTable;
  integration_matcher: IntegrationMatcherTable;
  integration_extract_value: IntegrationExtractValueTable;
  integration_delivery: IntegrationDeliveryTable;
  sign_in_throttle: SignInThrottleTable;
  project_invite: ProjectInviteTable;
  user_totp: UserTotpTable;
  user_totp_recovery: UserTotpRecoveryTable;
  remote_runner: RemoteRunnerTable;
  runner_registration_token: RunnerRegistrationTokenTable;
  workflow: WorkflowTable;
  workflow_run: WorkflowRunTable;
  workflow_run_node: WorkflowRunNodeTable;
  workflow_approval: WorkflowApprovalTable;
}

/** A registered remote runner (migration 0013-remote-runners). */
export interface RemoteRunnerTable {
  id: Generated<number>;
  /** null: a global runner; else the project it serves. */
  project_id: number | null;
  name: string;
  /** JSON array of tag strings. */
  tags: Generated<string>;
  /** SHA-256 (hex) of the runner's token. */
  token_hash: string;
  /** PEM public key job payloads are encrypted to. */
  public_key: string;
  max_parallel_tasks: Generated<number>;
  active: Generated<Bool>;
  version: Generated<string>;
  webhook: Generated<string>;
  created: Time;
  /** Last heartbeat, database clock; null: never connected. */
  touched: Time | null;
  /** Start time of the runner process last heard from. */
  started_at: Time | null;
  /** The server instance holding its connection; null: not connected. */
  instance_id: string | null;
  /** The task sandbox its hello reported: bwrap, off or refused; null: never reported (0017-runner-reports). */
  sandbox: string | null;
  /** Why its sandbox is off or refused. */
  sandbox_reason: string | null;
  /** The runner protocol version its last hello spoke (also when refused as incompatible); null: never said. */
  protocol: number | null;
}

/** A one-time runner registration token (migration 0013-remote-runners). */
export interface RunnerRegistrationTokenTable {
  id: Generated<number>;
  project_id: number | null;
  token_hash: string;
  user_id: number | null;
  created: Time;
  expires_at: Time;
  used_at: Time | null;
}

/** An invite of a user into a project (migration 0009-project-invites). */
export interface ProjectInviteTable {
  id: Generated<number>;
  project_id: number;
  /**
   * The invited account; null for an invite of an e-mail address nobody had an account for, until an account with
   * that address is created (migration 0016).
   */
  user_id: number | null;
  /** The e-mail address the invite was sent to (the user's at the time). */
  email: string;
  role: string;
  /** pending, accepted or declined; a pending invite past `expires_at` reads as expired. */
  status: string;
  /** SHA-256 of the invite's token (the token itself is shown once, at creation). */
  token_hash: string;
  /** Null once the inviter's account is deleted. */
  inviter_user_id: number | null;
  created: Time;
  expires_at: Time | null;
  accepted_at: Time | null;
}

/** A user's TOTP (two-factor sign-in): at most one per user; asked for at sign-in once `confirmed`. */
export interface UserTotpTable {
  id: Generated<number>;
  user_id: number;
  created: Time;
  /** The base32 secret, sealed with the server's secret key (AES-256-GCM). */
  secret: string;
  confirmed: Bool;
  confirmed_at: Time | null;
  /** Time step of the last code accepted: a code of this step or an earlier one is refused (no replay). */
  last_step: number | null;
}

/** One unused recovery code of a TOTP (bcrypt hash); deleted when used. */
export interface UserTotpRecoveryTable {
  id: Generated<number>;
  totp_id: number;
  code_hash: string;
}

/** A workflow: its survey, nodes and edges as one JSON document (0023). */
export interface WorkflowTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  description: string;
  /** JSON: {survey_vars, nodes, edges} as the contracts' workflowInput outputs them. */
  definition: string;
  created: Time;
  updated: Time;
}

/** A run of a workflow, with the definition it runs (a copy taken at its start). */
export interface WorkflowRunTable {
  id: Generated<number>;
  project_id: number;
  workflow_id: number;
  workflow_name: string;
  status: string;
  source: string;
  message: string;
  user_id: number | null;
  /** The API token that started it (its id); null: none. */
  source_token: string | null;
  schedule_id: number | null;
  integration_id: number | null;
  parent_run_id: number | null;
  created: Time;
  start: Time | null;
  end: Time | null;
  /** The survey's plain answers, a JSON object. */
  survey: string;
  /** The survey's secret answers, a sealed JSON object; null: none. */
  survey_secret: string | null;
  definition: string;
}

/** A node's state in a run; its conditional updates are the claims that advance the run. */
export interface WorkflowRunNodeTable {
  id: Generated<number>;
  run_id: number;
  project_id: number;
  node_id: string;
  type: string;
  status: string;
  attempt: Generated<number>;
  task_id: number | null;
  start: Time | null;
  end: Time | null;
  wait_until: Time | null;
  detail: string | null;
  input_digest: string | null;
}

/** A person's answer to an approval node, bound to the digest of the inputs they saw. */
export interface WorkflowApprovalTable {
  id: Generated<number>;
  run_id: number;
  project_id: number;
  node_id: string;
  user_id: number;
  decision: string;
  reason: string;
  digest: string;
  created: Time;
}
