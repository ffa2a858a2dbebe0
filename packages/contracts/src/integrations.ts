import { z } from 'zod';
import { flag, optionalId, optionalString, requiredString } from './common';
import { issue } from './errors';
import { defaultTaskParamsInput, defaultTaskParamsSchema } from './task-params';

/** Integrations: incoming webhooks that start a template's task. */

export const integrationAuthMethods = ['', 'github', 'token', 'hmac'] as const;
export type IntegrationAuthMethod = (typeof integrationAuthMethods)[number];
export const matchTypes = ['body', 'header'] as const;
export type MatchType = (typeof matchTypes)[number];
export const bodyDataTypes = ['json', 'string'] as const;
export type BodyDataType = (typeof bodyDataTypes)[number];
export const matchMethods = ['equals', 'unequals', 'contains'] as const;
export type MatchMethod = (typeof matchMethods)[number];
export const valueSources = ['body', 'header'] as const;
export type ValueSource = (typeof valueSources)[number];
export const variableTypes = ['environment', 'task'] as const;
export type VariableType = (typeof variableTypes)[number];

/** An incoming webhook that starts its template's task. */
export const integrationSchema = z.strictObject({
  id: z.number(),
  project_id: z.number(),
  name: z.string(),
  template_id: z.number().describe('The template whose task it starts; 0 when it starts a workflow.'),
  workflow_id: z
    .number()
    .nullable()
    .describe(
      'The workflow it starts a run of instead of a task; extracted values of type environment answer its survey. Null: it starts its template.',
    ),
  auth_method: z
    .enum(integrationAuthMethods)
    .describe('How a request proves its sender; empty means no check.'),
  auth_header: z.string().describe('The header holding the token or signature (token and hmac only).'),
  auth_secret_id: z.number().nullable().describe('The login/password key whose password is the secret.'),
  searchable: z.boolean(),
  task_params: defaultTaskParamsSchema.describe(
    'Default parameters of every task it starts: only those given are stored (a restored backup may add others).',
  ),
});
export type Integration = z.infer<typeof integrationSchema>;

/** A path segment of /api/integrations/{alias}: of one integration, or of the whole project. */
export const integrationAliasSchema = z.strictObject({
  id: z.number(),
  project_id: z.number(),
  integration_id: z
    .number()
    .nullable()
    .describe("Null for a project-level alias, which tries every integration's matchers."),
  alias: z.string(),
  url: z.string().describe('The full address to give the sender: `<web root>/api/integrations/<alias>`.'),
});
export type IntegrationAlias = z.infer<typeof integrationAliasSchema>;

const keyDescription = 'A header name, or a dotted path into a JSON body (a string body is read whole).';

/** A condition a request must meet for a project-level alias to start the integration's task. */
export const integrationMatcherSchema = z.strictObject({
  id: z.number(),
  integration_id: z.number(),
  name: z.string(),
  match_type: z.enum(matchTypes),
  body_data_type: z.enum(bodyDataTypes),
  key: z.string().describe(keyDescription),
  method: z.enum(matchMethods),
  value: z.string(),
});
export type IntegrationMatcher = z.infer<typeof integrationMatcherSchema>;

/** A value taken from each request into the started task's environment or params. */
export const integrationExtractValueSchema = z.strictObject({
  id: z.number(),
  integration_id: z.number(),
  name: z.string(),
  value_source: z.enum(valueSources),
  body_data_type: z.enum(bodyDataTypes),
  key: z.string().describe(keyDescription),
  variable: z.string().describe('The environment variable or task param the value is written to.'),
  variable_type: z.enum(variableTypes),
});
export type IntegrationExtractValue = z.infer<typeof integrationExtractValueSchema>;

/** A required choice from a fixed list; the message names the field as the form labels it. */
const choice = <const T extends readonly string[]>(values: T) =>
  z
    .string()
    .trim()
    .min(1)
    .refine((v) => (values as readonly string[]).includes(v), {
      message: issue('not_one_of', { options: values.join(', ') }),
    })
    .transform((v) => v as T[number]);

/** HTTP header names are tokens (RFC 9110); anything else could never arrive. */
const headerName = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

export const integrationInput = z
  .object({
    name: requiredString(255),
    /** Required unless the integration starts a workflow (workflow_id). */
    template_id: z
      .number()
      .int()
      .min(0)
      .max(2_147_483_647)
      .nullish()
      .transform((v) => v ?? 0),
    workflow_id: optionalId(),
    auth_method: z
      .string()
      .trim()
      .nullish()
      .transform((v) => (v === 'none' || !v ? '' : v))
      .refine((v) => (integrationAuthMethods as readonly string[]).includes(v), {
        message: issue('not_one_of', { options: 'none, github, token, hmac' }),
      })
      .transform((v) => v as IntegrationAuthMethod),
    auth_secret_id: optionalId(),
    auth_header: optionalString(255).transform((v) => v.trim()),
    searchable: flag(),
    task_params: defaultTaskParamsInput,
    /** Semaphore's request calls the default task parameters `params`. */
    params: defaultTaskParamsInput,
    project_id: z.unknown().optional(),
    id: z.unknown().optional(),
  })
  .superRefine((v, ctx) => {
    if (!v.workflow_id && !v.template_id)
      ctx.addIssue({ code: 'custom', path: ['template_id'], message: issue('required') });
    if (v.workflow_id && v.template_id)
      ctx.addIssue({ code: 'custom', path: ['workflow_id'], message: issue('template_or_workflow') });
    if (v.auth_method && !v.auth_secret_id)
      ctx.addIssue({ code: 'custom', path: ['auth_secret_id'], message: issue('required') });
    if (v.auth_method === 'token' || v.auth_method === 'hmac') {
      if (!v.auth_header) ctx.addIssue({ code: 'custom', path: ['auth_header'], message: issue('required') });
      else if (!headerName.test(v.auth_header))
        ctx.addIssue({
          code: 'custom',
          path: ['auth_header'],
          message: issue('header_name'),
        });
    }
  })
  .transform(({ params, project_id: _p, id: _i, ...rest }) => ({
    ...rest,
    // Without a method there is nothing to check, so a leftover secret or header is dropped.
    auth_secret_id: rest.auth_method ? rest.auth_secret_id : null,
    auth_header: rest.auth_method === 'token' || rest.auth_method === 'hmac' ? rest.auth_header : '',
    task_params: rest.task_params ?? params ?? null,
  }));
export type IntegrationInput = z.infer<typeof integrationInput>;

export const integrationMatcherInput = z.object({
  name: requiredString(255),
  match_type: choice(matchTypes),
  body_data_type: choice(bodyDataTypes),
  key: requiredString(255),
  method: choice(matchMethods),
  value: requiredString(1000),
  integration_id: optionalId(),
  id: z.unknown().optional(),
});
export type IntegrationMatcherInput = z.infer<typeof integrationMatcherInput>;

export const integrationExtractValueInput = z.object({
  name: requiredString(255),
  value_source: choice(valueSources),
  body_data_type: choice(bodyDataTypes),
  key: requiredString(255),
  variable: requiredString(255),
  variable_type: z
    .string()
    .trim()
    .nullish()
    .transform((v) => v || 'environment')
    .refine((v) => (variableTypes as readonly string[]).includes(v), {
      message: issue('not_one_of', { options: 'environment, task' }),
    })
    .transform((v) => v as VariableType),
  integration_id: optionalId(),
  id: z.unknown().optional(),
});
export type IntegrationExtractValueInput = z.infer<typeof integrationExtractValueInput>;
