import { type CodedMessage, codeOfIssue, isErrorCode, issueOf, readIssue } from '@signalbox/contracts';
import type { TFunction } from 'i18next';
import { z } from 'zod';
import { ApiError } from '../api/client';

/**
 * Every error is said from its code and params, in the current language: `errorCode.<code>` of the catalogue,
 * `{{field}}` worded by the field's KEY (`fieldName.<key>`), `{{what}}` by the kind of thing (`errorThing.<kind>`).
 * No English text or label is looked at: a server code this client does not know yet shows the server's own text.
 */

/** A role's missing permission is said by what the role may not do (`access.denied.*`), never by the bit's name. */
const deniedByPermission: Record<string, string> = {
  runProjectTasks: 'access.denied.runProjectTasks',
  manageProjectResources: 'access.denied.manageProjectResources',
  updateProject: 'access.denied.updateProject',
  manageProjectUsers: 'access.denied.manageProjectUsers',
};

/**
 * The name of a request field in the current language, by its key (a nested one by its last name); an unknown key
 * is shown as it is.
 */
export function fieldText(key: string, t: TFunction): string {
  const leaf = key.split('.').findLast((part) => part !== '' && !/^\d+$/.test(part)) ?? key;
  return t(`fieldName.${leaf}`, { defaultValue: leaf });
}

/**
 * A coded error in the current language. `field` names the field when the error itself does not (a form's own
 * check knows which field it is under); a field the error names wins. `label` is the field's name as the form
 * shows it, when that differs from the key's (a Bash template's playbook is its script).
 */
export function translateCode(coded: CodedMessage, t: TFunction, field?: string, label?: string): string {
  if (coded.code === 'missing_permission') {
    const key = deniedByPermission[String(coded.params?.permission)];
    if (key) return t(key);
  }
  const params: Record<string, string | number> = { ...(coded.params ?? {}) };
  params.field = label ?? fieldText(String(params.field ?? field ?? 'value'), t);
  if (params.what !== undefined) {
    const thing = t(`errorThing.${params.what}`, { defaultValue: String(params.what) });
    // Where the language writes common nouns in lower case, a thing named inside a sentence is one.
    const inside = !t(`errorCode.${coded.code}`, { skipInterpolation: true }).startsWith('{{what}}');
    params.what = inside && t('errorThing.lowercase') === 'true' ? thing.toLowerCase() : thing;
  }
  return t(`errorCode.${coded.code}`, params);
}

/**
 * A form's own message in the current language: a contract schema's issue carries its code (see `issue` in the
 * contracts); any other message was written by the form itself, already translated, and is shown as it is.
 */
export function translateMessage(message: string, t: TFunction, field?: string, label?: string): string {
  const coded = readIssue(message);
  return coded ? translateCode(coded, t, field, label) : message;
}

/** The coded error of a server answer; undefined when it carries no code this client knows. */
export const codeOfApiError = (err: ApiError): CodedMessage | undefined =>
  isErrorCode(err.body?.code) ? { code: err.body.code, params: err.body.params } : undefined;

/** The server's error for one field of a refused form, in the current language. */
export function serverFieldText(
  err: unknown,
  name: string,
  t: TFunction,
  label?: string,
): string | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const coded = err.body?.field_errors?.[name];
  if (coded && isErrorCode(coded.code)) return translateCode(coded, t, name, label);
  const message = err.body?.fields?.[name];
  return typeof message === 'string' ? message : undefined;
}

const generic = /^Request failed with status code/i;

/** The text to show for any failure: the server's error by its code, else the client's message, never a generic one. */
export function errorText(err: unknown, t: TFunction): string {
  if (err instanceof ApiError) {
    if (err.status === 0) return t('errors.network');
    const coded = codeOfApiError(err);
    return coded ? translateCode(coded, t) : err.message;
  }
  const message = err instanceof Error ? err.message : String(err ?? '');
  if (!message || generic.test(message)) return t('errors.unexpected');
  return translateMessage(message, t);
}

/**
 * Makes every zod issue a form meets carry its code (the contracts' schemas give no wording of their own), so
 * react-hook-form's message is the code the form then says in the current language.
 */
export function codeZodIssues() {
  z.config({ customError: (issue) => issueOf(codeOfIssue(issue as Parameters<typeof codeOfIssue>[0])) });
}
