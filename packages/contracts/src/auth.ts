import { z } from 'zod';
import { id } from './common';

export const loginInput = z.object({
  auth: z.string().trim().min(1).max(255),
  password: z.string().min(1).max(255),
});
export type LoginInput = z.infer<typeof loginInput>;

/** An OpenID Connect provider the login page offers a button for. */
export const oidcProviderInfoSchema = z.strictObject({
  id: z.string().describe('The configured id of the provider, as in /api/auth/oidc/{id}/login'),
  name: z.string().describe('Text of the sign-in button: the display name, else the id'),
  color: z.string().describe('Colour of the sign-in button; empty for the default'),
  icon: z.string().describe('Icon of the sign-in button; empty for none'),
});
export type OidcProviderInfo = z.infer<typeof oidcProviderInfoSchema>;

/** GET /api/auth/login: the ways to sign in this server offers. */
export const loginOptionsSchema = z.strictObject({
  oidc_providers: z
    .array(oidcProviderInfoSchema)
    .describe('OpenID Connect providers, in their configured order'),
  login_with_password: z
    .boolean()
    .describe('Whether POST /api/auth/login (username and password) is enabled'),
  auth_methods: z
    .strictObject({
      totp: z
        .strictObject({
          allow_recovery: z.boolean().describe('Whether a one-time recovery code may stand in for a code'),
        })
        .optional()
        .describe('Present when users may turn on two-factor sign-in (TOTP)'),
    })
    .describe('Second factors this server offers'),
});
export type LoginOptions = z.infer<typeof loginOptionsSchema>;

/** GET /api/info: the server's version and settings clients show. */
export const serverInfoSchema = z.strictObject({
  version: z.string(),
  ansible: z.string().describe('Always empty: the server does not report an Ansible version'),
  web_host: z.string().describe('The configured address of the web console; empty when not set'),
  use_remote_runner: z
    .boolean()
    .describe('Always false: tasks run on the server itself, not on remote runners'),
  git_client: z
    .string()
    .describe("How repositories are fetched: `cmd_git`, the git command (the peer's name)"),
  schedule_timezone: z.string().describe('The time zone schedules are read in'),
  task_retention_days: z
    .number()
    .int()
    .describe(
      "Days finished tasks and their output are kept (0 = forever); a project's own setting overrides it",
    ),
  alert_channels: z
    .array(z.string())
    .describe(
      'The alert channels the server is configured for (email, telegram, slack, rocketchat, microsoft_teams, dingtalk, gotify, webhook); empty: a project with alerts on sends none',
    ),
  auth_methods: z.strictObject({}).describe('Always empty'),
  premium_features: z.strictObject({}).describe('Always empty'),
  task_sandbox: z
    .strictObject({
      mode: z
        .enum(['bwrap', 'off', 'refused'])
        .describe(
          "`bwrap`: tasks run in a bubblewrap sandbox and see only their own folder of the server's files; `off`: they run with the server's rights; `refused`: a sandbox is required but cannot run, so tasks fail",
        ),
      reason: z
        .string()
        .optional()
        .describe('Why the mode is not bwrap, when the setting did not ask for it'),
    })
    .optional()
    .describe("What this server's tasks can reach (administrators only)"),
});
export type ServerInfo = z.infer<typeof serverInfoSchema>;

/** Longest lifetime a token may be given: ten years. */
export const MAX_TOKEN_DAYS = 3650;

/**
 * What an API token may do, within its owner's rights: `read` projects and their resources, tasks and logs; `run`
 * start and stop tasks and confirm or reject plans; `write` create, change and delete project resources and
 * settings; `admin` manage users and instance-wide settings (and reach projects as an administrator). A token with
 * every scope, or none given, has its owner's full rights.
 */
export const tokenScopes = ['read', 'run', 'write', 'admin'] as const;
export type TokenScope = (typeof tokenScopes)[number];

/** Most projects one token may be limited to. */
export const MAX_TOKEN_PROJECTS = 1000;

export const apiTokenInput = z
  .object({
    name: z.string().trim().max(100).nullish(),
    /** Days until the token stops working; absent or null = it never expires. */
    expires_in_days: z.number().int().min(1).max(MAX_TOKEN_DAYS).nullish(),
    scopes: z
      .array(z.enum(tokenScopes))
      .min(1)
      .max(tokenScopes.length)
      .nullish()
      .describe(
        "What the token may do: any of read, run, write, admin (within its owner's rights); absent, null or all four = the owner's full rights",
      ),
    project_ids: z
      .array(id())
      .min(1)
      .max(MAX_TOKEN_PROJECTS)
      .nullish()
      .describe(
        'The only projects the token reaches (each one its owner can access); absent or null = every project of the owner',
      ),
  })
  .nullish();

/** An API token of the signed-in user, without the secret. */
export const apiTokenSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  created: z.string().describe('When the token was created (ISO 8601)'),
  expires: z.string().nullable().describe('When the token stops working (ISO 8601); null = never.'),
  expired: z.boolean(),
  user_id: z.number().int(),
  scopes: z
    .array(z.enum(tokenScopes))
    .describe("What the token may do within its owner's rights; all four = the owner's full rights"),
  project_ids: z
    .array(z.number().int())
    .nullable()
    .describe('The only projects the token reaches; null = every project of its owner'),
});
export type ApiToken = z.infer<typeof apiTokenSchema>;

/**
 * POST /api/user/tokens: the new token, with its secret. As in the peer's API, `id` is the token itself (its
 * clients send the answer's `id` as the bearer); `token_id` is the identifier the list shows.
 */
export const apiTokenCreatedSchema = apiTokenSchema.extend({
  id: z.string().describe('The token itself, as the peer answers; the same as `token`'),
  token_id: z.string().describe('The non-secret identifier the token list shows'),
  token: z.string().describe('The secret to send as `Authorization: Bearer <token>`; shown only this once'),
});
export type ApiTokenCreated = z.infer<typeof apiTokenCreatedSchema>;
