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
import { type FormEvent, type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { z } from 'zod';
import { api } from '../../api/client';
import { FormDialog } from '../../components/FormDialog';
import { useSaveAndClose } from '../../components/forms';
import { translateResourceMessage } from '../../components/messages';

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

/** A rule dialog's form and save: the form is checked, then saved (a new rule when `item` is null) and closed. */
function useRuleDialog<S extends z.ZodType>(
  { projectId, integrationId, item, onClose }: DialogProps<{ id: number }>,
  kind: Kind,
  schema: S,
  initial: Record<string, string>,
  savedKey: string,
) {
  const { t } = useTranslation();
  const save = useRuleSave(projectId, integrationId, kind);
  const form = useRuleForm(schema, initial);
  const saveAndClose = useSaveAndClose(save, onClose);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!form.check()) return;
    await saveAndClose(
      { ...form.values, ...(item ? { id: item.id } : {}) },
      t(savedKey, { name: form.values.name }),
    );
  };
  return { save, form, submit, onClose };
}

/** The dialog around a rule's fields, its first field the rule's name. */
function RuleFormDialog({
  rule,
  formId,
  title,
  children,
}: {
  rule: ReturnType<typeof useRuleDialog>;
  formId: string;
  title: string;
  children: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <FormDialog
      open
      formId={formId}
      title={title}
      error={rule.save.error}
      pending={rule.save.isPending}
      onSubmit={(e) => void rule.submit(e)}
      onClose={rule.onClose}
    >
      <Stack spacing={2}>
        <TextField label={t('res.name')} required autoFocus {...rule.form.props('name')} />
        {children}
      </Stack>
    </FormDialog>
  );
}

export function MatcherDialog(props: DialogProps<IntegrationMatcher>) {
  const { t } = useTranslation();
  const { item } = props;
  const rule = useRuleDialog(
    props,
    'matchers',
    integrationMatcherInput,
    {
      name: item?.name ?? '',
      match_type: item?.match_type ?? 'body',
      body_data_type: item?.body_data_type ?? 'json',
      key: item?.key ?? '',
      method: item?.method ?? 'equals',
      value: item?.value ?? '',
    },
    'integrations.matcherSaved',
  );
  const form = rule.form;
  return (
    <RuleFormDialog
      rule={rule}
      formId="matcher-form"
      title={item ? t('integrations.editMatcher') : t('integrations.newMatcher')}
    >
      <TextField select label={t('integrations.matchType')} required {...form.props('match_type')}>
        {matchTypes.map((m) => (
          <MenuItem key={m} value={m}>
            {t(`integrations.sources.${m}`)}
          </MenuItem>
        ))}
      </TextField>
      {form.values.match_type === 'body' && (
        <TextField select label={t('integrations.bodyDataFormat')} required {...form.props('body_data_type')}>
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
    </RuleFormDialog>
  );
}

export function ValueDialog(props: DialogProps<IntegrationExtractValue>) {
  const { t } = useTranslation();
  const { item } = props;
  const rule = useRuleDialog(
    props,
    'values',
    integrationExtractValueInput,
    {
      name: item?.name ?? '',
      value_source: item?.value_source ?? 'body',
      body_data_type: item?.body_data_type ?? 'json',
      key: item?.key ?? '',
      variable: item?.variable ?? '',
      variable_type: item?.variable_type ?? 'environment',
    },
    'integrations.valueSaved',
  );
  const form = rule.form;
  return (
    <RuleFormDialog
      rule={rule}
      formId="value-form"
      title={item ? t('integrations.editValue') : t('integrations.newValue')}
    >
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
    </RuleFormDialog>
  );
}
