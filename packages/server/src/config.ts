import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { DEFAULT_KEY_ENV_PREFIX, MAX_TASK_RETENTION_DAYS, projectRoles } from '@signalbox/contracts';
import { z } from 'zod';
import { parseSyslogAddress } from './audit/syslog';
import { parseWebhookUrl } from './audit/webhook';
import { appOverrides, appRegistry } from './lib/apps';
import { isFilterTemplate, parseLdapServer } from './lib/ldap-address';
import { DEFAULT_BCRYPT_COST } from './lib/password-hash';
import { parseSandboxPaths } from './lib/sandbox-paths';

/**
 * Environment -> typed configuration, parsed once at start. Each setting has a SIGNALBOX_* name and, where
 * Semaphore UI had one, its SEMAPHORE_* name as an alias (the Signalbox name wins when both are set).
 */
const bool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'TRUE', 'FALSE', 'True', 'False'], {
    error: 'must be true or false',
  })
  .transform((v) => ['1', 'true', 'yes'].includes(v.toLowerCase()));

const int = (min: number, max: number) =>
  z.coerce
    .number({ error: 'must be a number' })
    .int('must be an integer')
    .min(min, `must be ${min} or greater`)
    .max(max, `must be ${max} or less`);

/** Project roles that follow a user's groups at every sign-in (OIDC providers, LDAP): group -> project + role. */
const groupProjectRoles = z.array(
  z.object({
    group: z.string().min(1),
    project_id: z.number().int().positive(),
    role: z.enum(projectRoles),
  }),
);

const oidcProvider = z.object({
  display_name: z.string().default(''),
  provider_url: z.string().url().optional(),
  client_id: z.string().min(1),
  client_secret: z.string().default(''),
  redirect_url: z.string().optional(),
  scopes: z.array(z.string()).default(['openid', 'profile', 'email']),
  username_claim: z.string().default('preferred_username'),
  name_claim: z.string().default('preferred_username'),
  email_claim: z.string().default('email'),
  color: z.string().default(''),
  icon: z.string().default(''),
  order: z.number().default(0),
  /** The claim that lists the user's groups (an array of names, or one string of comma/space separated names). */
  groups_claim: z.string().default('groups'),
  /** When set, a user signing in is an admin exactly when one of their groups is listed here. */
  admin_groups: z.array(z.string().min(1)).default([]),
  /** Project memberships that follow the user's groups at every sign-in (see docs/configuration.md). */
  project_roles: groupProjectRoles.default([]),
});
export type OidcProviderConfig = z.infer<typeof oidcProvider>;

const jsonOf = <T extends z.ZodType>(schema: T) =>
  z.string().transform((text, ctx) => {
    try {
      const parsed = schema.safeParse(JSON.parse(text));
      if (parsed.success) return parsed.data as z.infer<T>;
      ctx.addIssue({
        code: 'custom',
        message: parsed.error.issues
          .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
          .join('; '),
      });
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be valid JSON' });
    }
    return z.NEVER;
  });

/** An LDAP filter template: one filter in parentheses, with a placeholder (`needs`) where a value goes. */
const ldapFilter = (needs: RegExp, message: string) =>
  z
    .string()
    .refine(isFilterTemplate, { error: 'must be one LDAP filter in parentheses, e.g. (uid=%s)' })
    .refine((v) => needs.test(v), { error: message });
/** A text setting that `check` accepts (it throws an Error saying what is wrong otherwise). */
const checkedBy = (check: (text: string) => unknown) =>
  z.string().superRefine((text, ctx) => {
    try {
      check(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

/** proxy-addr's names for address ranges, accepted in a list of trusted proxies. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

const isProxyAddress = (entry: string) => {
  if (PROXY_RANGE_NAMES.has(entry) || isIP(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (!family || rest.length || !/^\d{1,3}$/.test(bits ?? '')) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
};

/**
 * Which reverse proxies may tell the client's address (X-Forwarded-For) and host (X-Forwarded-Host), in the form
 * Fastify's trustProxy takes: false = none; true = one hop (the nearest proxy only, so a client cannot prepend a
 * forged address); a number of hops; or a comma-separated list of proxy addresses and CIDR ranges.
 */
/**
 * Which internal addresses a survey's options may be fetched from: false (none), true (all), or a comma-separated
 * list of addresses and CIDR ranges (`10.1.0.0/16,192.168.5.7`).
 */
const surveyHttpAllowPrivate = z
  .string()
  .optional()
  .transform((raw, ctx): boolean | string[] => {
    const text = (raw ?? '').trim();
    if (['', '0', 'false', 'no'].includes(text.toLowerCase())) return false;
    if (['1', 'true', 'yes'].includes(text.toLowerCase())) return true;
    const entries = text.split(',').map((e) => e.trim());
    const bad = entries.find((e) => {
      const [address, bits, ...rest] = e.split('/');
      const family = isIP(address ?? '');
      if (!family || rest.length > 0) return true;
      return bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
    });
    if (bad === undefined) return entries;
    ctx.addIssue({
      code: 'custom',
      message: `must be true, false or addresses and CIDR ranges (not "${bad}")`,
    });
    return z.NEVER;
  });

const trustProxy = z
  .string()
  .optional()
  .transform((raw, ctx): false | number | string[] => {
    const text = (raw ?? '').trim();
    if (['', 'false', 'no'].includes(text.toLowerCase())) return false;
    if (['true', 'yes'].includes(text.toLowerCase())) return 1;
    if (/^\d+$/.test(text)) {
      const hops = Number(text);
      if (hops <= 100) return hops === 0 ? false : hops;
    }
    const entries = text.split(',').map((e) => e.trim());
    const bad = entries.find((e) => !isProxyAddress(e));
    if (bad === undefined) return entries;
    ctx.addIssue({
      code: 'custom',
      message: `must be true, false, a number of proxy hops (at most 100), or a comma-separated list of proxy addresses or CIDR ranges ("${bad}" is none of these)`,
    });
    return z.NEVER;
  });

/** name -> [schema, aliases]. Every variable is optional; defaults fill the embedded mode. */
const variables = {
  port: [int(0, 65535).default(3000), 'SIGNALBOX_PORT', 'SEMAPHORE_PORT'],
  host: [z.string().default('0.0.0.0'), 'SIGNALBOX_HOST', 'SEMAPHORE_INTERFACE'],
  dataDir: [z.string().default('./data'), 'SIGNALBOX_DATA_DIR'],
  dbUrl: [z.string().optional(), 'SIGNALBOX_DB_URL'],
  dbPreparedStatements: [bool.default(true), 'SIGNALBOX_DB_PREPARED_STATEMENTS'],
  webRoot: [z.string().default(''), 'SIGNALBOX_WEB_ROOT', 'SEMAPHORE_WEB_ROOT'],
  adminLogin: [z.string().optional(), 'SIGNALBOX_ADMIN_LOGIN', 'SEMAPHORE_ADMIN'],
  adminPassword: [z.string().optional(), 'SIGNALBOX_ADMIN_PASSWORD', 'SEMAPHORE_ADMIN_PASSWORD'],
  adminEmail: [z.string().optional(), 'SIGNALBOX_ADMIN_EMAIL', 'SEMAPHORE_ADMIN_EMAIL'],
  adminName: [z.string().optional(), 'SIGNALBOX_ADMIN_NAME', 'SEMAPHORE_ADMIN_NAME'],
  maxParallelTasks: [
    int(1, 10_000).default(10),
    'SIGNALBOX_MAX_PARALLEL_TASKS',
    'SEMAPHORE_MAX_PARALLEL_TASKS',
  ],
  maxTasksPerTemplate: [
    int(0, 1_000_000).default(0),
    'SIGNALBOX_MAX_TASKS_PER_TEMPLATE',
    'SEMAPHORE_MAX_TASKS_PER_TEMPLATE',
  ],
  /**
   * The shared secret a remote runner registers with (`POST /api/internal/runners`); empty: only one-time
   * registration tokens made in the console are accepted.
   */
  runnerRegistrationToken: [
    z.string().default(''),
    'SIGNALBOX_RUNNER_REGISTRATION_TOKEN',
    'SEMAPHORE_RUNNER_REGISTRATION_TOKEN',
  ],
  /** Tasks whose template and inventory name no runner tag run on remote runners too (never on the server). */
  useRemoteRunner: [bool.default(false), 'SIGNALBOX_USE_REMOTE_RUNNER', 'SEMAPHORE_USE_REMOTE_RUNNER'],
  /** Seconds a remote runner may stay silent before its running tasks end as error (runner lost). */
  runnerLostTimeout: [int(5, 86_400).default(60), 'SIGNALBOX_RUNNER_LOST_TIMEOUT'],
  /**
   * Seconds a `signalbox runner` given SIGTERM waits for its running tasks to finish (taking no new one) before it
   * stops them (0: stops them at once).
   */
  runnerDrainTimeout: [int(0, 7 * 86_400).default(600), 'SIGNALBOX_RUNNER_DRAIN_TIMEOUT'],
  /** Days finished tasks and their output are kept (0 = forever); a project's own setting overrides it. */
  taskRetentionDays: [int(0, MAX_TASK_RETENTION_DAYS).default(0), 'SIGNALBOX_TASK_RETENTION_DAYS'],
  redisUrl: [z.string().optional(), 'SIGNALBOX_REDIS_URL'],
  /**
   * Names this deployment's Redis channel (`signalbox:<prefix>:live`); unset: the deployment id its database
   * holds, so deployments sharing one Redis never see each other's events.
   */
  redisPrefix: [
    z
      .string()
      .max(64, 'must be at most 64 characters')
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be letters, digits, dots, dashes or underscores')
      .optional(),
    'SIGNALBOX_REDIS_PREFIX',
  ],
  /**
   * Requests per minute one signed-in user (session or API token) may send, counted across instances when Redis is
   * set (http/rate-limit.ts); 0 turns the request limiter off.
   */
  rateLimit: [int(0, 1_000_000).default(1200), 'SIGNALBOX_RATE_LIMIT'],
  /**
   * MCP calls per minute one API token may make at /api/mcp (a token bucket per token, in memory per instance);
   * 0: not limited beyond SIGNALBOX_RATE_LIMIT.
   */
  mcpRateLimit: [int(0, 1_000_000).default(120), 'SIGNALBOX_MCP_RATE_LIMIT'],
  /** Requests per minute per client address from callers not signed in (sign-in, webhooks); 0: not limited. */
  rateLimitAnonymous: [int(0, 1_000_000).default(300), 'SIGNALBOX_RATE_LIMIT_ANONYMOUS'],
  /** Bearer token GET /api/metrics requires; unset: the endpoint is open (firewall it). */
  metricsToken: [z.string().optional(), 'SIGNALBOX_METRICS_TOKEN'],
  /**
   * How a task's processes are held so that all of them end with the task: cgroup (a cgroup v2 per task, killed
   * with cgroup.kill), session (tracking the sessions and groups its processes create), or auto (cgroup where
   * the server may create cgroups, else session).
   */
  taskIsolation: [
    z.enum(['auto', 'cgroup', 'session'], { error: 'must be auto, cgroup or session' }).default('auto'),
    'SIGNALBOX_TASK_ISOLATION',
  ],
  /**
   * What a task's processes can see: bwrap (bubblewrap: the system read-only and only the task's own folder of the
   * server's files), off (everything the server's user can read), or auto (bwrap where it runs, else off with a
   * warning at start).
   */
  taskSandbox: [
    z.enum(['auto', 'bwrap', 'off'], { error: 'must be auto, bwrap or off' }).default('auto'),
    'SIGNALBOX_TASK_SANDBOX',
  ],
  /** The bubblewrap binary (a name looked up on PATH, or a path). */
  taskSandboxBwrap: [z.string().min(1, 'must not be empty').default('bwrap'), 'SIGNALBOX_TASK_SANDBOX_BWRAP'],
  /** Extra paths every confined task sees: absolute paths separated by commas, read-only unless `:rw` follows. */
  taskSandboxPaths: [
    z
      .string()
      .transform((text, ctx) => {
        const parsed = parseSandboxPaths(text);
        if (typeof parsed !== 'string') return parsed;
        ctx.addIssue({ code: 'custom', message: parsed });
        return z.NEVER;
      })
      .default([]),
    'SIGNALBOX_TASK_SANDBOX_PATHS',
  ],
  /**
   * The user sandboxed tasks run as (a name or uid; the server must run as root): a task that escaped the sandbox
   * still has none of the server's rights. Unset: the server's own user.
   */
  taskUser: [
    z
      .string()
      .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}$/, 'must be a user name or a uid')
      .optional(),
    'SIGNALBOX_TASK_USER',
  ],
  /** MiB of output one task may print (0: no limit); a task that prints more is stopped and ends as error. */
  taskOutputLimitMb: [int(0, 1_048_576).default(0), 'SIGNALBOX_TASK_OUTPUT_LIMIT_MB'],
  /** MiB a Terraform state sent to the built-in state backend may have; a larger one is refused (413). */
  terraformStateMaxMb: [int(1, 1024).default(16), 'SIGNALBOX_TERRAFORM_STATE_MAX_MB'],
  /** Versions of each Terraform state the built-in backend keeps (the current one always); older ones are dropped. */
  terraformStateVersions: [int(1, 100_000).default(50), 'SIGNALBOX_TERRAFORM_STATE_VERSIONS'],
  /** This instance's name among several on one database; unset: a hash of the data dir (stable across restarts). */
  instanceId: [
    z
      .string()
      .max(64, 'must be at most 64 characters')
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be letters, digits, dots, dashes or underscores')
      .optional(),
    'SIGNALBOX_INSTANCE_ID',
  ],
  secretKey: [
    z
      .string()
      .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be base64 of 32 bytes')
      .optional(),
    'SIGNALBOX_SECRET_KEY',
    'SEMAPHORE_ACCESS_KEY_ENCRYPTION',
  ],
  passwordLoginDisabled: [
    bool.default(false),
    'SIGNALBOX_PASSWORD_LOGIN_DISABLED',
    'SEMAPHORE_PASSWORD_LOGIN_DISABLED',
  ],
  nonAdminCanCreateProject: [
    bool.default(false),
    'SIGNALBOX_NON_ADMIN_CAN_CREATE_PROJECT',
    'SEMAPHORE_NON_ADMIN_CAN_CREATE_PROJECT',
  ],
  oidcProviders: [
    jsonOf(z.record(z.string(), oidcProvider)).optional(),
    'SIGNALBOX_OIDC_PROVIDERS',
    'SEMAPHORE_OIDC_PROVIDERS',
  ],
  trustProxy: [trustProxy, 'SIGNALBOX_TRUST_PROXY'],
  // LDAP sign-in (docs/configuration.md: LDAP). The second SEMAPHORE_* names are those of the peer's container image.
  ldapEnable: [
    bool.default(false),
    'SIGNALBOX_LDAP_ENABLE',
    'SEMAPHORE_LDAP_ENABLE',
    'SEMAPHORE_LDAP_ACTIVATED',
  ],
  /** host[:port], ldap://host[:port] or ldaps://host[:port]. */
  ldapServer: [
    z
      .string()
      .refine((v) => typeof parseLdapServer(v, { needTls: false }) !== 'string', {
        error: 'must be host[:port], ldap://host[:port] or ldaps://host[:port]',
      })
      .optional(),
    'SIGNALBOX_LDAP_SERVER',
    'SEMAPHORE_LDAP_SERVER',
    'SEMAPHORE_LDAP_HOST',
  ],
  /** The port when the server setting names none. */
  ldapPort: [int(1, 65535).optional(), 'SIGNALBOX_LDAP_PORT', 'SEMAPHORE_LDAP_PORT'],
  /** LDAPS: TLS from the first byte (the peer's meaning). */
  ldapNeedTls: [bool.default(false), 'SIGNALBOX_LDAP_NEEDTLS', 'SEMAPHORE_LDAP_NEEDTLS'],
  /** Upgrade a plain ldap:// connection with StartTLS before anything is sent. */
  ldapStartTls: [bool.default(false), 'SIGNALBOX_LDAP_STARTTLS'],
  /** Accept any certificate from the directory (the peer's only behaviour); off: verified against the CAs. */
  ldapTlsSkipVerify: [bool.default(false), 'SIGNALBOX_LDAP_TLS_SKIP_VERIFY'],
  /** PEM file of CA certificates trusted for the directory's certificate, besides the system's. */
  ldapCaFile: [z.string().optional(), 'SIGNALBOX_LDAP_CA_FILE'],
  ldapBindDn: [
    z.string().default(''),
    'SIGNALBOX_LDAP_BIND_DN',
    'SEMAPHORE_LDAP_BIND_DN',
    'SEMAPHORE_LDAP_DN_BIND',
  ],
  ldapBindPassword: [
    z.string().default(''),
    'SIGNALBOX_LDAP_BIND_PASSWORD',
    'SEMAPHORE_LDAP_BIND_PASSWORD',
    'SEMAPHORE_LDAP_PASSWORD',
  ],
  ldapSearchDn: [
    z.string().default(''),
    'SIGNALBOX_LDAP_SEARCH_DN',
    'SEMAPHORE_LDAP_SEARCH_DN',
    'SEMAPHORE_LDAP_DN_SEARCH',
  ],
  /** `%s` (or Go's `%[1]s`) is replaced by the login, escaped (RFC 4515). */
  ldapSearchFilter: [
    ldapFilter(/%(\[1\])?s/, 'must contain %s where the login goes').default(
      '(&(objectClass=inetOrgPerson)(uid=%s))',
    ),
    'SIGNALBOX_LDAP_SEARCH_FILTER',
    'SEMAPHORE_LDAP_SEARCH_FILTER',
  ],
  /** Attribute (or `{{ .attr }}` template) for each user field; `dn` is the entry's own name. */
  ldapMappingDn: [z.string().default('dn'), 'SIGNALBOX_LDAP_MAPPING_DN', 'SEMAPHORE_LDAP_MAPPING_DN'],
  ldapMappingMail: [
    z.string().min(1).default('mail'),
    'SIGNALBOX_LDAP_MAPPING_MAIL',
    'SEMAPHORE_LDAP_MAPPING_MAIL',
  ],
  ldapMappingUid: [
    z.string().min(1).default('uid'),
    'SIGNALBOX_LDAP_MAPPING_UID',
    'SEMAPHORE_LDAP_MAPPING_UID',
  ],
  ldapMappingCn: [z.string().min(1).default('cn'), 'SIGNALBOX_LDAP_MAPPING_CN', 'SEMAPHORE_LDAP_MAPPING_CN'],
  /** Seconds a connection and each directory request may take. */
  ldapTimeout: [int(1, 300).default(10), 'SIGNALBOX_LDAP_TIMEOUT'],
  /** The user entry's attribute listing their groups (e.g. memberOf): group DNs or names. */
  ldapGroupAttribute: [z.string().default(''), 'SIGNALBOX_LDAP_GROUP_ATTRIBUTE'],
  /** Where to search for the user's groups; unset: no group search. */
  ldapGroupSearchDn: [z.string().default(''), 'SIGNALBOX_LDAP_GROUP_SEARCH_DN'],
  /** `%s` is replaced by the user's DN, `%u` by their login, both escaped. */
  ldapGroupSearchFilter: [
    ldapFilter(/%[su]/, "must contain %s (the user's DN) or %u (their login)").default(
      '(|(member=%s)(uniqueMember=%s))',
    ),
    'SIGNALBOX_LDAP_GROUP_SEARCH_FILTER',
  ],
  /** JSON array of groups (names or DNs) whose members are admins. */
  ldapAdminGroups: [jsonOf(z.array(z.string().min(1))).optional(), 'SIGNALBOX_LDAP_ADMIN_GROUPS'],
  /** JSON array of {group, project_id, role}, as an OIDC provider's project_roles. */
  ldapProjectRoles: [jsonOf(groupProjectRoles).optional(), 'SIGNALBOX_LDAP_PROJECT_ROLES'],
  logLevel: [
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    'SIGNALBOX_LOG_LEVEL',
    'SEMAPHORE_LOG_LEVEL',
  ],
  /** Log lines as JSON or for a person (pino-pretty); auto: pretty when stdout is a terminal, JSON otherwise. */
  logFormat: [
    z.enum(['auto', 'json', 'pretty'], { error: 'must be auto, json or pretty' }).default('auto'),
    'SIGNALBOX_LOG_FORMAT',
  ],
  /**
   * The level of the two lines logged per request (received, answered); auto: debug when stdout is a terminal (a
   * person watching the console sees the start and warnings, not every request), info otherwise.
   */
  requestLogLevel: [
    z
      .enum(['auto', 'info', 'debug', 'trace'], { error: 'must be auto, info, debug or trace' })
      .default('auto'),
    'SIGNALBOX_REQUEST_LOG_LEVEL',
  ],
  scheduleTimezone: [z.string().default('UTC'), 'SIGNALBOX_SCHEDULE_TIMEZONE', 'SEMAPHORE_SCHEDULE_TIMEZONE'],
  // Alerts (issue: task engine). E-mail through SMTP; chat senders by URL/token.
  emailAlert: [bool.default(false), 'SIGNALBOX_EMAIL_ALERT', 'SEMAPHORE_EMAIL_ALERT'],
  emailSender: [
    z.string().default('signalbox@localhost'),
    'SIGNALBOX_EMAIL_SENDER',
    'SEMAPHORE_EMAIL_SENDER',
  ],
  emailHost: [z.string().default('localhost'), 'SIGNALBOX_EMAIL_HOST', 'SEMAPHORE_EMAIL_HOST'],
  emailPort: [int(1, 65535).default(25), 'SIGNALBOX_EMAIL_PORT', 'SEMAPHORE_EMAIL_PORT'],
  emailUsername: [z.string().default(''), 'SIGNALBOX_EMAIL_USERNAME', 'SEMAPHORE_EMAIL_USERNAME'],
  emailPassword: [z.string().default(''), 'SIGNALBOX_EMAIL_PASSWORD', 'SEMAPHORE_EMAIL_PASSWORD'],
  emailSecure: [bool.default(false), 'SIGNALBOX_EMAIL_SECURE', 'SEMAPHORE_EMAIL_SECURE'],
  emailTls: [bool.default(false), 'SIGNALBOX_EMAIL_TLS', 'SEMAPHORE_EMAIL_TLS'],
  telegramAlert: [bool.default(false), 'SIGNALBOX_TELEGRAM_ALERT', 'SEMAPHORE_TELEGRAM_ALERT'],
  telegramChat: [z.string().default(''), 'SIGNALBOX_TELEGRAM_CHAT', 'SEMAPHORE_TELEGRAM_CHAT'],
  telegramToken: [z.string().default(''), 'SIGNALBOX_TELEGRAM_TOKEN', 'SEMAPHORE_TELEGRAM_TOKEN'],
  telegramUrl: [z.string().default('https://api.telegram.org'), 'SIGNALBOX_TELEGRAM_URL'],
  slackAlert: [bool.default(false), 'SIGNALBOX_SLACK_ALERT', 'SEMAPHORE_SLACK_ALERT'],
  slackUrl: [z.string().default(''), 'SIGNALBOX_SLACK_URL', 'SEMAPHORE_SLACK_URL'],
  rocketchatAlert: [bool.default(false), 'SIGNALBOX_ROCKETCHAT_ALERT', 'SEMAPHORE_ROCKETCHAT_ALERT'],
  rocketchatUrl: [z.string().default(''), 'SIGNALBOX_ROCKETCHAT_URL', 'SEMAPHORE_ROCKETCHAT_URL'],
  microsoftTeamsAlert: [
    bool.default(false),
    'SIGNALBOX_MICROSOFT_TEAMS_ALERT',
    'SEMAPHORE_MICROSOFT_TEAMS_ALERT',
  ],
  microsoftTeamsUrl: [
    z.string().default(''),
    'SIGNALBOX_MICROSOFT_TEAMS_URL',
    'SEMAPHORE_MICROSOFT_TEAMS_URL',
  ],
  dingtalkAlert: [bool.default(false), 'SIGNALBOX_DINGTALK_ALERT', 'SEMAPHORE_DINGTALK_ALERT'],
  dingtalkUrl: [z.string().default(''), 'SIGNALBOX_DINGTALK_URL', 'SEMAPHORE_DINGTALK_URL'],
  gotifyAlert: [bool.default(false), 'SIGNALBOX_GOTIFY_ALERT', 'SEMAPHORE_GOTIFY_ALERT'],
  gotifyUrl: [z.string().default(''), 'SIGNALBOX_GOTIFY_URL', 'SEMAPHORE_GOTIFY_URL'],
  gotifyToken: [z.string().default(''), 'SIGNALBOX_GOTIFY_TOKEN', 'SEMAPHORE_GOTIFY_TOKEN'],
  /** Generic outbound webhook: every alert POSTed as JSON, signed with HMAC-SHA256 when a secret is set. */
  webhookAlert: [bool.default(false), 'SIGNALBOX_WEBHOOK_ALERT'],
  webhookUrl: [z.string().default(''), 'SIGNALBOX_WEBHOOK_URL'],
  webhookSecret: [z.string().default(''), 'SIGNALBOX_WEBHOOK_SECRET'],
  /** Seconds one alert send (SMTP or chat POST) may take before it is given up. */
  alertTimeout: [int(1, 300).default(10), 'SIGNALBOX_ALERT_TIMEOUT'],
  /**
   * Seconds running tasks get to finish when the server is told to stop (SIGTERM/SIGINT); the ones still running
   * then are ended as interrupted.
   */
  shutdownGrace: [int(0, 3600).default(30), 'SIGNALBOX_SHUTDOWN_GRACE'],
  /** bcrypt cost of stored password hashes (each step doubles the work). */
  bcryptCost: [int(4, 31).default(DEFAULT_BCRYPT_COST), 'SIGNALBOX_BCRYPT_COST'],
  /** The app registry: every app's defaults with the peer's `apps` object laid over them (see lib/apps.ts). */
  apps: [
    jsonOf(appOverrides)
      .optional()
      .transform((overrides) => appRegistry(overrides)),
    'SIGNALBOX_APPS',
    'SEMAPHORE_APPS',
  ],
  /**
   * Seconds a run-once schedule may be late and still start its task: when no server ran at its time, the first
   * one to start within this much after it runs it; later, it is marked missed and disabled (0: never catch up).
   */
  runOnceGrace: [int(0, 30 * 86_400).default(900), 'SIGNALBOX_RUN_ONCE_GRACE'],
  /** Keys reading their secret from the server's environment may name only variables starting with this. */
  keyEnvPrefix: [
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be letters, digits and underscores, not starting with a digit')
      .default(DEFAULT_KEY_ENV_PREFIX),
    'SIGNALBOX_KEY_ENV_PREFIX',
  ],
  /** The directory keys reading their secret from a file must stay in; unset: no key reads a file. */
  keyFilesDir: [
    z
      .string()
      .refine((v) => isAbsolute(v), 'must be an absolute path')
      .optional(),
    'SIGNALBOX_KEY_FILES_DIR',
  ],
  /**
   * A survey's options fetched over HTTP may come from private, loopback, link-local and other internal addresses
   * (off: only public addresses, so a template cannot make the server reach its own network).
   */
  surveyHttpAllowPrivate: [surveyHttpAllowPrivate, 'SIGNALBOX_SURVEY_HTTP_ALLOW_PRIVATE'],
  /** Every audit event POSTed, in batches of JSON lines, to this URL (audit/forward.ts). */
  auditWebhookUrl: [checkedBy(parseWebhookUrl).default(''), 'SIGNALBOX_AUDIT_WEBHOOK_URL'],
  /** Secret signing each audit webhook POST (HMAC-SHA256 of the body); empty: unsigned. */
  auditWebhookSecret: [z.string().default(''), 'SIGNALBOX_AUDIT_WEBHOOK_SECRET'],
  /** Every audit event sent to this syslog receiver (udp://host:port or tcp://host:port), RFC 5424. */
  auditSyslog: [checkedBy(parseSyslogAddress).default(''), 'SIGNALBOX_AUDIT_SYSLOG'],
  /** Users may turn on two-factor sign-in (TOTP); sign-in then asks them for a code. */
  totpEnabled: [bool.default(false), 'SIGNALBOX_TOTP_ENABLED', 'SEMAPHORE_TOTP_ENABLED'],
  /** Turning TOTP on also gives one-time recovery codes, each accepted once in place of a code. */
  totpAllowRecovery: [bool.default(false), 'SIGNALBOX_TOTP_ALLOW_RECOVERY', 'SEMAPHORE_TOTP_ALLOW_RECOVERY'],
} as const satisfies Record<string, readonly [z.ZodType, ...string[]]>;

type Variables = typeof variables;
export type Config = { [K in keyof Variables]: z.output<Variables[K][0]> } & {
  /** Absolute data directory. */
  dataDir: string;
  /** Resolved database URL. */
  dbUrl: string;
};

export class ConfigError extends Error {}

/** Every environment variable name a setting is read from (SIGNALBOX_* names and their SEMAPHORE_* aliases). */
export const settingNames: ReadonlySet<string> = new Set(
  Object.values(variables).flatMap(([, ...names]) => names as string[]),
);

/** Parses the environment. Throws ConfigError naming the variable on a bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const out: Record<string, unknown> = {};
  for (const [key, [schema, ...names]] of Object.entries(variables)) {
    const name = names.find((n) => env[n] !== undefined && env[n] !== '');
    let raw = name ? env[name] : undefined;
    if (key === 'port' && typeof raw === 'string') raw = raw.replace(/^:/, '');
    const parsed = (schema as z.ZodType).safeParse(raw);
    if (!parsed.success) {
      throw new ConfigError(`${name ?? names[0]}: ${parsed.error.issues[0]?.message ?? 'invalid value'}`);
    }
    out[key] = parsed.data;
  }
  const config = { ...out, ...overrides } as Config;
  config.dataDir = resolve(config.dataDir);
  config.dbUrl = config.dbUrl || `sqlite://${resolve(config.dataDir, 'signalbox.db')}`;
  if (!/^(sqlite|postgres|postgresql|mysql|mariadb):\/\//.test(config.dbUrl)) {
    throw new ConfigError('SIGNALBOX_DB_URL: must start with sqlite://, postgres:// or mysql://');
  }
  checkLdap(config);
  return config;
}

/** LDAP settings that only make sense together: checked when LDAP sign-in is on. */
function checkLdap(config: Config) {
  if (!config.ldapEnable) return;
  if (!config.ldapServer)
    throw new ConfigError('SIGNALBOX_LDAP_SERVER: must be set when LDAP sign-in is enabled');
  const address = parseLdapServer(config.ldapServer, { port: config.ldapPort, needTls: config.ldapNeedTls });
  if (typeof address === 'string') throw new ConfigError(`SIGNALBOX_LDAP_SERVER: ${address}`);
  if (!config.ldapSearchDn.trim())
    throw new ConfigError('SIGNALBOX_LDAP_SEARCH_DN: must be set when LDAP sign-in is enabled');
  if (config.ldapStartTls && address.secure)
    throw new ConfigError(
      'SIGNALBOX_LDAP_STARTTLS: cannot be used with LDAPS (ldaps:// or SIGNALBOX_LDAP_NEEDTLS)',
    );
}
