import { zodResolver } from '@hookform/resolvers/zod';
import { Alert, Checkbox, FormControlLabel, MenuItem, Stack, TextField } from '@mui/material';
import { type AccessKey, keyCreateInput, keyTypes, keyUpdateInput } from '@signalbox/contracts';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { z } from 'zod';
import { useSaveAndClose } from '../../app/forms';
import { useResourceSave } from '../templates/shared/api';
import { FormDialog } from '../templates/shared/FormDialog';
import { useFieldProps } from '../templates/shared/messages';
import { mui } from '../templates/shared/mui';

type Values = z.input<typeof keyCreateInput>;

/** Create or edit a key. Secrets of an existing key stay locked until "override" is ticked. */
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
  const save = useResourceSave<Record<string, unknown> & { id?: number | null }>(projectId, 'keys');
  const field = useFieldProps();
  const { register, handleSubmit, control, watch, formState } = useForm<Values>({
    resolver: zodResolver(item ? keyUpdateInput : keyCreateInput),
    defaultValues: {
      id: item?.id ?? null,
      name: item?.name ?? '',
      type: item?.type ?? 'ssh',
      override_secret: false,
      login_password: { login: item?.login_password?.login ?? '', password: '' },
      ssh: { login: item?.ssh?.login ?? '', passphrase: '', private_key: '' },
    },
  });
  const type = watch('type');
  const override = watch('override_secret');
  const locked = !!item && !override;
  const errors = formState.errors;

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
      title={item ? t('keyStore.edit') : t('keyStore.new')}
      error={save.error}
      pending={save.isPending || readOnly}
      onSubmit={(e) => void submit(e)}
      onClose={onClose}
    >
      <Stack spacing={2}>
        {readOnly && <Alert severity="info">{t('res.readOnly')}</Alert>}
        <TextField
          label={t('res.name')}
          required
          autoFocus
          disabled={readOnly}
          {...mui(register('name'))}
          {...field(errors.name, save.error, 'name')}
        />
        <Controller
          control={control}
          name="type"
          render={({ field: f }) => (
            <TextField
              select
              label={t('res.type')}
              required
              disabled={readOnly}
              value={f.value ?? ''}
              onChange={f.onChange}
              onBlur={f.onBlur}
              name={f.name}
              {...field(errors.type, save.error, 'type')}
            >
              {keyTypes.map((k) => (
                <MenuItem key={k} value={k}>
                  {t(`keyStore.types.${k}`)}
                </MenuItem>
              ))}
            </TextField>
          )}
        />
        {item && type !== 'none' && (
          <Controller
            control={control}
            name="override_secret"
            render={({ field: f }) => (
              <FormControlLabel
                disabled={readOnly}
                label={t('keyStore.override')}
                control={<Checkbox checked={!!f.value} onChange={(e) => f.onChange(e.target.checked)} />}
              />
            )}
          />
        )}
        {type === 'login_password' && (
          <>
            <TextField
              label={t('keyStore.login')}
              disabled={readOnly || locked}
              autoComplete="off"
              {...mui(register('login_password.login'))}
            />
            <TextField
              label={t('keyStore.password')}
              type="password"
              required={!locked}
              disabled={readOnly || locked}
              autoComplete="new-password"
              placeholder={locked ? t('keyStore.secretHidden') : undefined}
              {...mui(register('login_password.password'))}
              {...field(errors.login_password?.password, save.error, 'login_password.password')}
            />
          </>
        )}
        {type === 'ssh' && (
          <>
            <TextField
              label={t('keyStore.login')}
              disabled={readOnly || locked}
              autoComplete="off"
              {...mui(register('ssh.login'))}
            />
            <TextField
              label={t('keyStore.passphrase')}
              type="password"
              disabled={readOnly || locked}
              autoComplete="new-password"
              {...mui(register('ssh.passphrase'))}
            />
            <TextField
              label={t('keyStore.privateKey')}
              required={!locked}
              multiline
              minRows={4}
              disabled={readOnly || locked}
              placeholder={locked ? t('keyStore.secretHidden') : '-----BEGIN OPENSSH PRIVATE KEY-----'}
              slotProps={{ htmlInput: { spellCheck: false, style: { fontFamily: 'monospace' } } }}
              {...mui(register('ssh.private_key'))}
              {...field(errors.ssh?.private_key, save.error, 'ssh.private_key')}
            />
          </>
        )}
      </Stack>
    </FormDialog>
  );
}
