import { zodResolver } from '@hookform/resolvers/zod';
import { Stack, TextField } from '@mui/material';
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
import type { ReactNode } from 'react';
import { type FieldValues, type UseFormReturn, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { z } from 'zod';
import { api } from '../../api/client';
import { FormDialog } from '../../components/FormDialog';
import { useSaveAndClose } from '../../components/forms';
import { useFieldProps } from '../../components/messages';
import { mui } from '../../components/mui';
import { SelectField } from '../../components/SelectField';

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

type DialogProps<T> = { projectId: number; integrationId: number; item: T | null; onClose: () => void };

/** A rule dialog's save: the checked form is saved (a new rule when `item` is null) and the dialog closed. */
function useRuleSubmit<V extends FieldValues & { name: string }>(
  { projectId, integrationId, item, onClose }: DialogProps<{ id: number }>,
  kind: Kind,
  form: UseFormReturn<V>,
  savedKey: string,
) {
  const { t } = useTranslation();
  const save = useRuleSave(projectId, integrationId, kind);
  const saveAndClose = useSaveAndClose(save, onClose);
  const submit = form.handleSubmit((values) =>
    saveAndClose({ ...values, ...(item ? { id: item.id } : {}) }, t(savedKey, { name: values.name })),
  );
  return { save, submit, onClose };
}

/** The dialog around a rule's fields. */
function RuleFormDialog({
  rule,
  formId,
  title,
  children,
}: {
  rule: ReturnType<typeof useRuleSubmit>;
  formId: string;
  title: string;
  children: ReactNode;
}) {
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
      <Stack spacing={2}>{children}</Stack>
    </FormDialog>
  );
}

type MatcherValues = z.input<typeof integrationMatcherInput>;

export function MatcherDialog(props: DialogProps<IntegrationMatcher>) {
  const { t } = useTranslation();
  const field = useFieldProps();
  const { item } = props;
  const form = useForm<MatcherValues>({
    resolver: zodResolver(integrationMatcherInput),
    defaultValues: {
      name: item?.name ?? '',
      match_type: item?.match_type ?? 'body',
      body_data_type: item?.body_data_type ?? 'json',
      key: item?.key ?? '',
      method: item?.method ?? 'equals',
      value: item?.value ?? '',
    },
  });
  const rule = useRuleSubmit(props, 'matchers', form, 'integrations.matcherSaved');
  const { control, register, watch } = form;
  const errors = form.formState.errors;
  const serverError = rule.save.error;
  return (
    <RuleFormDialog
      rule={rule}
      formId="matcher-form"
      title={item ? t('integrations.editMatcher') : t('integrations.newMatcher')}
    >
      <TextField
        label={t('res.name')}
        required
        autoFocus
        {...mui(register('name'))}
        {...field(errors.name, serverError, 'name')}
      />
      <SelectField
        control={control}
        name="match_type"
        label={t('integrations.matchType')}
        options={matchTypes.map((m) => ({ value: m, label: t(`integrations.sources.${m}`) }))}
        required
        serverError={serverError}
      />
      {watch('match_type') === 'body' && (
        <SelectField
          control={control}
          name="body_data_type"
          label={t('integrations.bodyDataFormat')}
          options={bodyDataTypes.map((m) => ({ value: m, label: t(`integrations.formats.${m}`) }))}
          required
          serverError={serverError}
        />
      )}
      <TextField
        label={t('integrations.key')}
        required
        {...mui(register('key'))}
        {...field(errors.key, serverError, 'key')}
      />
      <SelectField
        control={control}
        name="method"
        label={t('integrations.method')}
        options={matchMethods.map((m) => ({ value: m, label: t(`integrations.methodsMatch.${m}`) }))}
        required
        serverError={serverError}
      />
      <TextField
        label={t('integrations.value')}
        required
        {...mui(register('value'))}
        {...field(errors.value, serverError, 'value')}
      />
    </RuleFormDialog>
  );
}

type ValueValues = z.input<typeof integrationExtractValueInput>;

export function ValueDialog(props: DialogProps<IntegrationExtractValue>) {
  const { t } = useTranslation();
  const field = useFieldProps();
  const { item } = props;
  const form = useForm<ValueValues>({
    resolver: zodResolver(integrationExtractValueInput),
    defaultValues: {
      name: item?.name ?? '',
      value_source: item?.value_source ?? 'body',
      body_data_type: item?.body_data_type ?? 'json',
      key: item?.key ?? '',
      variable: item?.variable ?? '',
      variable_type: item?.variable_type ?? 'environment',
    },
  });
  const rule = useRuleSubmit(props, 'values', form, 'integrations.valueSaved');
  const { control, register, watch } = form;
  const errors = form.formState.errors;
  const serverError = rule.save.error;
  return (
    <RuleFormDialog
      rule={rule}
      formId="value-form"
      title={item ? t('integrations.editValue') : t('integrations.newValue')}
    >
      <TextField
        label={t('res.name')}
        required
        autoFocus
        {...mui(register('name'))}
        {...field(errors.name, serverError, 'name')}
      />
      <SelectField
        control={control}
        name="value_source"
        label={t('integrations.valueSource')}
        options={valueSources.map((m) => ({ value: m, label: t(`integrations.sources.${m}`) }))}
        required
        serverError={serverError}
      />
      {watch('value_source') === 'body' && (
        <SelectField
          control={control}
          name="body_data_type"
          label={t('integrations.bodyDataType')}
          options={bodyDataTypes.map((m) => ({ value: m, label: t(`integrations.formats.${m}`) }))}
          required
          serverError={serverError}
        />
      )}
      <TextField
        label={t('integrations.key')}
        required
        {...mui(register('key'))}
        {...field(errors.key, serverError, 'key')}
      />
      <TextField
        label={t('integrations.variable')}
        required
        {...mui(register('variable'))}
        {...field(errors.variable, serverError, 'variable')}
      />
      <SelectField
        control={control}
        name="variable_type"
        label={t('integrations.variableType')}
        options={variableTypes.map((m) => ({ value: m, label: t(`integrations.variableTypes.${m}`) }))}
        serverError={serverError}
      />
    </RuleFormDialog>
  );
}
