import { z } from 'zod';
import { jsonDepth, MAX_JSON_DEPTH, optionalId, requiredString } from './common';
import { issue } from './errors';
import { SECRET_MAX } from './keys';

export const environmentSecretTypes = ['var', 'env'] as const;
export type EnvironmentSecretType = (typeof environmentSecretTypes)[number];

/** A secret of an environment as the API answers it: never its value. */
export const environmentSecretSchema = z.strictObject({
  id: z.int(),
  name: z.string(),
  type: z
    .enum(environmentSecretTypes)
    .describe('var: passed as an extra variable; env: set as an environment variable.'),
});
export type EnvironmentSecret = z.infer<typeof environmentSecretSchema>;

/** An environment (variable group) as the API answers it; its secrets are listed without their values. */
export const environmentSchema = z.strictObject({
  id: z.int(),
  name: z.string(),
  project_id: z.int(),
  json: z.string().describe('Extra variables: JSON text of an object.'),
  env: z.string().describe('Environment variables: JSON text of a name-to-value object.'),
  secrets: z.array(environmentSecretSchema),
});
export type Environment = z.infer<typeof environmentSchema>;

export const ENVIRONMENT_JSON_MAX = 500_000;

/** JSON text of an object; empty text means "{}". */
const jsonObjectText = () =>
  z
    .string()
    .max(ENVIRONMENT_JSON_MAX)
    .nullish()
    .transform((v, ctx) => {
      const text = (v ?? '').trim();
      if (text === '') return '{}';
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        ctx.addIssue({ code: 'custom', message: issue('invalid_json') });
        return z.NEVER;
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        ctx.addIssue({ code: 'custom', message: issue('not_json_object') });
        return z.NEVER;
      }
      if (jsonDepth(text) > MAX_JSON_DEPTH) {
        ctx.addIssue({ code: 'custom', message: issue('too_deep', { max: MAX_JSON_DEPTH }) });
        return z.NEVER;
      }
      return text;
    });

export const environmentSecretInput = z
  .object({
    id: optionalId(),
    type: z.enum(environmentSecretTypes),
    name: z
      .string()
      .trim()
      .max(255)
      .nullish()
      .transform((v) => v ?? ''),
    secret: z
      .string()
      .max(SECRET_MAX)
      .nullish()
      .transform((v) => v ?? ''),
    operation: z.enum(['create', 'update', 'delete']),
  })
  .superRefine((input, ctx) => {
    if (input.operation !== 'delete' && input.name === '')
      ctx.addIssue({ code: 'custom', message: issue('required'), path: ['name'] });
    if (input.operation !== 'create' && !input.id)
      ctx.addIssue({ code: 'custom', message: issue('required'), path: ['id'] });
  });
export type EnvironmentSecretInput = z.output<typeof environmentSecretInput>;

export const environmentInput = z.object({
  id: optionalId(),
  project_id: optionalId(),
  name: requiredString(255),
  json: jsonObjectText(),
  env: jsonObjectText(),
  secrets: z
    .array(environmentSecretInput)
    .max(500)
    .nullish()
    .transform((v) => v ?? []),
});
export type EnvironmentInput = z.output<typeof environmentInput>;
