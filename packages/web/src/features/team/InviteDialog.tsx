import {
  Alert,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  MenuItem,
  Stack,
  TextField,
} from '@mui/material';
import { type ProjectRole, projectRoles } from '@signalbox/contracts';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormError } from '../../components/forms';
import { type CreatedInvite, useInviteMutations } from './invites-api';

/** What the dialog says once the invite is made: who finds it where, and whether the e-mail went out. */
function resultOf(invite: CreatedInvite): { severity: 'success' | 'warning'; key: string } {
  if (!invite.mail_status) return { severity: 'success', key: 'invites.resultUser' };
  if (invite.mail_status === 'sent') return { severity: 'success', key: 'invites.resultSent' };
  if (invite.mail_status === 'failed') return { severity: 'warning', key: 'invites.resultFailed' };
  return { severity: 'warning', key: 'invites.resultNotConfigured' };
}

/**
 * Invite by e-mail (manage-team bit): an address of an account here invites that user, who finds it in the
 * console; any other address is sent the invite by e-mail, and the dialog says plainly when no e-mail went out.
 */
export function InviteDialog({
  open,
  projectId,
  onClose,
}: {
  open: boolean;
  projectId: number;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { create } = useInviteMutations(projectId);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<ProjectRole>('task_runner');
  const [touched, setTouched] = useState(false);
  const [made, setMade] = useState<CreatedInvite | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the dialog opens
  useEffect(() => {
    if (open) {
      setEmail('');
      setRole('task_runner');
      setTouched(false);
      setMade(null);
      create.reset();
    }
  }, [open]);

  const submit = async () => {
    setTouched(true);
    if (!email.trim()) return;
    try {
      setMade(await create.mutateAsync({ email: email.trim(), role }));
    } catch {
      // Shown in the dialog.
    }
  };
  const result = made && resultOf(made);
  const missing = touched && !email.trim();

  return (
    <Dialog open={open} onClose={onClose} maxWidth="xs" fullWidth aria-labelledby="invite-title">
      <DialogTitle id="invite-title">{t('invites.invite')}</DialogTitle>
      <DialogContent>
        {result ? (
          <Alert severity={result.severity} role="status">
            {t(result.key, { email: made.email })}
          </Alert>
        ) : (
          <>
            <FormError error={create.error} />
            <Stack
              component="form"
              spacing={2}
              sx={{ mt: 1 }}
              noValidate
              onSubmit={(e) => {
                e.preventDefault();
                void submit();
              }}
            >
              <TextField
                label={t('fields.email')}
                type="email"
                required
                autoFocus
                value={email}
                onChange={(e) => setEmail(e.target.value)}
                error={missing}
                helperText={
                  missing ? t('validation.required', { field: t('fields.email') }) : t('invites.emailHelp')
                }
                slotProps={{ htmlInput: { maxLength: 255 } }}
              />
              <TextField
                select
                label={t('fields.role')}
                required
                value={role}
                onChange={(e) => setRole(e.target.value as ProjectRole)}
              >
                {projectRoles.map((r) => (
                  <MenuItem key={r} value={r}>
                    {t(`roles.${r}`)}
                  </MenuItem>
                ))}
              </TextField>
            </Stack>
          </>
        )}
      </DialogContent>
      <DialogActions>
        {result ? (
          <Button variant="contained" onClick={onClose}>
            {t('common.close')}
          </Button>
        ) : (
          <>
            <Button onClick={onClose}>{t('common.cancel')}</Button>
            <Button variant="contained" disabled={create.isPending} onClick={() => void submit()}>
              {t('invites.send')}
            </Button>
          </>
        )}
      </DialogActions>
    </Dialog>
  );
}
