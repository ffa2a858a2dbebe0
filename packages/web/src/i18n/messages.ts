import { type CodedMessage, describeMessage, ErrorCode } from '@signalbox/contracts';
import type { TFunction } from 'i18next';
import { ApiError } from '../api/client';

/**
 * How the catalogue says an error code: a catalogue key (its placeholders filled from the code's params, the
 * `field` label translated), a key per field label for codes whose sentence differs by field, or `null` when the
 * code is said in the server's own words (the message, not the code, says what happened).
 */
export type CodeText =
  | string
  | { byField: Record<string, string> }
  | { byParam: string; keys: Record<string, string>; otherwise: string }
  | null;

export const codeTexts: Record<ErrorCode, CodeText> = {
  [ErrorCode.required]: 'validation.required',
  [ErrorCode.tooLong]: 'validation.tooLong',
  [ErrorCode.mustBeInteger]: 'validation.mustBeInteger',
  [ErrorCode.mustBeNonNegative]: 'validation.mustBeNonNegative',
  [ErrorCode.incorrectUrl]: 'validation.incorrectUrl',
  [ErrorCode.invalidJson]: {
    byField: {
      'Extra variables': 'environment.extraVarsInvalid',
      'Environment variables': 'environment.envVarsInvalid',
    },
  },
  [ErrorCode.notJsonObject]: {
    byField: {
      'Extra variables': 'environment.extraVarsObject',
      'Environment variables': 'environment.envVarsObject',
    },
  },
  [ErrorCode.noNul]: null,
  [ErrorCode.tooDeep]: null,
  [ErrorCode.invalidEmail]: 'validation.invalidEmail',
  [ErrorCode.usernameSpaces]: 'validation.usernameSpaces',
  [ErrorCode.maxParallelTooLarge]: 'validation.maxParallelTooLarge',
  [ErrorCode.retentionNotInteger]: 'retention.integer',
  [ErrorCode.retentionNegative]: 'retention.nonNegative',
  [ErrorCode.retentionTooLarge]: 'retention.tooLarge',
  [ErrorCode.cliArgsNotArray]: 'tpl.argsMustBeArray',
  [ErrorCode.enumNeedsValues]: 'survey.enumNeedsValues',
  [ErrorCode.enumUniqueNames]: 'survey.enumUniqueNames',
  [ErrorCode.enumEmptyName]: 'survey.enumEmptyName',
  [ErrorCode.invalidValue]: null,
  // A project's name is taken among the user's own projects, the other kinds' within their project.
  [ErrorCode.nameTaken]: {
    byParam: 'kind',
    keys: { project: 'dupNames.projectTaken' },
    otherwise: 'forms.nameTaken',
  },
  [ErrorCode.notSignedIn]: 'errors.notSignedIn',
  [ErrorCode.incorrectLogin]: 'errors.incorrectLogin',
  [ErrorCode.currentPasswordIncorrect]: 'users.currentPasswordIncorrect',
  [ErrorCode.noPermission]: 'errors.forbidden',
  // Said by what the role may not do, never by the permission's name.
  [ErrorCode.missingPermission]: {
    byParam: 'permission',
    keys: {
      runProjectTasks: 'access.denied.runProjectTasks',
      manageProjectResources: 'access.denied.manageProjectResources',
      updateProject: 'access.denied.updateProject',
      manageProjectUsers: 'access.denied.manageProjectUsers',
    },
    otherwise: 'errors.forbidden',
  },
  [ErrorCode.totpRequired]: 'totp.required',
  [ErrorCode.totpDisabled]: 'totp.disabled',
  [ErrorCode.incorrectPasscode]: 'totp.incorrectCode',
  [ErrorCode.incorrectRecoveryCode]: 'totp.incorrectRecoveryCode',
  [ErrorCode.bodyNotJson]: 'errors.invalidJson',
  [ErrorCode.bodyEmpty]: null,
  [ErrorCode.bodyTooLarge]: null,
  [ErrorCode.bodyNotObject]: null,
  [ErrorCode.unsupportedContentType]: null,
  [ErrorCode.notFound]: null,
  [ErrorCode.tooManyRequests]: null,
  [ErrorCode.databaseUnavailable]: null,
  [ErrorCode.internal]: null,
  [ErrorCode.badRequest]: null,
  [ErrorCode.unauthorized]: null,
  [ErrorCode.forbidden]: null,
  [ErrorCode.conflict]: null,
  [ErrorCode.requestFailed]: null,
};

/** Catalogue keys of the field labels the contracts put in `params.field`, as most screens name them. */
export const fieldLabels: Record<string, string> = {
  Name: 'fields.name',
  Username: 'fields.username',
  Password: 'fields.password',
  Email: 'fields.email',
  Title: 'fields.title',
  'Alert chat': 'fields.alertChat',
  Role: 'fields.role',
  User: 'fields.user',
  'Current password': 'users.currentPassword',
};

/**
 * A coded error in the current language; `fallback` (the server's English text) when the code is said in the
 * server's words, is unknown to this client, or names a field the catalogue has no label for.
 */
export function translateCode(
  coded: CodedMessage | undefined,
  fallback: string,
  t: TFunction,
  labels: Record<string, string> = fieldLabels,
): string {
  const text = coded ? codeTexts[coded.code] : undefined;
  if (!text) return fallback;
  const params = coded?.params ?? {};
  const field = typeof params.field === 'string' ? params.field : undefined;
  if (typeof text !== 'string' && 'byParam' in text) {
    const value = params[text.byParam];
    return t(
      (typeof value === 'string' && Object.hasOwn(text.keys, value) && text.keys[value]) || text.otherwise,
    );
  }
  if (typeof text !== 'string') {
    const key = field === undefined ? undefined : text.byField[field];
    return key ? t(key) : fallback;
  }
  if (field === undefined) return t(text, params);
  const label = labels[field];
  return label ? t(text, { ...params, field: t(label) }) : fallback;
}

/**
 * Shows a contract message (a form's own validation, which carries no code) in the current language when the
 * contracts recorded its code; any other text is shown as written.
 */
export function translateMessage(message: string, t: TFunction, labels?: Record<string, string>): string {
  return translateCode(describeMessage(message), message, t, labels);
}

/** The code of a server error: the one it sent, else the one the contracts recorded for its text. */
export const codeOfApiError = (err: ApiError): CodedMessage | undefined =>
  err.body?.code ? { code: err.body.code, params: err.body.params } : describeMessage(err.message);

/** The server's message for one field of a refused form, in the current language. */
export function serverFieldText(
  err: unknown,
  name: string,
  t: TFunction,
  labels?: Record<string, string>,
): string | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const message = err.body?.fields?.[name];
  if (typeof message !== 'string') return undefined;
  return translateCode(err.body?.field_errors?.[name] ?? describeMessage(message), message, t, labels);
}

const generic = /^Request failed with status code/i;

/** The text to show for any failure: the server's `error`, else the client's message, never a generic one. */
export function errorText(err: unknown, t: TFunction, labels?: Record<string, string>): string {
  if (err instanceof ApiError) {
    if (err.status === 0) return t('errors.network');
    if (err.status === 401 && !err.body?.error) return err.message;
    return translateCode(codeOfApiError(err), err.message, t, labels);
  }
  const message = err instanceof Error ? err.message : String(err ?? '');
  if (!message || generic.test(message)) return t('errors.unexpected');
  return translateMessage(message, t, labels);
}
