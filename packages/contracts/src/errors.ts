import { z } from 'zod';

/**
 * Stable error codes. Every error response carries one beside its English message (`{ error, code, params? }`),
 * and each field message of a 400 carries one too (`field_errors`), so clients branch and translate on the code,
 * never on the wording. `params` holds the values a message embeds (a field's label, a limit).
 */
export const ErrorCode = {
  // A field's value
  required: 'required',
  tooLong: 'too_long',
  mustBeInteger: 'must_be_integer',
  mustBeNonNegative: 'must_be_non_negative',
  incorrectUrl: 'incorrect_url',
  invalidJson: 'invalid_json',
  notJsonObject: 'not_json_object',
  noNul: 'no_nul',
  tooDeep: 'too_deep',
  invalidEmail: 'invalid_email',
  usernameSpaces: 'username_spaces',
  maxParallelTooLarge: 'max_parallel_too_large',
  retentionNotInteger: 'retention_not_integer',
  retentionNegative: 'retention_negative',
  retentionTooLarge: 'retention_too_large',
  cliArgsNotArray: 'cli_args_not_array',
  enumNeedsValues: 'enum_needs_values',
  enumUniqueNames: 'enum_unique_names',
  enumEmptyName: 'enum_empty_name',
  /** The name is already used by another object of the same kind in the same scope. */
  nameTaken: 'name_taken',
  /** A field's value is refused for a reason that has no code of its own: the message says why. */
  invalidValue: 'invalid_value',
  // Signing in and permissions
  notSignedIn: 'not_signed_in',
  incorrectLogin: 'incorrect_login',
  currentPasswordIncorrect: 'current_password_incorrect',
  noPermission: 'no_permission',
  /** The caller's project role lacks the permission bit a route needs; `params.permission` names the bit. */
  missingPermission: 'missing_permission',
  // Two-factor sign-in (TOTP)
  totpRequired: 'totp_required',
  totpDisabled: 'totp_disabled',
  incorrectPasscode: 'incorrect_passcode',
  incorrectRecoveryCode: 'incorrect_recovery_code',
  // The request itself
  bodyNotJson: 'body_not_json',
  bodyEmpty: 'body_empty',
  bodyTooLarge: 'body_too_large',
  bodyNotObject: 'body_not_object',
  unsupportedContentType: 'unsupported_content_type',
  notFound: 'not_found',
  /** The caller sent more requests than the server's request limit allows; `params.seconds` says how long to wait. */
  tooManyRequests: 'too_many_requests',
  // The server
  databaseUnavailable: 'database_unavailable',
  internal: 'internal',
  // One per status, for messages that have no code of their own: the message says what happened.
  badRequest: 'bad_request',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  conflict: 'conflict',
  requestFailed: 'request_failed',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
export const errorCodes: readonly ErrorCode[] = Object.values(ErrorCode);

/** The values an error message embeds: a field's label (as the form shows it in English), a limit. */
export type ErrorParams = Record<string, string | number>;
export type CodedMessage = { code: ErrorCode; params?: ErrorParams };

const errorParams = z.record(z.string(), z.union([z.string(), z.number()]));
const codedMessage = z.object({ code: z.enum(ErrorCode), params: errorParams.optional() });

/**
 * The body of every error response: the English message, its stable code and the values it embeds, and for a
 * refused field (400) each field's message and code, and the request's id. Documents the 4xx responses of the API description.
 */
export const errorResponse = z.object({
  error: z.string(),
  code: z.enum(ErrorCode).optional(),
  params: errorParams.optional(),
  fields: z.record(z.string(), z.string()).optional(),
  field_errors: z.record(z.string(), codedMessage).optional(),
  /** The id of the request (also its X-Request-Id response header), naming its lines in the server log. */
  request_id: z.string().optional(),
});
export type ErrorBody = z.output<typeof errorResponse>;

// Every message the contracts write, with its code: filled as the message builders run (schemas call them when
// built), so an English message met later (a zod issue, a service's AppError) is described without parsing it.
const known = new Map<string, CodedMessage>();
// Labels are written in code, so the distinct messages are few; the bound only guards against a caller that builds
// messages from input.
const MAX_KNOWN = 5_000;

/** Records `message` as the English text of `code` with `params`, and returns it unchanged. */
export function coded(message: string, code: ErrorCode, params?: ErrorParams): string {
  if (!known.has(message) && known.size < MAX_KNOWN) known.set(message, params ? { code, params } : { code });
  return message;
}

/** The code (and parameters) of a message the contracts wrote; undefined for any other text. */
export function describeMessage(message: string): CodedMessage | undefined {
  return known.get(message);
}
