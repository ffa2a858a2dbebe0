import { MenuItem, Stack, TextField } from '@mui/material';
import {
  bodyDataTypes,
  type IntegrationExtractValue,
  type IntegrationMatcher,
  integrationExtractValueInput,
  integrationMatcherInput,
  matchMethods,
  matchTypes,
  valueSources,
  variableTypes,
} from '@signalbox/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { z } from 'zod';
import { api } from '../../api/client';
import { FormDialog } from '../templates/shared/FormDialog';
import { translateResourceMessage } from '../templates/shared/messages';
import { useResourceNotify } from '../templates/shared/ui';

type Kind = 'matchers' | 'values';

/** Saves a matcher or extracted value of an integration; the list query is refreshed after. */
function useRuleSave(projectId: number, integrationId: number, kind: Kind) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: Record<string, unknown> & { id?: number }) => {
      const base = `/project/${projectId}/integrations/${integrationId}/${kind}`;
      const payload = { ...body, integration_id: integrationId };
      return body.id
        ? api(`${base}/${body.id}`, { method: 'PUT', body: payload })
        : api(base, { method: 'POST', body: payload });
    },
    onSuccess: () =>
      void client.invalidateQueries({
        queryKey: ['project', projectId, 'integrations', integrationId, kind],
      }),
  });
}

function useRuleForm<S extends z.ZodType>(schema: S, initial: Record<string, string>) {
  const { t } = useTranslation();
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const check = () => {
    const parsed = schema.safeParse(values);
    if (parsed.success) {
      setErrors({});
      return true;
    }
    const next: Record<string, string> = {};
    for (const issue of parsed.error.issues)
      next[String(issue.path[0])] ??= translateResourceMessage(issue.message, t);
    setErrors(next);
    return false;
  };
  const props = (name: string) => ({
    name,
    value: values[name] ?? '',
    onChange: (e: { target: { value: string } }) => setValues((v) => ({ ...v, [name]: e.target.value })),
    ...(errors[name] ? { error: true, helperText: errors[name] } : {}),
  });
  return { values, check, props };
}

type DialogProps<T> = { projectId: number; integrationId: number; item: T | null; onClose: () => void };

export function MatcherDialog({ projectId, integrationId, item, onClose }: DialogProps<IntegrationMatcher>) {
  const { t } = useTranslation();
  const notify = useResourceNotify();
  const save = useRuleSave(projectId, integrationId, 'matchers');
  const form = useRuleForm(integrationMatcherInput, {
    name: item?.name ?? '',
    match_type: item?.match_type ?? 'body',
    body_data_type: item?.body_data_type ?? 'json',
    key: item?.key ?? '',
    method: item?.method ?? 'equals',
    value: item?.value ?? '',
  });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!form.check()) return;
    try {
      await save.mutateAsync({ ...form.values, ...(item ? { id: item.id } : {}) });
      notify.success(t('integrations.matcherSaved', { name: form.values.name }));
      onClose();
    } catch {
      // Shown in the dialog.
    }
  };
  return (
    <FormDialog
      open
      formId="matcher-form"
      title={item ? t('integrations.editMatcher') : t('integrations.newMatcher')}
      error={save.error}
      pending={save.isPending}
      onSubmit={(e) => void submit(e)}
      onClose={onClose}
    >
      <Stack spacing={2}>
        <TextField label={t('res.name')} required autoFocus {...form.props('name')} />
        <TextField select label={t('integrations.matchType')} required {...form.props('match_type')}>
          {matchTypes.map((m) => (
            <MenuItem key={m} value={m}>
              {t(`integrations.sources.${m}`)}
            </MenuItem>
          ))}
        </TextField>
        {form.values.match_type === 'body' && (
          <TextField
            select
            label={t('integrations.bodyDataFormat')}
            required
            {...form.props('body_data_type')}
          >
            {bodyDataTypes.map((m) => (
              <MenuItem key={m} value={m}>
                {t(`integrations.formats.${m}`)}
              </MenuItem>
            ))}
          </TextField>
        )}
        <TextField label={t('integrations.key')} required {...form.props('key')} />
        <TextField select label={t('integrations.method')} required {...form.props('method')}>
          {matchMethods.map((m) => (
            <MenuItem key={m} value={m}>
              {t(`integrations.methodsMatch.${m}`)}
            </MenuItem>
          ))}
        </TextField>
        <TextField label={t('integrations.value')} required {...form.props('value')} />
      </Stack>
    </FormDialog>
  );
}

export function ValueDialog({
  projectId,
  integrationId,
  item,
  onClose,
}: DialogProps<IntegrationExtractValue>) {
  const { t } = useTranslation();
  const notify = useResourceNotify();
  const save = useRuleSave(projectId, integrationId, 'values');
  const form = useRuleForm(integrationExtractValueInput, {
    name: item?.name ?? '',
    value_source: item?.value_source ?? 'body',
    body_data_type: item?.body_data_type ?? 'json',
    key: item?.key ?? '',
    variable: item?.variable ?? '',
    variable_type: item?.variable_type ?? 'environment',
  });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!form.check()) return;
    try {
      await save.mutateAsync({ ...form.values, ...(item ? { id: item.id } : {}) });
      notify.success(t('integrations.valueSaved', { name: form.values.name }));
      onClose();
    } catch {
      // Shown in the dialog.
    }
  };
  return (
    <FormDialog
      open
      formId="value-form"
      title={item ? t('integrations.editValue') : t('integrations.newValue')}
      error={save.error}
      pending={save.isPending}
      onSubmit={(e) => void submit(e)}
      onClose={onClose}
    >
      <Stack spacing={2}>
        <TextField label={t('res.name')} required autoFocus {...form.props('name')} />
        <TextField select label={t('integrations.valueSource')} required {...form.props('value_source')}>
          {valueSources.map((m) => (
            <MenuItem key={m} value={m}>
              {t(`integrations.sources.${m}`)}
            </MenuItem>
          ))}
        </TextField>
        {form.values.value_source === 'body' && (
          <TextField select label={t('integrations.bodyDataType')} required {...form.props('body_data_type')}>
            {bodyDataTypes.map((m) => (
              <MenuItem key={m} value={m}>
                {t(`integrations.formats.${m}`)}
              </MenuItem>
            ))}
          </TextField>
        )}
        <TextField label={t('integrations.key')} required {...form.props('key')} />
        <TextField label={t('integrations.variable')} required {...form.props('variable')} />
        <TextField select label={t('integrations.variableType')} {...form.props('variable_type')}>
          {variableTypes.map((m) => (
            <MenuItem key={m} value={m}>
              {t(`integrations.variableTypes.${m}`)}
            </MenuItem>
          ))}
        </TextField>
      </Stack>
    </FormDialog>
  );
}
