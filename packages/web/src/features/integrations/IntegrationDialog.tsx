import { zodResolver } from '@hookform/resolvers/zod';
import { Checkbox, FormControlLabel, Stack, TextField } from '@mui/material';
import {
  type AccessKey,
  type Integration,
  integrationAuthMethods,
  integrationInput,
  type Template,
} from '@signalbox/contracts';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { z } from 'zod';
import { useResourceList, useResourceSave } from '../../api/resources';
import { FormDialog } from '../../components/FormDialog';
import { useSaveAndClose } from '../../components/forms';
import { useFieldProps } from '../../components/messages';
import { mui } from '../../components/mui';
import { playbookHint, usePickLabels } from '../../components/pick-labels';
import { idOptions, SelectField } from '../../components/SelectField';

type Values = z.input<typeof integrationInput>;
const EXAMPLE_HEADER = 'X-Signature';

/** Create or edit an integration: the secret shows only with a method, the header only for token/hmac. */
export function IntegrationDialog({
  projectId,
  item,
  onClose,
  onSaved,
}: {
  projectId: number;
  item: Integration | null;
  onClose: () => void;
  onSaved?: (integration: Integration) => void;
}) {
  const { t } = useTranslation();
  const labelled = usePickLabels();
  const templates = useResourceList<Template>(projectId, 'templates');
  const keys = useResourceList<AccessKey>(projectId, 'keys');
  const save = useResourceSave<Record<string, unknown> & { id?: number | null }>(projectId, 'integrations');
  const field = useFieldProps();
  const { register, handleSubmit, control, watch, formState } = useForm<Values>({
    resolver: zodResolver(integrationInput),
    defaultValues: {
      name: item?.name ?? '',
      template_id: item?.template_id ?? (0 as number),
      auth_method: item?.auth_method ?? '',
      auth_secret_id: item?.auth_secret_id ?? null,
      auth_header: item?.auth_header ?? '',
      searchable: item?.searchable ?? false,
    },
  });
  const method = watch('auth_method') ?? '';
  // The server checks a request's token or signature against a login/password key's password: only those fit
  // (and the one already chosen, so an older integration still shows its secret).
  const secretKeys = (keys.data ?? []).filter(
    (k) => k.type === 'login_password' || k.id === item?.auth_secret_id,
  );
  const errors = formState.errors;

  const saveAndClose = useSaveAndClose(save, onClose);
  const submit = handleSubmit((values) =>
    saveAndClose(
      { ...values, id: item?.id ?? null },
      t(item ? 'integrations.saved' : 'integrations.created', { name: values.name }),
      (saved) => onSaved?.(saved as unknown as Integration),
    ),
  );

  const idSelect = (
    name: 'template_id' | 'auth_secret_id',
    label: string,
    options: { id: number; name: string; playbook?: string | null }[],
  ) => (
    <SelectField
      control={control}
      name={name}
      label={label}
      options={idOptions(labelled(options, playbookHint))}
      required
      serverError={save.error}
    />
  );

  return (
    <FormDialog
      open
      formId="integration-form"
      title={item ? t('integrations.edit') : t('integrations.new')}
      error={save.error}
      pending={save.isPending}
      onSubmit={(e) => void submit(e)}
      onClose={onClose}
    >
      <Stack spacing={2}>
        <TextField
          label={t('res.name')}
          required
          autoFocus
          {...mui(register('name'))}
          {...field(errors.name, save.error, 'name')}
        />
        {idSelect('template_id', t('res.template'), templates.data ?? [])}
        <SelectField
          control={control}
          name="auth_method"
          label={t('integrations.authMethod')}
          options={integrationAuthMethods.map((m) => ({
            value: m,
            label: t(`integrations.methods.${m || 'none'}`),
          }))}
        />
        {method !== '' && idSelect('auth_secret_id', t('integrations.authSecret'), secretKeys)}
        {(method === 'token' || method === 'hmac') && (
          <TextField
            label={t('integrations.authHeader')}
            required
            placeholder={EXAMPLE_HEADER}
            {...mui(register('auth_header'))}
            {...field(errors.auth_header, save.error, 'auth_header')}
          />
        )}
        <Controller
          control={control}
          name="searchable"
          render={({ field: f }) => (
            <FormControlLabel
              label={t('integrations.searchable')}
              control={<Checkbox checked={!!f.value} onChange={(e) => f.onChange(e.target.checked)} />}
            />
          )}
        />
      </Stack>
    </FormDialog>
  );
}
