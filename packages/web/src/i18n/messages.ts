import type { TFunction } from 'i18next';
import { ApiError } from '../api/client';

// Field labels the contracts use in their English messages, mapped to catalogue keys.
const fieldKeys: Record<string, string> = {
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

const exact: Record<string, string> = {
  'Must be integer': 'validation.mustBeInteger',
  'Must be 0 or greater': 'validation.mustBeNonNegative',
  'Email must be a valid e-mail address': 'validation.invalidEmail',
  'Username must not contain spaces': 'validation.usernameSpaces',
  'Incorrect URL': 'validation.incorrectUrl',
  'Incorrect login or password': 'errors.incorrectLogin',
  'Current password is incorrect': 'users.currentPasswordIncorrect',
  'Max parallel tasks must be at most 10000': 'validation.maxParallelTooLarge',
  'Task retention days must be 0 or greater': 'retention.nonNegative',
  'Task retention days must be an integer': 'retention.integer',
  'You do not have permission to do this': 'errors.forbidden',
  'Not signed in': 'errors.notSignedIn',
  'Request body is not valid JSON': 'errors.invalidJson',
};

/**
 * Shows an English contract/server message in the current language when the catalogue knows it; any
 * other server text is shown as the server wrote it.
 */
export function translateMessage(message: string, t: TFunction): string {
  const key = exact[message];
  if (key) return t(key);
  let m = /^(.+) is required$/.exec(message);
  if (m && fieldKeys[m[1]]) return t('validation.required', { field: t(fieldKeys[m[1]]) });
  m = /^(.+) must be at most (\d+) characters$/.exec(message);
  if (m && fieldKeys[m[1]]) return t('validation.tooLong', { field: t(fieldKeys[m[1]]), max: Number(m[2]) });
  m = /^Task retention days must be at most (\d+)$/.exec(message);
  if (m) return t('retention.tooLarge', { max: Number(m[1]) });
  return message;
}

const generic = /^Request failed with status code/i;

/** The text to show for any failure: the server's `error`, else the client's message, never a generic one. */
export function errorText(err: unknown, t: TFunction): string {
  if (err instanceof ApiError) {
    if (err.status === 0) return t('errors.network');
    if (err.status === 401 && !err.body?.error) return err.message;
    return translateMessage(err.message, t);
  }
  const message = err instanceof Error ? err.message : String(err ?? '');
  if (!message || generic.test(message)) return t('errors.unexpected');
  return translateMessage(message, t);
}
