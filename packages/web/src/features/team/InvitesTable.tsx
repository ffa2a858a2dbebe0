import CancelScheduleSendIcon from '@mui/icons-material/CancelScheduleSend';
import {
  IconButton,
  Paper,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Tooltip,
  Typography,
} from '@mui/material';
import type { ProjectInvite } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { ConfirmDialog, useConfirmedDelete } from '../../components/ConfirmDialog';
import { formatDateTime } from '../../components/format';
import { useInviteMutations, useInvites } from './invites-api';

/** Phones leave out the expiry column, so the actions stay in view. */
const wide = { display: { xs: 'none', sm: 'table-cell' } } as const;

/** Who an invite is for: the user's name, or the address nobody has an account for yet. */
const inviteeOf = (invite: ProjectInvite) => invite.user?.name || invite.email;

/**
 * The project's invites (every member reads them): whom, the role, the status and expiry; the manage-team bit
 * withdraws one. Nothing shows while the project has none.
 */
export function InvitesTable({ projectId, manage }: { projectId: number; manage: boolean }) {
  const { t } = useTranslation();
  const invites = useInvites(projectId);
  const { withdraw } = useInviteMutations(projectId);
  const removal = useConfirmedDelete(
    withdraw,
    (invite: ProjectInvite) => invite.id,
    (invite) => t('invites.withdrawn', { name: inviteeOf(invite) }),
  );
  const list = invites.data ?? [];
  if (list.length === 0) return null;
  return (
    <>
      <Typography variant="h6" component="h2" sx={{ mt: 3, mb: 1 }}>
        {t('invites.title')}
      </Typography>
      <Paper variant="outlined">
        <TableContainer>
          <Table
            size="small"
            sx={{ '& td, & th': { whiteSpace: 'nowrap' }, '& td:first-of-type': { whiteSpace: 'normal' } }}
            aria-label={t('invites.title')}
          >
            <TableHead>
              <TableRow>
                <TableCell>{t('invites.invited')}</TableCell>
                <TableCell>{t('fields.role')}</TableCell>
                <TableCell>{t('invites.status')}</TableCell>
                <TableCell sx={wide}>{t('invites.expires')}</TableCell>
                {manage && <TableCell align="right">{t('common.actions')}</TableCell>}
              </TableRow>
            </TableHead>
            <TableBody>
              {list.map((invite) => (
                <TableRow key={invite.id} hover>
                  <TableCell>
                    <span style={{ overflowWrap: 'anywhere' }}>{inviteeOf(invite)}</span>
                    {!invite.user && (
                      <Typography
                        component="span"
                        color="text.secondary"
                        variant="body2"
                        sx={{ display: { xs: 'block', sm: 'inline' } }}
                      >
                        {` (${t('invites.noAccount')})`}
                      </Typography>
                    )}
                  </TableCell>
                  <TableCell>{t(`roles.${invite.role}`)}</TableCell>
                  <TableCell>{t(`invites.statuses.${invite.status}`)}</TableCell>
                  <TableCell sx={wide}>{formatDateTime(invite.expires_at)}</TableCell>
                  {manage && (
                    <TableCell align="right">
                      <Tooltip title={t('invites.withdrawNamed', { name: inviteeOf(invite) })}>
                        <IconButton
                          aria-label={t('invites.withdrawNamed', { name: inviteeOf(invite) })}
                          onClick={() => removal.ask(invite)}
                        >
                          <CancelScheduleSendIcon fontSize="small" />
                        </IconButton>
                      </Tooltip>
                    </TableCell>
                  )}
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </TableContainer>
      </Paper>
      <ConfirmDialog
        title={t('invites.withdrawTitle')}
        text={t('invites.withdrawConfirm', { name: removal.target ? inviteeOf(removal.target) : '' })}
        confirmLabel={t('invites.withdrawTitle')}
        {...removal.dialogProps}
      />
    </>
  );
}
