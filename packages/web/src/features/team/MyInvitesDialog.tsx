import {
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  List,
  ListItem,
  ListItemText,
  Stack,
} from '@mui/material';
import type { UserInvite } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { FormError } from '../../components/forms';
import { useNotify } from '../../components/snackbar';
import { useAnswerInvite, useMyInvites } from './invites-api';

/**
 * The signed-in user's invites waiting for an answer (their own, or those of an address their account was created
 * with): shown once after sign-in, each to accept (joining the project, which then opens) or decline. Later closes
 * it until the next visit.
 */
export function MyInvitesDialog() {
  const { t } = useTranslation();
  const notify = useNotify();
  const navigate = useNavigate();
  const invites = useMyInvites();
  const answer = useAnswerInvite();
  const [later, setLater] = useState(false);
  const list = invites.data ?? [];

  const reply = async (invite: UserInvite, accept: boolean) => {
    try {
      await answer.mutateAsync({ id: invite.id, accept });
      const project = invite.project_name;
      if (accept) {
        notify.success(t('invites.joined', { project }));
        navigate(`/project/${invite.project_id}`);
      } else notify.success(t('invites.declined', { project }));
    } catch {
      // Shown in the dialog.
    }
  };

  return (
    <Dialog open={!later && list.length > 0} maxWidth="sm" fullWidth aria-labelledby="my-invites-title">
      <DialogTitle id="my-invites-title">{t('invites.mineTitle')}</DialogTitle>
      <DialogContent>
        <FormError error={answer.error} />
        <List disablePadding>
          {list.map((invite) => (
            <ListItem
              key={invite.id}
              disableGutters
              divider
              sx={{
                flexDirection: { xs: 'column', sm: 'row' },
                alignItems: { xs: 'flex-start', sm: 'center' },
              }}
            >
              <ListItemText
                primary={invite.project_name}
                secondary={t('invites.mineText', {
                  inviter: invite.inviter_user?.name || t('invites.someone'),
                  project: invite.project_name,
                  role: t(`roles.${invite.role}`),
                })}
              />
              <Stack direction="row" spacing={1} sx={{ ml: { sm: 2 }, mb: { xs: 1, sm: 0 }, flexShrink: 0 }}>
                <Button disabled={answer.isPending} onClick={() => void reply(invite, false)}>
                  {t('invites.decline')}
                </Button>
                <Button
                  variant="contained"
                  disabled={answer.isPending}
                  onClick={() => void reply(invite, true)}
                >
                  {t('invites.accept')}
                </Button>
              </Stack>
            </ListItem>
          ))}
        </List>
      </DialogContent>
      <DialogActions>
        <Button onClick={() => setLater(true)}>{t('invites.later')}</Button>
      </DialogActions>
    </Dialog>
  );
}
