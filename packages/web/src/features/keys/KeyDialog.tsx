import { zodResolver } from '@hookform/resolvers/zod';
import { Alert, MenuItem, Stack, TextField } from '@mui/material';
import {
  type AccessKey,
  DEFAULT_KEY_ENV_PREFIX,
  keyCreateInput,
  keySourceTypes,
  keyTypes,
  keyUpdateInput,
} from '@signalbox/contracts';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { z } from 'zod';
import { useResourceSave } from '../../api/resources';
import { useUser } from '../../api/session';
import { FormDialog } from '../../components/FormDialog';
import { useSaveAndClose } from '../../components/forms';
import { useFieldProps } from '../../components/messages';
import { mui } from '../../components/mui';
import { SelectField } from '../../components/SelectField';
import { StoredSecretField } from '../../components/StoredSecretField';

type Values = z.input<typeof keyCreateInput>;

/** The first line of a private key, as a format hint (not text to translate). */
const PRIVATE_KEY_START = '-----BEGIN OPENSSH PRIVATE KEY-----';

/**
 * Create or edit a key. The secret of an existing key is never sent back: its inputs say it is stored and saving
 * them empty keeps it; Replace (or typing a new value) replaces the key's whole secret, login included. Administrators may
 * instead have the secret read on the server, from an environment variable or a file; others never see that
 * choice, and see a key an administrator set up that way read-only.
 */
export function KeyDialog({
  projectId,
  item,
  readOnly,
  onClose,
}: {
  projectId: number;
  item: AccessKey | null;
  readOnly?: boolean;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const admin = !!useUser().data?.admin;
  const adminOnly = !!item?.source_storage_type && !admin;
  const frozen = readOnly || adminOnly;
  const save = useResourceSave<Record<string, unknown> & { id?: number | null }>(projectId, 'keys');
  const field = useFieldProps();
  const { register, handleSubmit, control, watch, setValue, formState } = useForm<Values>({
    resolver: zodResolver(item ? keyUpdateInput : keyCreateInput),
    defaultValues: {
      id: item?.id ?? null,
      name: item?.name ?? '',
      type: item?.type ?? 'ssh',
      override_secret: false,
      login_password: { login: item?.login_password?.login ?? '', password: '' },
      ssh: { login: item?.ssh?.login ?? '', passphrase: '', private_key: '' },
      source_storage_type: item?.source_storage_type ?? '',
      source_storage_key: item?.source_storage_key ?? '',
    },
  });
  const type = watch('type');
  const source = watch('source_storage_type') || null;
  const override = watch('override_secret');
  // The stored secret stays only while the type and where the secret lives are unchanged (see updateKey).
  const keeps =
    !!item &&
    type === item.type &&
    (source ?? null) === (item.source_storage_type ?? null) &&
    type !== 'none';
  // A key restored from a backup keeps its type but has no password or private key: nothing is kept by saving
  // the input empty, and the input says so.
  const locked = keeps && !override && item.has_secret !== false;
  const missing = keeps && !override && item.has_secret === false;
  const replace = () => {
    setValue('override_secret', true);
    setValue('login_password.password', '');
    setValue('ssh.passphrase', '');
    setValue('ssh.private_key', '');
  };
  // Typing into a stored secret's input replaces the secret, as Replace does.
  const replacing = { onChange: () => setValue('override_secret', true) };
  const errors = formState.errors;

  const sourceKeyProps: { error?: boolean; helperText?: string } = field(
    errors.source_storage_key,
    save.error,
    'source_storage_key',
  );

  /** A field's error, or else (for a key without its secret) the hint to enter one. */
  const withMissingHint = (props: { error?: boolean; helperText?: string }) =>
    missing && !props.helperText ? { ...props, helperText: t('keyStore.noSecret') } : props;

  const saveAndClose = useSaveAndClose(save, onClose);
  const submit = handleSubmit((values) =>
    saveAndClose(
      { ...values, id: item?.id ?? null } as never,
      t(item ? 'keyStore.saved' : 'keyStore.created', { name: values.name }),
    ),
  );

  return (
    <FormDialog
      open
      formId="key-form"
      title={!item ? t('keyStore.new') : frozen ? t('keyStore.view') : t('keyStore.edit')}
      error={save.error}
      pending={save.isPending || frozen}
      onSubmit={(e) => void submit(e)}
      onClose={onClose}
    >
      <Stack spacing={2}>
        {readOnly && <Alert severity="info">{t('res.readOnly')}</Alert>}
        {adminOnly && item?.source_storage_type && (
          <Alert severity="info">
            {t(`keyStore.readOn.${item.source_storage_type}`, { name: item.source_storage_key ?? '' })}{' '}
            {t('keyStore.adminOnly')}
          </Alert>
        )}
        <TextField
          label={t('res.name')}
          required
          autoFocus
          disabled={frozen}
          {...mui(register('name'))}
          {...field(errors.name, save.error, 'name')}
        />
        <SelectField
          control={control}
          name="type"
          label={t('res.type')}
          options={keyTypes.map((k) => ({ value: k, label: t(`keyStore.types.${k}`) }))}
          required
          disabled={frozen}
          serverError={save.error}
        />
        {admin && type !== 'none' && (
          <Controller
            control={control}
            name="source_storage_type"
            render={({ field: f }) => (
              <TextField
                select
                label={t('keyStore.source')}
                disabled={frozen}
                value={f.value ?? ''}
                onChange={f.onChange}
                onBlur={f.onBlur}
                name={f.name}
                helperText={t('keyStore.sourceHelp')}
                // '' is a choice (stored in Signalbox): shown, not an empty select.
                slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
              >
                <MenuItem value="">{t('keyStore.sources.stored')}</MenuItem>
                {keySourceTypes.map((k) => (
                  <MenuItem key={k} value={k}>
                    {t(`keyStore.sources.${k}`)}
                  </MenuItem>
                ))}
              </TextField>
            )}
          />
        )}
        {source && type !== 'none' && (
          <TextField
            label={source === 'env' ? t('keyStore.sourceEnv') : t('keyStore.sourceFile')}
            required
            disabled={frozen}
            autoComplete="off"
            placeholder={source === 'env' ? `${DEFAULT_KEY_ENV_PREFIX}DEPLOY` : '/etc/signalbox/keys/deploy'}
            slotProps={{ htmlInput: { spellCheck: false, style: { fontFamily: 'monospace' } } }}
            {...mui(register('source_storage_key'))}
            {...sourceKeyProps}
            helperText={
              sourceKeyProps.helperText ??
              (source === 'env'
                ? t('keyStore.sourceEnvHelp', { prefix: DEFAULT_KEY_ENV_PREFIX })
                : t('keyStore.sourceFileHelp'))
            }
          />
        )}
        {type === 'login_password' && (
          <>
            <TextField
              label={t('keyStore.login')}
              disabled={frozen || locked}
              autoComplete="off"
              {...mui(register('login_password.login'))}
            />
            {!source && (
              <StoredSecretField
                stored={locked}
                onReplace={replace}
                label={t('keyStore.password')}
                type="password"
                required
                disabled={frozen}
                autoComplete="new-password"
                {...mui(register('login_password.password', replacing))}
                {...withMissingHint(
                  field(errors.login_password?.password, save.error, 'login_password.password'),
                )}
              />
            )}
          </>
        )}
        {type === 'ssh' && (
          <>
            <TextField
              label={t('keyStore.login')}
              disabled={frozen || locked}
              autoComplete="off"
              {...mui(register('ssh.login'))}
            />
            <StoredSecretField
              stored={locked}
              onReplace={replace}
              label={t('keyStore.passphrase')}
              type="password"
              disabled={frozen}
              autoComplete="new-password"
              {...mui(register('ssh.passphrase', replacing))}
            />
            {!source && (
              <StoredSecretField
                stored={locked}
                onReplace={replace}
                label={t('keyStore.privateKey')}
                required
                multiline
                minRows={4}
                disabled={frozen}
                placeholder={PRIVATE_KEY_START}
                slotProps={{ htmlInput: { spellCheck: false, style: { fontFamily: 'monospace' } } }}
                {...mui(register('ssh.private_key', replacing))}
                {...withMissingHint(field(errors.ssh?.private_key, save.error, 'ssh.private_key'))}
              />
            )}
          </>
        )}
      </Stack>
    </FormDialog>
  );
}
