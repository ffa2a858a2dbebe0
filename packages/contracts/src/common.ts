import { z } from 'zod';
import { coded, ErrorCode } from './errors';

/**
 * Messages shared by the server and the web forms. Each is recorded with its error code (see errors.ts), so the
 * code of any of these texts is known wherever the text turns up.
 */
/** The kinds of objects whose names are unique within their project. */
export const namedKinds = {
  key: 'A key with this name already exists in this project',
  inventory: 'An inventory with this name already exists in this project',
  environment: 'An environment with this name already exists in this project',
  repository: 'A repository with this name already exists in this project',
  view: 'A view with this title already exists in this project',
  // Projects are named per person: two of the projects one user belongs to may not share a name.
  project: 'You already have a project with this name',
} as const;
export type NamedKind = keyof typeof namedKinds;

export const messages = {
  nameTaken: (kind: NamedKind) => coded(namedKinds[kind], ErrorCode.nameTaken, { kind }),
  required: (label: string) => coded(`${label} is required`, ErrorCode.required, { field: label }),
  tooLong: (label: string, max: number) =>
    coded(`${label} must be at most ${max} characters`, ErrorCode.tooLong, { field: label, max }),
  mustBeInteger: coded('Must be integer', ErrorCode.mustBeInteger),
  mustBeNonNegative: coded('Must be 0 or greater', ErrorCode.mustBeNonNegative),
  incorrectUrl: coded('Incorrect URL', ErrorCode.incorrectUrl),
  invalidJson: (label: string) =>
    coded(`${label} must be valid JSON`, ErrorCode.invalidJson, { field: label }),
  notJsonObject: (label: string) =>
    coded(`${label} must be a JSON object`, ErrorCode.notJsonObject, { field: label }),
  enumNeedsValues: coded('Enumeration must have values.', ErrorCode.enumNeedsValues),
  enumUniqueNames: coded('Enumeration values must have unique names.', ErrorCode.enumUniqueNames),
  enumEmptyName: coded('Value name cannot be empty.', ErrorCode.enumEmptyName),
  noNul: (label: string) =>
    coded(`${label} must not contain NUL characters`, ErrorCode.noNul, { field: label }),
  tooDeep: (label: string) =>
    coded(
      `${label} must not nest objects or arrays more than ${MAX_JSON_DEPTH} levels deep`,
      ErrorCode.tooDeep,
      { field: label, max: MAX_JSON_DEPTH },
    ),
  invalidEmail: coded('Email must be a valid e-mail address', ErrorCode.invalidEmail),
  usernameSpaces: coded('Username must not contain spaces', ErrorCode.usernameSpaces),
  maxParallelTooLarge: (max: number) =>
    coded(`Max parallel tasks must be at most ${max}`, ErrorCode.maxParallelTooLarge, { max }),
  retentionNotInteger: coded('Task retention days must be an integer', ErrorCode.retentionNotInteger),
  retentionNegative: coded('Task retention days must be 0 or greater', ErrorCode.retentionNegative),
  retentionTooLarge: (max: number) =>
    coded(`Task retention days must be at most ${max}`, ErrorCode.retentionTooLarge, { max }),
  cliArgsNotArray: coded('CLI args must be a JSON array', ErrorCode.cliArgsNotArray),
  notSignedIn: coded('Not signed in', ErrorCode.notSignedIn),
  incorrectLogin: coded('Incorrect login or password', ErrorCode.incorrectLogin),
  currentPasswordIncorrect: coded('Current password is incorrect', ErrorCode.currentPasswordIncorrect),
  noPermission: coded('You do not have permission to do this', ErrorCode.noPermission),
  missingPermission: (permission: string) =>
    coded(`You need the ${permission} permission in this project`, ErrorCode.missingPermission, {
      permission,
    }),
  notFound: (what: string) => coded(`${what} not found`, ErrorCode.notFound, { what }),
  bodyNotJson: coded('Request body is not valid JSON', ErrorCode.bodyNotJson),
  bodyEmpty: coded('Request body is empty', ErrorCode.bodyEmpty),
  bodyTooLarge: coded('Request body is too large', ErrorCode.bodyTooLarge),
  bodyNotObject: coded('Request body must be a JSON object', ErrorCode.bodyNotObject),
  unsupportedContentType: coded('Unsupported content type', ErrorCode.unsupportedContentType),
  tooManyRequests: (seconds: number) =>
    coded(
      `Too many requests: try again in ${seconds} second${seconds === 1 ? '' : 's'}`,
      ErrorCode.tooManyRequests,
      { seconds },
    ),
  databaseUnavailable: coded('Database unavailable, try again', ErrorCode.databaseUnavailable),
  internal: coded('Internal server error', ErrorCode.internal),
} as const;

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

/** A number a form must fill: missing says "required", another type "must be a number". */
export const requiredNumber = (label: string) =>
  z.number({
    error: (issue) =>
      issue.input === undefined || issue.input === null
        ? messages.required(label)
        : `${label} must be a number`,
  });

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
    )
    .refine((v) => jsonDepth(v) <= MAX_JSON_DEPTH, { message: messages.tooDeep(label) });

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
  z
    .number({ error: 'id must be a number' })
    .int('id must be an integer')
    .positive('id must be positive')
    .max(2_147_483_647, 'id is too large'),
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
