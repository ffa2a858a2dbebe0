import type { TFunction } from 'i18next';
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../../../api/client';
import { errorText, translateMessage } from '../../../i18n/messages';

/** Field labels used by the contracts, mapped to catalogue keys of resources/<lang>.json. */
const labels: Record<string, string> = {
  Name: 'res.name',
  Title: 'res.title',
  Type: 'res.type',
  Template: 'res.template',
  Cron: 'schedule.cron',
  'Playbook filename': 'tpl.playbook',
  Repository: 'res.repository',
  Environment: 'res.environment',
  Inventory: 'res.inventory',
  'Start version': 'tpl.startVersion',
  'Build template': 'tpl.buildTemplate',
  'User credentials': 'inventory.userCredentials',
  Path: 'inventory.path',
  'Workspace name': 'inventory.workspaceName',
  Password: 'keyStore.password',
  'Private key': 'keyStore.privateKey',
  URL: 'repos.url',
  Branch: 'repos.branch',
  'Access key': 'repos.accessKey',
  'Auth secret': 'integrations.authSecret',
  'Auth header': 'integrations.authHeader',
  'Match source': 'integrations.matchType',
  'Body data format': 'integrations.bodyDataFormat',
  'Body data type': 'integrations.bodyDataType',
  Key: 'integrations.key',
  'Comparison method': 'integrations.method',
  Value: 'integrations.value',
  'Value source': 'integrations.valueSource',
  Variable: 'integrations.variable',
  'Build version': 'run.buildVersion',
  'Secret name': 'environment.secretName',
};

const exact: Record<string, string> = {
  'Enumeration must have values.': 'survey.enumNeedsValues',
  'Enumeration values must have unique names.': 'survey.enumUniqueNames',
  'Value name cannot be empty.': 'survey.enumEmptyName',
  'CLI args must be a JSON array': 'tpl.argsMustBeArray',
  'Incorrect URL': 'validation.incorrectUrl',
  'Must be integer': 'validation.mustBeInteger',
  'Extra variables must be valid JSON': 'environment.extraVarsInvalid',
  'Environment variables must be valid JSON': 'environment.envVarsInvalid',
  'Extra variables must be a JSON object': 'environment.extraVarsObject',
  'Environment variables must be a JSON object': 'environment.envVarsObject',
};

/** Translates an English contract or server message of the resource screens; unknown text stays as written. */
export function translateResourceMessage(message: string, t: TFunction): string {
  const key = exact[message];
  if (key) return t(key);
  const required = /^(.+) is required$/.exec(message);
  if (required && labels[required[1]]) return t('validation.required', { field: t(labels[required[1]]) });
  const long = /^(.+) must be at most (\d+) characters$/.exec(message);
  if (long && labels[long[1]])
    return t('validation.tooLong', { field: t(labels[long[1]]), max: Number(long[2]) });
  return translateMessage(message, t);
}

/** The text to show for any failure on these screens. */
export function resourceErrorText(err: unknown, t: TFunction): string {
  if (err instanceof ApiError && err.status > 0) return translateResourceMessage(err.message, t);
  return errorText(err, t);
}

type FieldErr = { message?: string } | undefined;

/** TextField props for a field: the form's own error, else the server's `fields[name]`, translated. */
export function useFieldProps() {
  const { t } = useTranslation();
  return useCallback(
    (error: FieldErr, serverError?: unknown, name?: string) => {
      const server =
        serverError instanceof ApiError && name
          ? (serverError.body?.fields?.[name] as string | undefined)
          : undefined;
      const message = error?.message ?? server;
      return message ? { error: true, helperText: translateResourceMessage(message, t) } : {};
    },
    [t],
  );
}
