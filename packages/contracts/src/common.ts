import { z } from 'zod';

/** Messages shared by the server and the web forms (SPEC §5). */
export const messages = {
  required: (label: string) => `${label} is required`,
  tooLong: (label: string, max: number) => `${label} must be at most ${max} characters`,
  mustBeInteger: 'Must be integer',
  mustBeNonNegative: 'Must be 0 or greater',
  incorrectUrl: 'Incorrect URL',
  invalidJson: (label: string) => `${label} must be valid JSON`,
  enumNeedsValues: 'Enumeration must have values.',
  enumUniqueNames: 'Enumeration values must have unique names.',
  enumEmptyName: 'Value name cannot be empty.',
} as const;

/** A required, trimmed, bounded string: the message names the field as the form labels it. */
export const requiredString = (label: string, max = 255) =>
  z
    .string({ error: messages.required(label) })
    .trim()
    .min(1, messages.required(label))
    .max(max, messages.tooLong(label, max));

/** An optional string that may also be null; empty stays empty. */
export const optionalString = (label: string, max = 255) =>
  z
    .string({ error: `${label} must be a string` })
    .max(max, messages.tooLong(label, max))
    .nullish()
    .transform((v) => v ?? '');

/** A positive integer id. */
export const id = (label: string) =>
  z
    .number({ error: `${label} must be a number` })
    .int(`${label} must be an integer`)
    .positive(`${label} must be positive`)
    .max(2_147_483_647, `${label} is too large`);

/** An optional reference to another object; 0 and null mean "none". */
export const optionalId = (label: string) =>
  z
    .number({ error: `${label} must be a number` })
    .int(`${label} must be an integer`)
    .min(0, `${label} must be 0 or greater`)
    .max(2_147_483_647, `${label} is too large`)
    .nullish()
    .transform((v) => (v ? v : null));

export const flag = (label: string) =>
  z
    .boolean({ error: `${label} must be true or false` })
    .nullish()
    .transform((v) => v ?? false);

/** Text that must parse as JSON (empty text is allowed and means "{}"). */
export const jsonText = (label: string, max = 500_000) =>
  z
    .string({ error: `${label} must be a string` })
    .max(max, messages.tooLong(label, max))
    .nullish()
    .transform((v) => v ?? '')
    .refine(
      (v) => {
        if (v.trim() === '') return true;
        try {
          JSON.parse(v);
          return true;
        } catch {
          return false;
        }
      },
      { message: messages.invalidJson(label) },
    );

/** Path parameter ids arrive as strings. */
export const idParam = z.coerce
  .number({ error: 'id must be a number' })
  .int('id must be an integer')
  .positive('id must be positive')
  .max(2_147_483_647, 'id is too large');

export type ErrorBody = { error: string; fields?: Record<string, string> };

/** A list of objects that use a resource, answered by GET …/{id}/refs and by a 409 on delete. */
export const refsSchema = z.object({
  templates: z.array(z.object({ id: z.number(), name: z.string() })),
  inventories: z.array(z.object({ id: z.number(), name: z.string() })),
  repositories: z.array(z.object({ id: z.number(), name: z.string() })),
  environments: z.array(z.object({ id: z.number(), name: z.string() })),
  integrations: z.array(z.object({ id: z.number(), name: z.string() })),
  schedules: z.array(z.object({ id: z.number(), name: z.string() })),
});
export type Refs = z.infer<typeof refsSchema>;
