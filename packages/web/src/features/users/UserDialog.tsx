import { zodResolver } from '@hookform/resolvers/zod';
import {
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormGroup,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { type User, userCreateInput, userUpdateInput } from '@signalbox/contracts';
import { useEffect } from 'react';
import { type Resolver, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { CheckboxField, FormError, useFieldError, useSaveAndClose } from '../../components/forms';
import { type UserValues, useSaveUser } from './api';

type Props = {
  open: boolean;
  /** The user to edit; undefined creates a new user. */
  user?: User;
  /** Whether the editor is an admin: only admins see the admin and can-create-project boxes. */
  adminEditor: boolean;
  title?: string;
  onClose: () => void;
};

const empty: UserValues = {
  name: '',
  username: '',
  email: '',
  password: '',
  admin: false,
  alert: false,
  external: false,
  can_create_project: false,
};

/** A field's error where there is one, else its help text. */
const withHelp = <T extends { helperText?: unknown }>(field: T, help: string) => ({
  ...field,
  helperText: field.helperText || help,
});

/** Create or edit a user. */
export function UserDialog({ open, user, adminEditor, title, onClose }: Props) {
  const { t } = useTranslation();
  const save = useSaveUser();
  const fieldError = useFieldError();
  const isNew = !user;
  const external = !!user?.external;
  const form = useForm<UserValues>({
    mode: 'onTouched',
    resolver: zodResolver(isNew ? userCreateInput : userUpdateInput) as unknown as Resolver<UserValues>,
    defaultValues: empty,
  });
  const { register, handleSubmit, reset, formState } = form;

  // biome-ignore lint/correctness/useExhaustiveDependencies: reset the form each time the dialog opens
  useEffect(() => {
    if (!open) return;
    save.reset();
    reset(user ? { ...empty, ...user, password: undefined } : empty);
  }, [open, user, reset]);

  const saveAndClose = useSaveAndClose(save, onClose);
  const submit = handleSubmit((values) =>
    saveAndClose({ id: user?.id, values }, t(isNew ? 'users.created' : 'users.saved', { name: values.name })),
  );

  const e = formState.errors;
  return (
    <Dialog open={open} onClose={onClose} fullWidth maxWidth="xs">
      <form onSubmit={submit} noValidate>
        <DialogTitle>{title ?? t(isNew ? 'users.newUser' : 'users.editUser')}</DialogTitle>
        <DialogContent>
          <FormError error={save.error} />
          {external && (
            <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
              {t('users.externalNote')}
            </Typography>
          )}
          <Stack spacing={2} sx={{ mt: 1 }}>
            <TextField
              label={t('fields.name')}
              required
              autoFocus
              {...register('name')}
              {...fieldError(e.name, save.error, 'name')}
            />
            <TextField
              label={t('fields.username')}
              required
              disabled={external}
              autoComplete="off"
              {...register('username')}
              {...fieldError(e.username, save.error, 'username')}
            />
            <TextField
              label={t('fields.email')}
              type="email"
              required
              disabled={external}
              {...register('email')}
              {...fieldError(e.email, save.error, 'email')}
            />
            {isNew && (
              <TextField
                label={t('fields.password')}
                type="password"
                autoComplete="new-password"
                {...register('password')}
                {...withHelp(fieldError(e.password, save.error, 'password'), t('users.passwordOptional'))}
              />
            )}
          </Stack>
          <FormGroup sx={{ mt: 1 }}>
            {adminEditor && <CheckboxField control={form.control} name="admin" label={t('fields.admin')} />}
            <CheckboxField control={form.control} name="alert" label={t('users.sendAlerts')} />
            {adminEditor && (
              <CheckboxField
                control={form.control}
                name="can_create_project"
                label={t('fields.canCreateProject')}
              />
            )}
            {adminEditor && isNew && (
              <CheckboxField control={form.control} name="external" label={t('fields.external')} />
            )}
          </FormGroup>
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type="submit" variant="contained" disabled={save.isPending}>
            {t(isNew ? 'common.create' : 'common.save')}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
