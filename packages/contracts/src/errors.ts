import { z } from 'zod';

/**
 * Every refusal the server or a form can give, by its stable code, with its English wording. Placeholders
 * (`{{name}}`) are the code's params: `{{field}}` holds a request field's KEY (`git_url`, worded through
 * `fieldNames`), `{{what}}` the kind of a thing (`task`, worded through `thingNames`); every other param is a value
 * shown as it is (a limit, a name the user gave). Clients translate by the code and params, never by this text.
 */
export const errorTexts = {
  // A field's value, as a schema checks it
  required: '{{field}} is required',
  not_string: '{{field}} must be a string',
  not_number: '{{field}} must be a number',
  not_integer: '{{field}} must be an integer',
  not_boolean: '{{field}} must be true or false',
  not_list: '{{field}} must be a list',
  not_string_or_list: '{{field}} must be a string or a list of strings',
  not_object: '{{field}} must be an object',
  wrong_type: '{{field}} has the wrong type',
  too_long: '{{field}} must be at most {{max}} characters',
  too_short: '{{field}} must be at least {{min}} characters',
  too_large: '{{field}} must be at most {{max}}',
  too_small: '{{field}} must be {{min}} or greater',
  must_be_non_negative: '{{field}} must be 0 or greater',
  must_be_positive: '{{field}} must be greater than 0',
  too_many: '{{field}} must have at most {{max}} entries',
  too_few: '{{field}} must have at least {{min}} entries',
  not_one_of: '{{field}} must be one of {{options}}',
  unknown_field: '{{field}} is not a known field',
  invalid_format: '{{field}} is not in the expected format',
  invalid_value: '{{field}} is not valid',
  invalid_date: '{{field}} must be a date and time (ISO 8601)',
  invalid_date_offset: '{{field}} must be a date and time with a time zone, e.g. 2030-01-31T09:30:00Z',
  incorrect_url: 'Incorrect URL',
  incorrect_branch: 'Incorrect branch name',
  invalid_json: '{{field}} must be valid JSON',
  not_json_object: '{{field}} must be a JSON object',
  not_json_array: '{{field}} must be a JSON array',
  no_nul: '{{field}} must not contain NUL characters',
  control_chars: '{{field}} must not contain control characters',
  too_deep: '{{field}} must not nest objects or arrays more than {{max}} levels deep',
  too_big_json: '{{field}} is too large',
  invalid_email: '{{field}} must be a valid e-mail address',
  username_spaces: '{{field}} must not contain spaces',
  header_name: '{{field}} must be a valid HTTP header name',
  workspace_name:
    'Workspace name may contain only letters, digits, ".", "_" and "-", must not start with "-" or "." and must be at most 90 characters',
  path_absolute: '{{field}} must be a path inside the repository, not an absolute path',
  path_outside: '{{field}} must not leave the repository with ".."',
  path_option: '{{field}} must not start with "-"',
  enum_needs_values: 'Enumeration must have values.',
  survey_values_or_source: 'Give the options as values or take them from a source, not both.',
  survey_regex_invalid: 'The pattern is not a valid regular expression.',
  survey_regex_unsafe:
    'The pattern repeats a repetition (like (a+)+): it could take too long to check. Simplify it.',
  enum_unique_names: 'Enumeration values must have unique names.',
  enum_empty_name: 'Value name cannot be empty.',
  passcode_format: 'Code must be 6 digits',
  recovery_code_format: 'Recovery code must be 16 letters and digits',
  from_after_to: 'to must be later than from',
  offset_and_before: 'Use either offset or before, not both',
  offset_and_after: 'Use either offset or after, not both',
  invite_who_required: 'Name the user to invite: user_id, email or username',
  invite_one_user: 'Name the user to invite once: user_id, email or username, not several',
  run_once_checks_commits: 'A run-once schedule cannot check a repository for new commits',
  view_id_not_positive: 'View id {{id}} must be a positive integer',
  vault_one: 'A template has one vault: give at most one entry in vaults',
  vault_one_key: 'A template has one vault password key: give the same key in vault_key_id and vaults',
  vault_key_or_script:
    'A vault is a password key or a script, not both: leave vault_key_id empty for a script vault',
  vault_name_chars: 'Vault name must not contain "@" or control characters',
  vault_script_admin_only:
    'Only administrators can set or change a vault password script: it runs on the machine that runs the task',
  vault_script_admin_only_template:
    'Only administrators can set or change a vault password script: it runs on the machine that runs the task (template "{{template}}")',
  key_none_has_no_secret: 'A key of type none has no secret to read',
  /** A project, key, inventory… of this name already exists where names must be unique. */
  project_name_taken: 'You already have a project with this name',
  key_name_taken: 'A key with this name already exists in this project',
  inventory_name_taken: 'An inventory with this name already exists in this project',
  environment_name_taken: 'An environment with this name already exists in this project',
  repository_name_taken: 'A repository with this name already exists in this project',
  view_title_taken: 'A view with this title already exists in this project',
  option_list_name_taken: 'An option list with this name already exists in this project',
  backup_invalid: 'Invalid backup: {{detail}}',
  backup_not_json: 'The backup is not valid JSON',
  backup_not_object: 'Invalid backup: A backup must be a JSON object',

  // Signing in and permissions
  not_signed_in: 'Not signed in',
  incorrect_login: 'Incorrect login or password',
  password_login_disabled: 'Password sign-in is disabled',
  sign_in_throttled: 'Too many failed sign-in attempts. Try again in {{seconds}} seconds.',
  sign_in_throttled_minutes: 'Too many failed sign-in attempts. Try again in {{minutes}} minutes.',
  current_password_incorrect: 'Current password is incorrect',
  no_permission: 'You do not have permission to do this',
  admin_only: 'Only administrators can do this',
  /** The caller's project role lacks the permission bit a route needs; `params.permission` names the bit. */
  missing_permission: 'You need the {{permission}} permission in this project',
  not_project_member: 'You are not a member of this project',
  /** An API token limited to scopes lacks the one a route needs; `params.scope` names it (read, run, write, admin). */
  missing_token_scope: 'This API token does not have the {{scope}} scope',
  /** Routes only a session or a token with its owner's full rights may use (its own tokens, second factors). */
  token_needs_full_rights: 'Only a session or an API token with full rights can do this',
  mcp_needs_token: 'The MCP endpoint takes an API token: send Authorization: Bearer <token>',
  cannot_create_projects: 'You are not allowed to create projects',
  cross_site_request: 'Request refused: it was not sent by this console (cross-site request)',
  cookie_needs_json:
    'Request refused: a request signed in by cookie must send Content-Type: application/json or come from this console',
  metrics_token_required: 'A valid metrics token is required',
  // Two-factor sign-in (TOTP)
  /** A session that still waits for its second factor (the peer's text). */
  totp_required: 'TOTP_REQUIRED',
  /** Verifying a second factor the server has turned off (the peer's text). */
  totp_disabled: 'TOTP_DISABLED',
  totp_not_enabled: 'Two-factor sign-in (TOTP) is not enabled on this server',
  totp_already_on: 'Two-factor sign-in is already on: turn it off first',
  totp_proof_required: 'Give a current code or your password to turn two-factor sign-in off',
  totp_own_only: 'You can only set up two-factor sign-in for your own account',
  totp_view_own_only: 'You can only view your own two-factor sign-in',
  incorrect_passcode: 'Incorrect code',
  incorrect_recovery_code: 'Incorrect recovery code',
  // External sign-in (OIDC, LDAP)
  oidc_unreachable: 'Sign-in provider {{provider}} cannot be reached or is misconfigured: {{detail}}',
  oidc_refused: 'Sign-in with {{provider}} was refused: {{detail}}',
  oidc_expired: 'The sign-in with {{provider}} expired or was not started here. Start the sign-in again.',
  oidc_state_mismatch: 'The sign-in state does not match. Start the sign-in again.',
  oidc_no_code: 'The sign-in response has no authorization code',
  oidc_failed: 'Sign-in with {{provider}} failed{{detail}}. Start the sign-in again.',
  oidc_no_email: 'Sign-in with {{provider}} did not return an e-mail address (claim "{{claim}}")',
  oidc_local_account:
    'A local account with the username or e-mail of this {{provider}} user already exists; sign in with its password',
  ldap_no_email:
    'Your LDAP directory entry has no e-mail address (SIGNALBOX_LDAP_MAPPING_MAIL is "{{attribute}}"). Ask an administrator.',
  ldap_local_account:
    'A local account with the username or e-mail of this LDAP user already exists; sign in with its password',
  ldap_unreachable: 'The LDAP directory cannot be reached. Try again later.',
  ldap_search_refused:
    'LDAP sign-in is not working: the directory refused the sign-in search. Ask an administrator to check the LDAP settings.',

  // Users
  username_taken: 'Username {{username}} is already taken',
  email_taken: 'Email {{email}} is already taken',
  username_or_email_taken: 'Username or email is already taken',
  view_own_account: 'You can only view your own account',
  edit_own_account: 'You can only edit your own account',
  change_own_password: 'You can only change your own password',
  external_username_fixed: 'Username cannot be changed for external users',
  external_email_fixed: 'Email cannot be changed for external users',
  external_password_fixed: 'Password cannot be changed for external users',
  admin_flag_admin_only: 'Only administrators can change the admin flag',
  create_projects_flag_admin_only: 'Only administrators can change who may create projects',
  username_change_admin_only: 'Only administrators can change a username',
  last_admin: 'At least one administrator must remain',
  delete_users_admin_only: 'Only administrators can delete users',
  cannot_delete_self: 'You cannot delete your own account',
  cannot_delete_last_admin: 'Cannot delete the last administrator',
  sole_owner_of_project:
    'User {{username}} is the only owner of project {{projects}}: make someone else owner or delete the project first',
  sole_owner_of_projects:
    'User {{username}} is the only owner of projects {{projects}}: make someone else owner or delete the project first',
  clear_lock_admin_only: 'Only administrators can clear a sign-in lock',

  // Team and invites
  user_not_found: 'User {{id}} does not exist',
  already_member: 'User {{username}} is already a member of this project',
  last_owner: 'A project must keep at least one owner',
  owner_cannot_leave: 'The owner cannot leave the project',
  no_user_with_username: 'No user has the username {{username}}',
  expires_in_past: 'Expires at must be in the future',
  expires_too_far: 'Expires at must be within {{days}} days',
  already_invited_user: 'User {{username}} already has a pending invite to this project',
  already_invited_email: '{{email}} already has a pending invite to this project',
  invite_expired: 'This invite has expired; ask for a new one',
  invite_already_answered: 'This invite was already {{status}}',
  self_already_member: 'You are already a member of this project',
  invite_for_other_email: 'This invite is for another e-mail address',
  invite_for_other_user: 'This invite is for another user',

  // Project resources
  not_found: '{{what}} not found',
  /** A body names an object (by id) that the project does not have. */
  not_in_project: '{{what}} {{id}} does not exist in this project',
  project_id_mismatch: 'Project ID in body and URL are different',
  object_id_mismatch: 'Object ID in body and URL are different',
  // Survey options: option lists and the options a source yields
  option_values_unique: 'The values of an option list must be unique',
  options_inventory_type:
    'Only a static inventory (INI or YAML) can offer its hosts and groups, not a {{type}} inventory',
  options_inventory_invalid: 'The inventory {{name}} could not be read',
  options_http_bad_url: 'The options address must be an http or https URL',
  options_http_refused_address:
    'The options address {{host}} is a private, loopback or link-local address, which this server does not fetch (SIGNALBOX_SURVEY_HTTP_ALLOW_PRIVATE)',
  options_http_unreachable: 'The options address {{host}} could not be reached',
  options_http_timeout: 'The options address did not answer within {{limit}} seconds',
  options_http_too_large: 'The options document is larger than {{max}}',
  options_http_status: 'The options address answered with HTTP status {{status}}',
  options_http_not_json: 'The options document is not JSON',
  options_http_bad_path: 'The JSONPath {{path}} cannot be used',
  options_http_redirects: 'The options address redirected more than {{max}} times',
  options_http_key: 'The key of the options address must be a login and password key of this project',
  in_use: "Can't delete the {{what}} because it is used by the resources below",
  app_inactive:
    'The {{app}} app is not active on this server: an administrator can activate it (SIGNALBOX_APPS)',
  app_needs_inventory_type: 'The {{app}} app needs an inventory of type {{types}}',
  build_template_invalid: 'Build template must be a build template of this project',
  build_template_in_use: 'Template is the build template of {{templates}}; it must stay a build template',
  inventory_not_yaml: 'Inventory must be valid YAML',
  secret_not_in_environment: 'Secret {{id}} does not belong to this environment',
  secret_name_repeated: 'The environment already has a secret named {{name}} of type {{type}}',
  auth_secret_not_login_password: 'Auth secret must be a login_password key',
  key_source_admin_only:
    'Only administrators can create or change keys that read their secret from the server (environment variable or file)',
  key_env_unset: 'Environment variable {{name}} is not set on the server',
  secret_unknown: 'Unknown secret',
  secret_names_unique: 'Secret names must be unique',
  key_files_unset: 'Keys cannot read files on this server: SIGNALBOX_KEY_FILES_DIR is not set',
  key_files_dir_missing: 'The key files directory {{dir}} (SIGNALBOX_KEY_FILES_DIR) does not exist',
  key_file_dotdot: 'File path "{{path}}" must not contain ".."',
  key_file_outside:
    'File path "{{path}}" is not inside the key files directory {{dir}} (SIGNALBOX_KEY_FILES_DIR)',
  key_file_symlink_out: 'File path "{{path}}" leads out of the key files directory (through a symbolic link)',
  key_file_unreadable: 'File path "{{path}}" cannot be opened by the server',
  key_file_not_regular: 'File path "{{path}}" is not a regular file',
  key_env_name_invalid:
    'Environment variable "{{name}}" is not a valid name: use letters, digits and underscores',
  key_env_prefix:
    'Environment variable "{{name}}" is not allowed: key variables must start with {{prefix}} (SIGNALBOX_KEY_ENV_PREFIX)',
  key_env_setting: 'Environment variable "{{name}}" is a setting of the server and cannot be a key\'s secret',
  runner_name_taken: 'A runner named {{name}} already exists',
  runner_public_key: '{{field}} must be an X25519 public key in PEM (SPKI) form',
  registration_token_global: 'This registration token is for a global runner: leave project_id out',
  registration_token_other_project: 'This registration token is for another project',
  registration_token_invalid: 'The registration token is not valid, was already used or has expired',
  runner_token_refused: 'Runner token not accepted',
  project_not_found: 'Project {{id}} does not exist',
  alerts_disabled: 'Alerts are disabled for this project',
  test_alert_too_soon: 'A test alert was sent less than {{interval}} seconds ago; try again in {{seconds}} s',
  restore_needs_empty_instance: 'This instance already has projects: restore into a new instance',
  restore_needs_admin: 'The backup holds no admin and this instance has none',
  restore_email_taken: 'User {{username}}: e-mail {{email}} is taken by another user here',
  restore_unknown_member: 'Project {{project}}: no user {{username}}',
  not_instance_backup: 'Not an instance backup: {{detail}}',

  // Schedules
  cron_invalid: 'Invalid cron expression "{{cron}}": {{detail}}',
  cron_nickname:
    'Invalid cron expression "{{cron}}": unknown nickname (use @hourly, @daily, @weekly, @monthly or @yearly)',
  cron_fields:
    'Invalid cron expression "{{cron}}": expected 5 fields (minute hour day month weekday), got {{count}}',
  cron_never_fires: 'Invalid cron expression "{{cron}}": it never fires',
  run_at_past: 'Run at must be in the future',
  template_or_workflow: 'Give a template or a workflow to start, not both',
  survey_unanswerable_one:
    "A schedule cannot answer the template's required survey variable {{names}}: give it a default in the template, make it optional, or set it in the schedule's extra variables (not a secret one)",
  survey_unanswerable:
    "A schedule cannot answer the template's required survey variables {{names}}: give them defaults in the template, make them optional, or set them in the schedule's extra variables (not a secret one)",

  // Tasks
  not_waiting_confirmation: 'The task is not waiting for confirmation',
  not_waiting_approval: 'The task is not waiting for approval',
  /** An AI agent's run is approved by a person: never with the API token that started it. */
  own_run_approval: 'The API token that started this run cannot approve it: someone else must',
  task_not_of_template: 'Task {{id}} is not a task of this template',
  task_has_no_commit: 'Task {{id}} has no commit to run again (it never checked out its repository)',
  task_not_finished: 'Only a finished task can be deleted; stop it first',
  build_not_of_template: "Build task {{id}} is not a build of this template's build template",
  build_failed: 'Build task {{id}} did not succeed',
  survey_var_required: '{{title}} is required',
  survey_pattern_mismatch: '{{field}} must match the pattern {{pattern}}',
  /** A survey answer missed its variable's regex: the template's own message. */
  survey_regex_message: '{{field}}: {{message}}',
  not_multiple_of: '{{field}} must be a multiple of {{step}}',
  not_a_date: '{{field}} must be a date, e.g. 2030-01-31',
  task_has_no_commit_short: 'The task has no commit',
  playbook_override_not_allowed: 'This template does not allow a task to change its playbook',
  environment_override_not_allowed: 'This template does not allow a task to change its environment',
  playbook_override_needs_permission:
    'Changing the playbook of a task needs the manageProjectResources permission',
  reserved_variable:
    'Variable "{{name}}" cannot be set by a task: names starting with ansible_ and semaphore_vars need the manageProjectResources permission',
  limit_from_file: 'A limit must not start with "@" (a file on the server)',
  lock_timeout_invalid: '{{field}} must be a duration such as 30s, 5m or 1h, at most {{max}}',
  task_has_no_plan: 'Task {{id}} has no plan summary',
  plan_ttl_invalid: '{{field}} must be a whole number of hours from 1 to {{max}}',
  drift_pattern_invalid: '{{field}} must be patterns of 1 to 255 characters without control characters',
  drift_needs_terraform: 'Drift checks and reconciling are for Terraform, OpenTofu and Terragrunt templates',
  template_has_no_drift: 'Template {{id}} has not been checked for drift yet',
  plan_digest_mismatch:
    'The plan differs from the one approved (its SHA-256 does not match): it is not applied; plan again',
  plan_not_stored:
    'Task {{id}} has no stored plan to apply: only a plan-only run of Terraform, OpenTofu or Terragrunt that succeeded keeps one',
  plan_expired: 'The plan of task {{id}} expired at {{at}} (plans are kept {{hours}} h): plan again',
  plan_stale:
    'The plan of task {{id}} is older than the last apply on workspace {{workspace}} (task {{applied}}): plan again',
  plan_already_applied: 'The plan of task {{id}} was already applied by task {{by}}',
  own_plan_approval: 'This template requires someone other than who started the run to approve its plan',
  // The built-in Terraform state backend
  state_name:
    'State name may contain only letters, digits, ".", "_" and "-", must start with a letter or digit and be at most 100 characters',
  /** A lock conflict: the 423 answer also carries the holder's LockInfo (ID, Who, Operation…) for Terraform. */
  state_locked: 'The state {{name}} is locked by {{who}} (lock ID {{id}})',
  state_lock_info_invalid: "The lock information must be Terraform's LockInfo JSON with an ID",
  state_invalid: 'The state must be a Terraform state: a JSON object with a serial and a lineage',
  state_too_large:
    'The state is larger than {{max}}, the most this server keeps (SIGNALBOX_TERRAFORM_STATE_MAX_MB)',
  state_credentials_invalid:
    'These task credentials are not valid: the task has ended, or they are not the credentials of a running task',
  state_lock_lost:
    'The lock {{id}} is not held any more: the state was unlocked meanwhile, so this write is refused',
  state_rollback_current: 'Version {{id}} is the current version already',
  state_diff_same: 'Pick two different versions to compare',
  stack_name:
    'Stack must be a pulumi stack name: letters, digits, ".", "_", "-", up to two "/", not starting with "-"',
  argument_needs_equals: 'Task argument "{{argument}}" must be written {{argument}}=value',
  argument_needs_value: 'Task argument "{{argument}}" needs a value after it',
  argument_value_invalid: 'Task argument "{{argument}}" {{detail}}',
  argument_needs_bool: 'Task argument "{{argument}}" must be {{name}}=true or {{name}}=false',
  argument_not_allowed:
    'Task argument "{{argument}}" is not allowed: without the manageProjectResources permission a task may only pass {{allowed}}',

  // Workflows
  workflow_name_taken: 'A workflow with this name already exists in this project',
  workflow_node_id_format: '{{field}} must be 1 to 64 letters, digits, "_" or "-"',
  workflow_node_type: '{{field}} must be a node of type template, approval or delay',
  workflow_value_source: '{{field}} must say where the value comes from: fixed, survey or output',
  workflow_time_of_day: '{{field}} must be a time of day as HH:MM (24 hours)',
  workflow_edge_condition: '{{field}} must be one of {{options}}',
  workflow_digest_format: '{{field}} must be a SHA-256 digest in hexadecimal (64 characters)',
  workflow_node_id_repeated: 'Node id {{node}} is used by more than one node',
  workflow_edge_unknown_node: 'An edge names node {{node}}, which the workflow does not have',
  workflow_edge_repeated: 'Nodes {{from}} and {{to}} are connected more than once',
  workflow_cycle: 'The workflow has a cycle through the nodes {{nodes}}: a workflow must not loop back',
  workflow_node_unreachable: 'Node {{node}} is connected to no other node: connect it or remove it',
  workflow_node_never_runs:
    'Node {{node}} can never run: it needs node {{needs}} both to succeed and to fail',
  workflow_condition_never: 'The edge from {{from}} to {{to}} can never be taken: a delay node never fails',
  workflow_template_not_in_project:
    'Node {{node}} runs template {{id}}, which is not a template of this project',
  workflow_environment_not_in_project:
    'Node {{node}} runs with environment {{id}}, which is not an environment of this project',
  workflow_fixed_secret_answer:
    'Node {{node}} gives the secret variable {{name}} a fixed value: a definition is shown to every member, so take it from a secret variable of the workflow survey or a secret output instead',
  workflow_environment_override_not_allowed:
    'Node {{node}} changes the environment of its template, which does not allow a task to change its environment',
  workflow_mapping_not_upstream:
    'Node {{node}} takes the output {{output}} of node {{from}}, which does not run before it',
  workflow_mapping_not_template:
    'Node {{node}} takes the output {{output}} of node {{from}}, which is not a template node (only they have outputs)',
  workflow_mapping_unknown_survey:
    'Node {{node}} takes the survey answer {{name}}, which the workflow survey does not ask',
  workflow_approval_no_approvers:
    'Approval node {{node}} names nobody who may approve it: give roles or users',
  workflow_approver_not_member: 'User {{id}}, an approver of node {{node}}, is not a member of this project',
  workflow_delay_needs_wait: 'Delay node {{node}} needs seconds or a time of day (not both)',
  workflow_timezone_invalid: 'Delay node {{node}}: {{timezone}} is not a known time zone',
  workflow_in_use: 'The workflow is started by {{names}}: remove or change them first',
  workflow_run_finished: 'The run has already ended',
  workflow_run_not_finished: 'The run has not ended: stop it first, or wait for it to end',
  workflow_node_unknown: 'The run has no node {{node}}',
  workflow_rerun_node_not_run: 'Node {{node}} did not run: re-run from a node that ran',
  workflow_node_not_waiting_approval: 'Node {{node}} is not waiting for approval',
  workflow_approval_inputs_changed:
    'The inputs of node {{node}} changed since you looked at them: review them again before you approve',
  workflow_not_approver: 'You may not approve or reject node {{node}}',
  workflow_self_approval: 'You started this run: someone else must approve node {{node}}',
  workflow_already_answered: 'You already answered node {{node}}',
  workflow_value_missing: 'Node {{node}} cannot start: {{source}} has no value {{name}}',
  workflow_value_invalid: 'Node {{node}} cannot start: {{field}} {{detail}}',

  // The request itself
  body_not_json: 'Request body is not valid JSON',
  body_empty: 'Request body is empty',
  body_too_large: 'Request body is too large',
  body_not_object: 'Request body must be a JSON object',
  unsupported_content_type: 'Unsupported content type',
  url_malformed: 'Request URL is not valid (malformed percent-encoding)',
  path_param_too_long: 'A path parameter in the request URL is too long',
  route_not_found: 'Not found: {{method}} {{path}}',
  webhook_not_found: 'Integration alias not found',
  webhook_unauthorized: 'Invalid signature or token',
  /** The caller sent more requests than the server's request limit allows; `params.seconds` says how long to wait. */
  too_many_requests: 'Too many requests: try again in {{seconds}} seconds',
  // The server
  database_unavailable: 'Database unavailable, try again',
  internal: 'Internal server error',
  /** An error Fastify or a plugin raised with a status of its own that the server has no wording for. */
  request_failed: 'The request failed',
} as const;

/** English wordings for a count of one (`seconds: 1`), where the plural one would read wrong. */
const singular: Partial<Record<keyof typeof errorTexts, string>> = {
  sign_in_throttled: 'Too many failed sign-in attempts. Try again in 1 second.',
  too_many_requests: 'Too many requests: try again in 1 second',
};

/** A stable error code. */
export type ErrorCode = keyof typeof errorTexts;
export const errorCodes = Object.keys(errorTexts) as ErrorCode[];
export const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === 'string' && Object.hasOwn(errorTexts, value);

type Placeholders<S extends string> = S extends `${string}{{${infer P}}}${infer Rest}`
  ? P | Placeholders<Rest>
  : never;
/** The params a code's wording embeds, by name. */
export type ParamsOf<C extends ErrorCode> = { [K in Placeholders<(typeof errorTexts)[C]>]: string | number };

/** The placeholder names of a wording, in order of first use. */
export const placeholdersOf = (text: string): string[] => [
  ...new Set([...text.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1] as string)),
];

/** The values an error embeds. */
export type ErrorParams = Record<string, string | number>;
/** An error by code and params, typed: an unknown code, or a missing or misnamed param, does not compile. */
export type Coded<C extends ErrorCode = ErrorCode> = C extends ErrorCode
  ? [Placeholders<(typeof errorTexts)[C]>] extends [never]
    ? { code: C; params?: undefined }
    : { code: C; params: ParamsOf<C> }
  : never;
/** An error by code as it travels untyped (a response, a form's message): the params as sent. */
export type CodedMessage = { code: ErrorCode; params?: ErrorParams };

/** An error by code: `coded('too_long', { field: 'name', max: 30 })`. */
export function coded<C extends ErrorCode>(
  code: C,
  ...params: [Placeholders<(typeof errorTexts)[C]>] extends [never] ? [] : [ParamsOf<C>]
): Coded<C> {
  return (params[0] ? { code, params: params[0] } : { code }) as Coded<C>;
}

/**
 * English names of request fields by key, as the console's forms label them: the wording of `{{field}}`. A key
 * missing here is shown as it is.
 */
export const fieldNames: Record<string, string> = {
  body: 'Request body',
  path: 'Path',
  query: 'Query string',
  value: 'Value',
  name: 'Name',
  title: 'Title',
  username: 'Username',
  password: 'Password',
  current_password: 'Current password',
  email: 'Email',
  login: 'Login',
  auth: 'Username',
  admin: 'Admin',
  external: 'External',
  alert: 'Alert',
  can_create_project: 'Can create project',
  revoke_tokens: 'Revoke tokens',
  alert_chat: 'Alert chat',
  max_parallel_tasks: 'Max parallel tasks',
  task_retention_days: 'Task retention days',
  role: 'Role',
  user_id: 'User',
  expires_at: 'Expires at',
  expires_in_days: 'Expires in days',
  scopes: 'Scopes',
  project_ids: 'Projects',
  token: 'Token',
  passcode: 'Code',
  recovery_code: 'Recovery code',
  type: 'Type',
  app: 'App',
  playbook: 'Playbook filename',
  description: 'Description',
  repository_id: 'Repository',
  environment_id: 'Environment',
  inventory_id: 'Inventory',
  template_id: 'Template',
  view_id: 'View',
  project_id: 'Project ID',
  id: 'ID',
  build_template_id: 'Build template',
  build_task_id: 'Build version',
  start_version: 'Start version',
  arguments: 'CLI args',
  allow_override_args_in_task: 'Allow CLI args override',
  allow_override_branch_in_task: 'Allow branch override',
  allow_parallel_tasks: 'Allow parallel tasks',
  autorun: 'Autorun',
  searchable: 'Searchable',
  meta: 'Backup details',
  suppress_success_alerts: 'Suppress success alerts',
  survey_vars: 'Survey variables',
  options: 'Options',
  values: 'Values',
  default_value: 'Default value',
  required: 'Required',
  vaults: 'Vaults',
  vault_key_id: 'Vault key',
  script: 'Vault script',
  check_new_commits: 'Check new commits',
  check_new_commits_repository_id: 'Repository',
  cron_format: 'Cron',
  cron: 'Cron',
  run_at: 'Run at',
  delete_after_run: 'Delete after run',
  active: 'Active',
  task_params: 'Task params',
  params: 'Params',
  stack: 'Stack',
  limit: 'Limit',
  tags: 'Tags',
  runner_tag: 'Runner tag',
  lock_timeout: 'Lock timeout',
  plan_ttl_hours: 'Plan lifetime (hours)',
  drift_cron: 'Drift check schedule',
  drift_ignore_addresses: 'Ignored resources',
  drift_ignore_attributes: 'Ignored attributes',
  state_backend: 'State backend',
  state_name: 'State name',
  skip_tags: 'Skip tags',
  message: 'Message',
  git_branch: 'Branch',
  git_url: 'URL',
  ssh_key_id: 'User credentials',
  become_key_id: 'Sudo credentials',
  inventory: 'Inventory',
  json: 'Extra variables',
  env: 'Environment variables',
  environment: 'Extra variables',
  secret: 'Secret variables',
  secrets: 'Secrets',
  operation: 'Secret operation',
  override_secret: 'Override secret',
  login_password: 'Login and password',
  ssh: 'SSH key',
  passphrase: 'Passphrase',
  private_key: 'Private key',
  source_storage_type: 'Secret source',
  source_storage_key: 'Secret source key',
  auth_method: 'Auth method',
  auth_secret_id: 'Auth secret',
  auth_header: 'Auth header',
  match_type: 'Match source',
  body_data_type: 'Body data format',
  key: 'Key',
  method: 'Comparison method',
  value_source: 'Value source',
  variable: 'Variable',
  variable_type: 'Variable type',
  integration_id: 'Integration',
  position: 'Position',
  positions: 'Positions',
  public_key: 'public_key',
  registration_token: 'Registration token',
  debug: 'Debug',
  dry_run: 'Dry run',
  diff: 'Diff',
  force: 'Force',
  commit_of_task: 'Commit of task',
  sort: 'Sort',
  order: 'Order',
  offset: 'Offset',
  before: 'Before',
  after: 'After',
  from: 'From',
  to: 'To',
  format: 'Format',
  status: 'Status',
  object_type: 'Object type',
  nodes: 'Nodes',
  edges: 'Edges',
  node_id: 'Node',
  condition: 'Condition',
  roles: 'Roles',
  user_ids: 'Approvers',
  allow_self_approval: 'Allow self-approval',
  timeout_seconds: 'Timeout',
  on_timeout: 'On timeout',
  seconds: 'Seconds',
  time_of_day: 'Time of day',
  timezone: 'Time zone',
  survey: 'Survey',
  extra_vars: 'Extra variables',
  digest: 'Input digest',
  reason: 'Reason',
  workflow_id: 'Workflow',
};

/** English names of the kinds of things `{{what}}` holds, by key. */
export const thingNames = {
  project: 'Project',
  user: 'User',
  member: 'Project member',
  token: 'Token',
  task: 'Task',
  template: 'Template',
  schedule: 'Schedule',
  view: 'View',
  repository: 'Repository',
  inventory: 'Inventory',
  environment: 'Environment',
  key: 'Access key',
  secret: 'Secret',
  integration: 'Integration',
  alias: 'Alias',
  matcher: 'Matcher',
  extracted_value: 'Extracted value',
  runner: 'Runner',
  invite: 'Invite',
  provider: 'Sign-in provider',
  totp: 'TOTP',
  totp_setup: 'TOTP set-up',
  build_template: 'Build template',
  vault_key: 'Vault key',
  auth_secret: 'Auth secret',
  option_list: 'Option list',
  terraform_state: 'Terraform state',
  state_version: 'State version',
  workflow: 'Workflow',
  workflow_run: 'Workflow run',
} as const;
export type Thing = keyof typeof thingNames;

/** The English name of a field key: its label, else the key as it is. */
export const fieldName = (key: string): string =>
  Object.hasOwn(fieldNames, key) ? (fieldNames[key] as string) : key;

/** The field key of an issue path: its last name (array indexes skipped); `body` for the body itself. */
export function fieldKeyOf(path: readonly PropertyKey[]): string {
  for (let i = path.length - 1; i >= 0; i--) {
    const part = path[i];
    if (typeof part === 'string') return part;
  }
  return 'body';
}

/** The English wording of a coded error, its params filled in (`field` and `what` by their English names). */
export function errorMessage(error: CodedMessage): string {
  const params = error.params ?? {};
  const one = params.seconds === 1 ? singular[error.code] : undefined;
  return (one ?? errorTexts[error.code] ?? errorTexts.request_failed).replace(
    /\{\{(\w+)\}\}/g,
    (_, name: string, offset: number) => {
      const value = params[name];
      if (value === undefined) return '';
      if (name === 'field') return fieldName(String(value));
      if (name === 'what') {
        const thing = Object.hasOwn(thingNames, value) ? thingNames[value as Thing] : String(value);
        // A thing named inside a sentence is a common noun: "the template", not "the Template".
        return offset === 0 ? thing : thing.toLowerCase();
      }
      return String(value);
    },
  );
}

// A zod issue carries its code in its message as `@code` or `@code {params as JSON}`: a form shows the message
// through the code (react-hook-form passes only the message on), the server answers with the code.
const TOKEN = /^@([a-z0-9_]+)(?: (\{.*\}))?$/s;

/** The message of a zod issue that carries `code`; `field` is left out (the issue's path names the field). */
export function issue<C extends ErrorCode>(
  code: C,
  ...params: [Exclude<Placeholders<(typeof errorTexts)[C]>, 'field'>] extends [never]
    ? []
    : [Omit<ParamsOf<C>, 'field'>]
): string {
  return params[0] ? `@${code} ${JSON.stringify(params[0])}` : `@${code}`;
}

/** The message of a zod issue that carries an error given by code and params (untyped; see `issue`). */
export function issueOf(error: CodedMessage): string {
  const { field: _field, ...params } = error.params ?? {};
  return Object.keys(params).length ? `@${error.code} ${JSON.stringify(params)}` : `@${error.code}`;
}

/** The code a zod issue message carries (see `issue`); undefined for any other text. */
export function readIssue(message: string | undefined): CodedMessage | undefined {
  const match = message ? TOKEN.exec(message) : null;
  if (!match || !isErrorCode(match[1])) return undefined;
  if (!match[2]) return { code: match[1] };
  try {
    return { code: match[1], params: JSON.parse(match[2]) as ErrorParams };
  } catch {
    return { code: match[1] };
  }
}

/** What a zod issue's shape tells when its message carries no code: the kind of check that failed. */
export type IssueShape = {
  code: string;
  path?: readonly PropertyKey[];
  message?: string;
  expected?: unknown;
  origin?: unknown;
  maximum?: unknown;
  minimum?: unknown;
  inclusive?: boolean;
  values?: readonly unknown[];
  keys?: readonly string[];
  format?: unknown;
  input?: unknown;
};

const typeCodes: Record<string, ErrorCode> = {
  string: 'not_string',
  number: 'not_number',
  int: 'not_integer',
  boolean: 'not_boolean',
  array: 'not_list',
  object: 'not_object',
  record: 'not_object',
};

/** The coded error of a zod issue: the code its message carries, else one from the kind of check that failed. */
export function codeOfIssue(issue: IssueShape): CodedMessage {
  const field = fieldKeyOf(issue.path ?? []);
  const carried = readIssue(issue.message);
  if (carried) {
    const needsField = errorTexts[carried.code].includes('{{field}}');
    return needsField && carried.params?.field === undefined
      ? { code: carried.code, params: { ...carried.params, field } }
      : carried;
  }
  const num = (v: unknown) => (typeof v === 'bigint' ? Number(v) : (v as number));
  const sized =
    issue.origin === 'string'
      ? 'chars'
      : issue.origin === 'array' || issue.origin === 'set'
        ? 'items'
        : 'number';
  switch (issue.code) {
    case 'invalid_type': {
      // Only a parse with `reportInput` shows the input: then an absent or null value is a missing one.
      if ('input' in issue && (issue.input === undefined || issue.input === null))
        return { code: 'required', params: { field } };
      return { code: typeCodes[String(issue.expected)] ?? 'wrong_type', params: { field } };
    }
    case 'too_big': {
      const max = num(issue.maximum);
      if (sized === 'chars') return { code: 'too_long', params: { field, max } };
      if (sized === 'items') return { code: 'too_many', params: { field, max } };
      return { code: 'too_large', params: { field, max } };
    }
    case 'too_small': {
      const min = num(issue.minimum);
      if (sized === 'chars')
        return min <= 1
          ? { code: 'required', params: { field } }
          : { code: 'too_short', params: { field, min } };
      if (sized === 'items') return { code: 'too_few', params: { field, min } };
      if (min === 0)
        return {
          code: issue.inclusive === false ? 'must_be_positive' : 'must_be_non_negative',
          params: { field },
        };
      return { code: 'too_small', params: { field, min } };
    }
    case 'invalid_value':
      if ('input' in issue && (issue.input === undefined || issue.input === null || issue.input === ''))
        return { code: 'required', params: { field } };
      return {
        code: 'not_one_of',
        // The empty choice ("none") is not worth naming among the options.
        params: {
          field,
          options: (issue.values ?? [])
            .filter((v) => v !== '')
            .map(String)
            .join(', '),
        },
      };
    case 'unrecognized_keys':
      return { code: 'unknown_field', params: { field: (issue.keys ?? []).join(', ') } };
    case 'invalid_format':
      return issue.format === 'datetime' || issue.format === 'date'
        ? { code: 'invalid_date', params: { field } }
        : issue.format === 'email'
          ? { code: 'invalid_email', params: { field } }
          : { code: 'invalid_format', params: { field } };
    case 'not_multiple_of':
      return { code: 'not_integer', params: { field } };
    default:
      return { code: 'invalid_value', params: { field } };
  }
}

const errorParams = z.record(z.string(), z.union([z.string(), z.number()]));
const codedMessage = z.object({
  code: z.enum(errorCodes as [ErrorCode, ...ErrorCode[]]),
  params: errorParams.optional(),
});

/**
 * The body of every error response: the English message, its stable code and the values it embeds, and for a
 * refused field (400) each field's message and code, and the request's id. Documents the 4xx responses of the API
 * description.
 */
export const errorResponse = z.object({
  error: z.string(),
  code: z.enum(errorCodes as [ErrorCode, ...ErrorCode[]]),
  params: errorParams.optional(),
  fields: z.record(z.string(), z.string()).optional(),
  field_errors: z.record(z.string(), codedMessage).optional(),
  /** The id of the request (also its X-Request-Id response header), naming its lines in the server log. */
  request_id: z.string().optional(),
});
export type ErrorBody = z.output<typeof errorResponse>;
