import DeleteIcon from '@mui/icons-material/Delete';
import ForwardToInboxIcon from '@mui/icons-material/ForwardToInbox';
import LogoutIcon from '@mui/icons-material/Logout';
import PersonAddIcon from '@mui/icons-material/PersonAdd';
import {
  Alert,
  Box,
  Button,
  IconButton,
  MenuItem,
  Paper,
  Select,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Tooltip,
  Typography,
} from '@mui/material';
import { type ProjectRole, projectRoles } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { baseUrl } from '../../api/client';
import { useSignedInUser } from '../../api/session';
import { ConfirmDialog, useConfirmedDelete } from '../../components/ConfirmDialog';
import { FormError } from '../../components/forms';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { useNotify } from '../../components/snackbar';
import { Spinner } from '../../components/states';
import { AddMemberDialog } from './AddMemberDialog';
import { memberUserId, type ProjectMember, useTeam, useTeamMutations } from './api';
import { InviteDialog } from './InviteDialog';
import { InvitesTable } from './InvitesTable';

/** Phones leave out the username column, so role and actions stay in view. */
const wide = { display: { xs: 'none', sm: 'table-cell' } } as const;

/** /project/{id}/team: members, inline role change, add, remove, Leave Project; invites by e-mail and their list. */
export default function TeamPage() {
  const { t } = useTranslation();
  const notify = useNotify();
  const me = useSignedInUser();
  const { project, role, can } = useProjectContext();
  const team = useTeam(project.id);
  const { setRole, remove, leave } = useTeamMutations(project.id);
  const [adding, setAdding] = useState(false);
  const [inviting, setInviting] = useState(false);
  const removal = useConfirmedDelete(
    remove,
    (m: ProjectMember) => memberUserId(m),
    (m) => t('team.removed', { name: m.name }),
  );
  const [leaving, setLeaving] = useState(false);
  const manage = can('manageProjectUsers');
  const members = team.data ?? [];
  // A project keeps at least one owner: its last one cannot be removed (the server refuses it too).
  const owners = members.filter((m) => m.role === 'owner').length;
  const isLastOwner = (m: (typeof members)[number]) => m.role === 'owner' && owners <= 1;

  const changeRole = async (m: ProjectMember, next: ProjectRole) => {
    try {
      await setRole.mutateAsync({ userId: memberUserId(m), role: next });
      notify.success(t('team.roleChanged', { name: m.name, role: t(`roles.${next}`) }));
    } catch (err) {
      notify.error(err);
    }
  };
  const confirmLeave = async () => {
    try {
      await leave.mutateAsync();
      window.location.assign(`${baseUrl}/`);
    } catch {
      // Shown in the dialog.
    }
  };

  return (
    <Box>
      <PageHeader
        title={t('nav.team')}
        actions={
          <>
            <Tooltip title={role === 'owner' ? t('team.ownerCannotLeave') : ''}>
              <span>
                <Button
                  startIcon={<LogoutIcon />}
                  disabled={role === 'owner' || !role}
                  onClick={() => {
                    leave.reset();
                    setLeaving(true);
                  }}
                >
                  {t('team.leave')}
                </Button>
              </span>
            </Tooltip>
            {manage && (
              <Button startIcon={<ForwardToInboxIcon />} onClick={() => setInviting(true)}>
                {t('invites.invite')}
              </Button>
            )}
            {manage && (
              <Button variant="contained" startIcon={<PersonAddIcon />} onClick={() => setAdding(true)}>
                {t('team.addMember')}
              </Button>
            )}
          </>
        }
      />
      <Box sx={{ p: { xs: 1, md: 3 } }}>
        <Alert severity={can('runProjectTasks') ? 'success' : 'info'} sx={{ mb: 2 }}>
          {can('runProjectTasks') ? t('team.canRun') : t('team.readOnly')}
        </Alert>
        {team.error && <FormError error={team.error} />}
        {team.isPending ? (
          <Spinner full={false} />
        ) : (
          <Paper variant="outlined">
            <TableContainer>
              <Table size="small" sx={{ '& td, & th': { whiteSpace: 'nowrap' } }} aria-label={t('nav.team')}>
                <TableHead>
                  <TableRow>
                    <TableCell>{t('fields.name')}</TableCell>
                    <TableCell sx={wide}>{t('fields.username')}</TableCell>
                    <TableCell sx={{ width: { sm: 200 } }}>{t('fields.role')}</TableCell>
                    {manage && <TableCell align="right">{t('common.actions')}</TableCell>}
                  </TableRow>
                </TableHead>
                <TableBody>
                  {members.map((m) => (
                    <TableRow key={memberUserId(m)} hover>
                      <TableCell>
                        {m.name}
                        {memberUserId(m) === me.id && (
                          <Typography component="span" color="text.secondary" variant="body2">
                            {` ${t('team.you')}`}
                          </Typography>
                        )}
                      </TableCell>
                      <TableCell sx={wide}>{m.username}</TableCell>
                      <TableCell>
                        {manage ? (
                          <Select
                            size="small"
                            variant="standard"
                            value={m.role}
                            inputProps={{ 'aria-label': t('team.roleOf', { name: m.name }) }}
                            onChange={(e) => void changeRole(m, e.target.value as ProjectRole)}
                          >
                            {projectRoles.map((r) => (
                              <MenuItem key={r} value={r}>
                                {t(`roles.${r}`)}
                              </MenuItem>
                            ))}
                          </Select>
                        ) : (
                          t(`roles.${m.role}`)
                        )}
                      </TableCell>
                      {manage && (
                        <TableCell align="right">
                          {/* The disabled button sits in a span so its tooltip (why) still shows. */}
                          <Tooltip title={isLastOwner(m) ? t('team.lastOwner') : t('team.remove')}>
                            <span>
                              <IconButton
                                aria-label={t('team.removeNamed', { name: m.name })}
                                disabled={isLastOwner(m)}
                                onClick={() => removal.ask(m)}
                              >
                                <DeleteIcon fontSize="small" />
                              </IconButton>
                            </span>
                          </Tooltip>
                        </TableCell>
                      )}
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            </TableContainer>
            {members.length === 0 && (
              <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
                {t('team.empty')}
              </Typography>
            )}
          </Paper>
        )}
        <InvitesTable projectId={project.id} manage={manage} />
      </Box>
      <InviteDialog open={inviting} projectId={project.id} onClose={() => setInviting(false)} />
      <AddMemberDialog
        open={adding}
        projectId={project.id}
        members={members}
        onClose={() => setAdding(false)}
      />
      <ConfirmDialog
        title={t('team.remove')}
        text={t('team.removeConfirm', { name: removal.target?.name ?? '' })}
        confirmLabel={t('team.remove')}
        {...removal.dialogProps}
      />
      <ConfirmDialog
        open={leaving}
        title={t('team.leave')}
        text={t('team.leaveConfirm', { name: project.name })}
        confirmLabel={t('team.leave')}
        pending={leave.isPending}
        error={leave.error}
        onConfirm={() => void confirmLeave()}
        onClose={() => setLeaving(false)}
      />
    </Box>
  );
}
