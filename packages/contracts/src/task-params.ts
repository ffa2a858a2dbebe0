import { z } from 'zod';
import { jsonText, optionalId, optionalString } from './common';
import { issue } from './errors';
import { optionalBranch } from './repositories';

/**
 * Default task parameters: what an integration or a schedule passes to every task it starts (Semaphore's
 * `TaskPrams`): extra variables, a message, a branch, an inventory, CLI arguments and app parameters.
 */

/**
 * The default task parameters as the API answers them. Only the parameters given are stored; a restored backup
 * keeps any other keys its integration or schedule carried, so more may appear.
 */
export const defaultTaskParamsSchema = z.looseObject({
  environment: z
    .string()
    .optional()
    .describe('Extra variables as JSON object text; for an integration its keys win over extracted values.'),
  message: z.string().optional(),
  git_branch: z.string().optional(),
  inventory_id: z.number().nullable().optional(),
  arguments: z.string().optional().describe('CLI arguments as JSON array text.'),
  params: z.record(z.string(), z.unknown()).optional(),
});
export type DefaultTaskParams = z.infer<typeof defaultTaskParamsSchema>;

/** Parses JSON text; undefined when it is not JSON (jsonText reports that case itself). */
const tryJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

const jsonArrayText = () =>
  jsonText(100_000).refine(
    (v) => {
      const parsed = tryJson(v);
      return v.trim() === '' || parsed === undefined || Array.isArray(parsed);
    },
    { message: issue('not_json_array') },
  );

const jsonObjectText = () =>
  jsonText(100_000).refine(
    (v) => {
      const parsed = tryJson(v);
      return (
        v.trim() === '' ||
        parsed === undefined ||
        (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      );
    },
    { message: issue('not_json_object') },
  );

/** The default task parameters a write sends (absent or null: none). */
export const defaultTaskParamsInput = z
  .object({
    environment: jsonObjectText(),
    message: optionalString(250),
    git_branch: optionalBranch(),
    inventory_id: optionalId(),
    arguments: jsonArrayText(),
    params: z
      .record(z.string().max(100), z.unknown())
      .refine((v) => JSON.stringify(v).length <= 100_000, issue('too_big_json'))
      .nullish()
      .transform((v) => v ?? {}),
  })
  .nullish()
  .transform((v) => v ?? null);
export type DefaultTaskParamsInput = z.infer<typeof defaultTaskParamsInput>;
