import { zodResolver } from '@hookform/resolvers/zod';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField } from '@mui/material';
import { ownPasswordInput, passwordInput, type User } from '@signalbox/contracts';
import { useEffect } from 'react';
import { type Resolver, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useUser } from '../../api/session';
import { CheckboxField, FormError, useFieldError, useSaveAndClose } from '../../components/forms';
import { useChangePassword } from './api';

type Values = { password: string; current_password: string; revoke_tokens: boolean };
const blank: Values = { password: '', current_password: '', revoke_tokens: true };

/**
 * Change a user's password. Changing one's own asks for the current password;
 * the user's API tokens are revoked too unless the box is cleared.
 */
export function PasswordDialog({ open, user, onClose }: { open: boolean; user: User; onClose: () => void }) {
  const { t } = useTranslation();
  const change = useChangePassword();
  const fieldError = useFieldError();
  const own = useUser().data?.id === user.id;
  const { register, handleSubmit, reset, formState, control } = useForm<Values>({
    mode: 'onTouched',
    resolver: zodResolver(own ? ownPasswordInput : passwordInput) as unknown as Resolver<Values>,
    defaultValues: blank,
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the dialog opens
  useEffect(() => {
    if (open) {
      reset(blank);
      change.reset();
    }
  }, [open, reset]);

  const saveAndClose = useSaveAndClose(change, onClose);
  const submit = handleSubmit(({ password, current_password, revoke_tokens }) =>
    saveAndClose(
      { id: user.id, password, revoke_tokens, ...(own ? { current_password } : {}) },
      t('users.passwordChanged', { name: user.name }),
    ),
  );

  return (
    <Dialog open={open} onClose={onClose} fullWidth maxWidth="xs">
      <form onSubmit={submit} noValidate>
        <DialogTitle>{t('users.changePasswordOf', { name: user.name })}</DialogTitle>
        <DialogContent>
          <FormError error={change.error} />
          {own && (
            <TextField
              label={t('users.currentPassword')}
              type="password"
              required
              fullWidth
              autoFocus
              autoComplete="current-password"
              sx={{ mt: 1 }}
              {...register('current_password')}
              {...fieldError(formState.errors.current_password, change.error, 'current_password')}
            />
          )}
          <TextField
            label={t('users.newPassword')}
            type="password"
            required
            fullWidth
            autoFocus={!own}
            autoComplete="new-password"
            sx={{ mt: own ? 2 : 1 }}
            {...register('password')}
            {...fieldError(formState.errors.password, change.error, 'password')}
          />
          <CheckboxField
            control={control}
            name="revoke_tokens"
            label={own ? t('users.revokeMyTokens') : t('users.revokeTheirTokens', { name: user.name })}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={change.isPending}>
            {t('common.save')}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
