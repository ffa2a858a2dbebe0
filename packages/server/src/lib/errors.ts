import {
  type Coded,
  type CodedMessage,
  coded,
  codeOfIssue,
  type ErrorParams,
  errorMessage,
  errorTexts,
  findNulCharacter,
  type Thing,
} from '@signalbox/contracts';
import type { ZodError, ZodType, z } from 'zod';

/** A refused field's error: its code and params (`field` is filled from the field's key when the code names it). */
export type FieldError = Coded | CodedMessage;

/** The field errors of a 400, by the request's field keys, each with `params.field` naming its key. */
function withFieldKeys(fields: Record<string, FieldError>): Record<string, CodedMessage> {
  return Object.fromEntries(
    Object.entries(fields).map(([key, error]) => {
      const params: ErrorParams = { ...(error.params ?? {}) };
      if (params.field === undefined && errorTexts[error.code].includes('{{field}}'))
        params.field = key.split('.').findLast((part) => !/^\d+$/.test(part)) ?? key;
      return [key, Object.keys(params).length ? { code: error.code, params } : { code: error.code }];
    }),
  );
}

/** The start of every error response: the English wording, the code and the values it embeds. */
export const errorBody = (error: Coded | CodedMessage) => ({
  error: errorMessage(error),
  code: error.code,
  ...(error.params ? { params: error.params } : {}),
});

/**
 * The one error type services throw: a status and an error by code (its params typed by the code's wording), and
 * for a refused request the error of each field by the request's field key. The English `message` (and each
 * field's) is worded from the catalogue in the contracts, for clients that read text.
 */
export class AppError extends Error {
  readonly code: CodedMessage['code'];
  readonly params?: ErrorParams;
  readonly fieldErrors?: Record<string, CodedMessage>;
  constructor(
    readonly statusCode: number,
    error: Coded | CodedMessage,
    fields?: Record<string, FieldError>,
    readonly body?: Record<string, unknown>,
  ) {
    super(errorMessage(error));
    this.code = error.code;
    if (error.params) this.params = error.params;
    if (fields) this.fieldErrors = withFieldKeys(fields);
  }

  /** Each refused field's English message, by field key (`fields` of the response). */
  get fields(): Record<string, string> | undefined {
    if (!this.fieldErrors) return undefined;
    return Object.fromEntries(Object.entries(this.fieldErrors).map(([k, e]) => [k, errorMessage(e)]));
  }
}

/**
 * A 400 about one field: the error is the response's own and that field's. `field` is the request's key (a dotted
 * path for a nested one).
 */
export const fieldError = (field: string, error: Coded, status = 400) => {
  const [one] = Object.values(withFieldKeys({ [field]: error })) as [CodedMessage];
  return new AppError(status, one, { [field]: one });
};

export const badRequest = (error: Coded, fields?: Record<string, FieldError>) =>
  new AppError(400, error, fields);
export const unauthorized = (error: Coded = coded('not_signed_in')) => new AppError(401, error);
export const forbidden = (error: Coded = coded('no_permission')) => new AppError(403, error);
export const notFound = (what: Thing) => new AppError(404, coded('not_found', { what }));
export const conflict = (error: Coded, body?: Record<string, unknown>) =>
  new AppError(409, error, undefined, body);

/**
 * A zod failure as a 400: each field's error coded from its issue, the first issue's error as the response's.
 * `prefix` names the value a bare schema parsed (a path parameter).
 */
export function fromZod(error: ZodError, prefix: PropertyKey[] = []): AppError {
  const fields: Record<string, CodedMessage> = {};
  const issues = error.issues.map((issue) => ({ ...issue, path: [...prefix, ...issue.path] }));
  for (const issue of issues) {
    const key = issue.path.join('.') || '_';
    if (!(key in fields)) fields[key] = codeOfIssue(issue);
  }
  const first = issues[0];
  // An absent or non-object body is a body that is not an object, whatever the schema's first check was.
  const main: CodedMessage = !first
    ? { code: 'body_not_object' }
    : first.path.length === 0 && first.code === 'invalid_type'
      ? { code: 'body_not_object' }
      : (fields[first.path.join('.') || '_'] as CodedMessage);
  return new AppError(400, main, fields);
}

/**
 * Refuses a value holding U+0000 anywhere (strings and object keys, at any depth) with a 400 naming the field;
 * `field` names the value itself when the NUL is in a bare string.
 */
export function rejectNul(input: unknown, field = 'body') {
  const path = findNulCharacter(input);
  if (!path) return;
  // A NUL in a key is shown as \0, never sent back as the character itself.
  const key = path.length ? path.join('.').replaceAll('\0', '\\0') : field;
  // The wording names the field by its own (last) name; `fields` keeps the whole path.
  const leaf = path.length ? String(path.findLast((part) => typeof part === 'string') ?? key) : field;
  const error = { code: 'no_nul', params: { field: leaf.replaceAll('\0', '\\0') } } as const;
  throw new AppError(400, error, { [path.length ? key : '_']: error });
}

/** Parses input with a contract schema; a failure becomes a 400 naming the field. */
export function parse<T extends ZodType>(schema: T, input: unknown): z.output<T> {
  rejectNul(input, 'value');
  // The input of each issue tells a missing value from one of the wrong type; it is never sent back.
  const result = schema.safeParse(input, { reportInput: true });
  if (!result.success) throw fromZod(result.error);
  return result.data;
}

/** A row that must exist, read back after a write or looked up again: one deleted in between is a 404 naming it. */
export function found<T>(row: T | null | undefined, what: Thing): T {
  if (row == null) throw notFound(what);
  return row;
}
