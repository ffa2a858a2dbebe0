import AddIcon from '@mui/icons-material/Add';
import ArrowBackIcon from '@mui/icons-material/ArrowBack';
import CheckIcon from '@mui/icons-material/Check';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import LockResetIcon from '@mui/icons-material/LockReset';
import PasswordIcon from '@mui/icons-material/Password';
import {
  Box,
  Button,
  Chip,
  IconButton,
  Paper,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TablePagination,
  TableRow,
  Tooltip,
} from '@mui/material';
import type { User } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Navigate, useNavigate } from 'react-router';
import { useSignedInUser } from '../../api/session';
import { ConfirmDialog, useConfirmedDelete } from '../../components/ConfirmDialog';
import { useEditDialog } from '../../components/edit-dialog';
import { FormError } from '../../components/forms';
import { Card, CardLine, CardList, usePhone } from '../../components/lists';
import { PageHeader } from '../../components/PageHeader';
import { Spinner } from '../../components/states';
import { readPref } from '../../lib/prefs';
import { useDeleteUser, useUsers } from './api';
import { PasswordDialog } from './PasswordDialog';
import { useResetTotp } from './totp-api';
import { UserDialog } from './UserDialog';

const PAGE_SIZE = 20;

const Mark = ({ on, label }: { on: boolean; label: string }) =>
  on ? <CheckIcon fontSize="small" color="success" aria-label={label} /> : null;

/** /users: every user, 20 per page (admins only). */
export default function UsersPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const me = useSignedInUser();
  const users = useUsers();
  const phone = usePhone();
  const del = useConfirmedDelete(
    useDeleteUser(),
    (u: User) => u.id,
    (u) => t('users.deleted', { name: u.name }),
  );
  const [page, setPage] = useState(0);
  const dialog = useEditDialog<User>();
  const [password, setPassword] = useState<User | null>(null);
  const resetTotp = useConfirmedDelete(
    useResetTotp(),
    (u: User) => ({ userId: u.id, totpId: u.totp?.id ?? 0 }),
    (u) => t('totp.resetDone', { name: u.name }),
  );

  if (!me.admin) return <Navigate to="/" replace />;
  const list = users.data ?? [];
  const rows = list.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
  const lastProject = readPref('projectId');
  const actions = (u: User) => (
    <>
      <Tooltip title={t('users.editUser')}>
        <IconButton aria-label={t('users.editUserNamed', { name: u.name })} onClick={() => dialog.edit(u)}>
          <EditIcon fontSize="small" />
        </IconButton>
      </Tooltip>
      <Tooltip title={t('app.changePassword')}>
        <span>
          <IconButton
            aria-label={t('users.changePasswordOf', { name: u.name })}
            disabled={u.external}
            onClick={() => setPassword(u)}
          >
            <PasswordIcon fontSize="small" />
          </IconButton>
        </span>
      </Tooltip>
      <Tooltip title={u.id === me.id ? t('totp.resetOwn') : t('totp.reset')}>
        <span>
          <IconButton
            aria-label={t('totp.resetOf', { name: u.name })}
            disabled={!u.totp || u.id === me.id}
            onClick={() => resetTotp.ask(u)}
          >
            <LockResetIcon fontSize="small" />
          </IconButton>
        </span>
      </Tooltip>
      <Tooltip title={u.id === me.id ? t('users.cannotDeleteSelf') : t('users.deleteUser')}>
        <span>
          <IconButton
            aria-label={t('users.deleteUserNamed', { name: u.name })}
            disabled={u.id === me.id}
            onClick={() => del.ask(u)}
          >
            <DeleteIcon fontSize="small" />
          </IconButton>
        </span>
      </Tooltip>
    </>
  );
  const marks = (u: User) =>
    [
      u.admin && t('fields.admin'),
      u.alert && t('fields.alert'),
      u.external && t('fields.external'),
      u.totp && t('totp.column'),
    ].filter(Boolean) as string[];

  return (
    <Box>
      <PageHeader
        title={t('users.title')}
        before={
          <Tooltip title={t('users.backToProject')}>
            <IconButton
              aria-label={t('users.backToProject')}
              onClick={() => navigate(lastProject ? `/project/${lastProject}` : '/')}
            >
              <ArrowBackIcon />
            </IconButton>
          </Tooltip>
        }
        actions={
          <Button variant="contained" startIcon={<AddIcon />} onClick={dialog.startNew}>
            {t('users.newUser')}
          </Button>
        }
      />
      <Box sx={{ p: { xs: 1, md: 3 } }}>
        {users.error && <FormError error={users.error} />}
        {users.isPending ? (
          <Spinner full={false} />
        ) : (
          <Paper
            variant={phone ? 'elevation' : 'outlined'}
            elevation={0}
            sx={phone ? { bgcolor: 'transparent' } : {}}
          >
            {phone ? (
              <CardList label={t('users.title')}>
                {rows.map((u) => (
                  <Card key={u.id} title={u.name}>
                    <CardLine label={t('fields.username')}>{u.username}</CardLine>
                    <CardLine label={t('fields.email')}>{u.email || '—'}</CardLine>
                    {marks(u).length > 0 && (
                      <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 0.5, mt: 1 }}>
                        {marks(u).map((m) => (
                          <Chip key={m} size="small" label={m} />
                        ))}
                      </Box>
                    )}
                    <Box sx={{ display: 'flex', justifyContent: 'flex-end', mt: 0.5 }}>{actions(u)}</Box>
                  </Card>
                ))}
              </CardList>
            ) : (
              <TableContainer>
                <Table size="small" sx={{ '& td, & th': { whiteSpace: 'nowrap' } }}>
                  <TableHead>
                    <TableRow>
                      <TableCell>{t('fields.name')}</TableCell>
                      <TableCell>{t('fields.username')}</TableCell>
                      <TableCell>{t('fields.email')}</TableCell>
                      <TableCell align="center">{t('fields.alert')}</TableCell>
                      <TableCell align="center">{t('fields.admin')}</TableCell>
                      <TableCell align="center">{t('fields.external')}</TableCell>
                      <TableCell align="center">{t('totp.column')}</TableCell>
                      <TableCell align="right">{t('common.actions')}</TableCell>
                    </TableRow>
                  </TableHead>
                  <TableBody>
                    {rows.map((u) => (
                      <TableRow key={u.id} hover>
                        <TableCell>{u.name}</TableCell>
                        <TableCell>{u.username}</TableCell>
                        <TableCell>{u.email}</TableCell>
                        <TableCell align="center">
                          <Mark on={u.alert} label={t('fields.alert')} />
                        </TableCell>
                        <TableCell align="center">
                          <Mark on={u.admin} label={t('fields.admin')} />
                        </TableCell>
                        <TableCell align="center">
                          <Mark on={u.external} label={t('fields.external')} />
                        </TableCell>
                        <TableCell align="center">
                          <Mark on={!!u.totp} label={t('totp.column')} />
                        </TableCell>
                        <TableCell align="right" sx={{ whiteSpace: 'nowrap' }}>
                          {actions(u)}
                        </TableCell>
                      </TableRow>
                    ))}
                  </TableBody>
                </Table>
              </TableContainer>
            )}
            <TablePagination
              component="div"
              count={list.length}
              page={Math.min(page, Math.max(0, Math.ceil(list.length / PAGE_SIZE) - 1))}
              onPageChange={(_e, p) => setPage(p)}
              rowsPerPage={PAGE_SIZE}
              rowsPerPageOptions={[PAGE_SIZE]}
              labelDisplayedRows={({ from, to, count }) => t('common.rangeOf', { from, to, count })}
              getItemAriaLabel={(type) => t(`common.page_${type}`)}
            />
          </Paper>
        )}
      </Box>
      <UserDialog open={dialog.open} user={dialog.item ?? undefined} adminEditor onClose={dialog.close} />
      {password && <PasswordDialog open user={password} onClose={() => setPassword(null)} />}
      <ConfirmDialog
        title={t('totp.reset')}
        text={t('totp.resetConfirm', { name: resetTotp.target?.name ?? '' })}
        confirmLabel={t('totp.resetButton')}
        {...resetTotp.dialogProps}
      />
      <ConfirmDialog
        title={t('users.deleteUser')}
        text={t('users.deleteConfirm', { name: del.target?.name ?? '' })}
        {...del.dialogProps}
      />
    </Box>
  );
}
