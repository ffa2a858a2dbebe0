import type { TFunction } from 'i18next';
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { errorText, fieldLabels, serverFieldText, translateMessage } from '../i18n/messages';

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
  'Run at': 'schedule.runAt',
  'Secret source': 'keyStore.source',
  'Environment variable': 'keyStore.sourceEnv',
  'File path': 'keyStore.sourceFile',
};

/** The labels of the resource screens, then those the rest of the console uses. */
export const resourceLabels: Record<string, string> = { ...fieldLabels, ...labels };

/** Translates a contract message of the resource screens by its code; unknown text stays as written. */
export function translateResourceMessage(message: string, t: TFunction): string {
  return translateMessage(message, t, resourceLabels);
}

/** The text to show for any failure on these screens. */
export function resourceErrorText(err: unknown, t: TFunction): string {
  return errorText(err, t, resourceLabels);
}

type FieldErr = { message?: string } | undefined;

/**
 * TextField props for a field: the form's own error, else the server's `fields[name]`, translated. `relabel`
 * names a field as the form labels it when that differs by case (a Bash template's playbook is its script).
 */
export function useFieldProps() {
  const { t } = useTranslation();
  return useCallback(
    (error: FieldErr, serverError?: unknown, name?: string, relabel?: Record<string, string>) => {
      const labels = relabel ? { ...resourceLabels, ...relabel } : resourceLabels;
      if (error?.message !== undefined)
        return error.message ? { error: true, helperText: translateMessage(error.message, t, labels) } : {};
      const server = name ? serverFieldText(serverError, name, t, labels) : undefined;
      return server ? { error: true, helperText: server } : {};
    },
    [t],
  );
}
