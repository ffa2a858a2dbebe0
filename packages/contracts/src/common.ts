import { z } from 'zod';
import { issue } from './errors';

/**
 * Where the first U+0000 sits in a value: the path (keys and array indexes) of the first string, or object key,
 * that contains one; null when there is none. Databases refuse NUL in text (PostgreSQL fails the whole query),
 * so every input is checked before use. Walks own enumerable keys of every object (raw bytes are skipped) without
 * recursion, so any nesting depth is safe.
 */
export function findNulCharacter(value: unknown): (string | number)[] | null {
  /** A value to look at, and where it was found: the key or index in its parent (none for the value itself). */
  type Step = { value: unknown; from?: { key: string | number; parent: Step } };
  const pathOf = (step: Step, last?: string): (string | number)[] => {
    const path: (string | number)[] = last === undefined ? [] : [last];
    for (let from = step.from; from; from = from.parent.from) path.push(from.key);
    return path.reverse();
  };
  const stack: Step[] = [{ value }];
  const seen = new WeakSet<object>();
  for (let step = stack.pop(); step; step = stack.pop()) {
    const v = step.value;
    if (typeof v === 'string') {
      if (v.includes('\0')) return pathOf(step);
      continue;
    }
    if (v === null || typeof v !== 'object' || seen.has(v)) continue;
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], from: { key: i, parent: step } });
    } else if (!ArrayBuffer.isView(v)) {
      for (const key of Object.keys(v).reverse()) {
        if (key.includes('\0')) return pathOf(step, key);
        stack.push({ value: (v as Record<string, unknown>)[key], from: { key, parent: step } });
      }
    }
  }
  return null;
}

/**
 * A required, trimmed, bounded string. Schemas give no wording of their own: a refused value's code comes from the
 * kind of check that failed (see `codeOfIssue`), and its field from the issue's path.
 */
export const requiredString = (max = 255) => z.string().trim().min(1).max(max);

/** An optional string that may also be null; empty stays empty. */
export const optionalString = (max = 255) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => v ?? '');

/** A positive integer id. */
export const id = () => z.number().int().positive().max(2_147_483_647);

/** A number a form must fill: missing says "required", another type "must be a number". */
export const requiredNumber = () => z.number();

/** An optional reference to another object; 0 and null mean "none". */
export const optionalId = () =>
  z
    .number()
    .int()
    .min(0)
    .max(2_147_483_647)
    .nullish()
    .transform((v) => (v ? v : null));

export const flag = () =>
  z
    .boolean()
    .nullish()
    .transform((v) => v ?? false);

/** Text that must parse as JSON (empty text is allowed and means "{}"). */
export const jsonText = (max = 500_000) =>
  z
    .string()
    .max(max)
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
      { message: issue('invalid_json') },
    )
    .refine((v) => jsonDepth(v) <= MAX_JSON_DEPTH, { message: issue('too_deep', { max: MAX_JSON_DEPTH }) });

/**
 * How deep JSON may nest objects and arrays, in request bodies and in JSON text fields: deeper values are refused,
 * so no later recursive walk (JSON.stringify overflows the stack near 10,000 levels) meets them.
 */
export const MAX_JSON_DEPTH = 64;

/** The deepest nesting of objects and arrays in JSON text, counted without parsing (brackets in strings skipped). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') {
      depth++;
      if (depth > max) max = depth;
    } else if (ch === '}' || ch === ']') depth--;
  }
  return max;
}

/**
 * Path parameter ids arrive as strings: only plain decimal numbers count (Number() would also read "0x1", "1e3",
 * " 1" or "" as ids).
 */
export const idParam = z.preprocess(
  (v) => (typeof v === 'string' ? (/^-?\d+(\.\d+)?$/.test(v) ? Number(v) : Number.NaN) : v),
  z.number().int().positive().max(2_147_483_647),
);

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

/** The refs of an object nothing uses. */
export const noRefs = (): Refs => ({
  templates: [],
  inventories: [],
  repositories: [],
  environments: [],
  integrations: [],
  schedules: [],
});

/**
 * The documented answer of a route that has nothing to return (204 and the like): JSON Schema `type: 'null'`, which
 * the API description shows as a response without a body.
 */
export const noContent = z.null().describe('Done; the response has no body.');

/**
 * `before`, the keyset cursor of a list newest first: only the rows whose id is below it (a full page's Link header
 * names the next page with it). Paged by `offset` or by `before`, never both (notOffsetAndBefore).
 */
export const beforeCursor = (rows: string) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .describe(`Only ${rows} whose id is below this one: the keyset cursor of the next page (Link header).`);
export const notOffsetAndBefore = (q: { offset?: number; before?: number }) =>
  q.offset === undefined || q.before === undefined;
export const offsetAndBeforeIssue: { message: string; path: PropertyKey[] } = {
  message: issue('offset_and_before'),
  path: ['before'],
};
