import { zodResolver } from '@hookform/resolvers/zod';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField } from '@mui/material';
import { passwordInput, type User } from '@signalbox/contracts';
import { useEffect } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FormError, useFieldError } from '../../app/forms';
import { useNotify } from '../../app/snackbar';
import { useChangePassword } from './api';

/** Change a user's password (SPEC §5: password required). */
export function PasswordDialog({ open, user, onClose }: { open: boolean; user: User; onClose: () => void }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const change = useChangePassword();
  const fieldError = useFieldError();
  const { register, handleSubmit, reset, formState } = useForm<{ password: string }>({
    mode: 'onTouched',
    resolver: zodResolver(passwordInput),
    defaultValues: { password: '' },
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the dialog opens
  useEffect(() => {
    if (open) {
      reset({ password: '' });
      change.reset();
    }
  }, [open, reset]);

  const submit = handleSubmit(async ({ password }) => {
    try {
      await change.mutateAsync({ id: user.id, password });
      notify.success(t('users.passwordChanged', { name: user.name }));
      onClose();
    } catch {
      // Shown in the form's alert.
    }
  });

  return (
    <Dialog open={open} onClose={onClose} fullWidth maxWidth="xs">
      <form onSubmit={submit} noValidate>
        <DialogTitle>{t('users.changePasswordOf', { name: user.name })}</DialogTitle>
        <DialogContent>
          <FormError error={change.error} />
          <TextField
            label={t('users.newPassword')}
            type="password"
            required
            fullWidth
            autoFocus
            autoComplete="new-password"
            sx={{ mt: 1 }}
            {...register('password')}
            {...fieldError(formState.errors.password, change.error, 'password')}
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
