import {
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
import { FormError, useSaveAndClose } from '../../components/forms';
import { memberUserId, type ProjectMember, useCandidates, useTeamMutations } from './api';

/** Add member: user and role are required. */
export function AddMemberDialog({
  open,
  projectId,
  members,
  onClose,
}: {
  open: boolean;
  projectId: number;
  members: ProjectMember[];
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const users = useCandidates(projectId, open);
  const { add } = useTeamMutations(projectId);
  const [userId, setUserId] = useState<number | ''>('');
  const [role, setRole] = useState<ProjectRole | ''>('task_runner');
  const [touched, setTouched] = useState(false);

  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the dialog opens
  useEffect(() => {
    if (open) {
      setUserId('');
      setRole('task_runner');
      setTouched(false);
      add.reset();
    }
  }, [open]);

  const taken = new Set(members.map(memberUserId));
  const candidates = (users.data ?? []).filter((u) => !taken.has(u.id));

  const saveAndClose = useSaveAndClose(add, onClose);
  const submit = async () => {
    setTouched(true);
    if (!userId || !role) return;
    const name = users.data?.find((u) => u.id === userId)?.name ?? '';
    await saveAndClose({ user_id: userId, role }, t('team.added', { name }));
  };

  return (
    <Dialog open={open} onClose={onClose} maxWidth="xs" fullWidth>
      <DialogTitle>{t('team.addMember')}</DialogTitle>
      <DialogContent>
        <FormError error={add.error ?? users.error} />
        <Stack spacing={2} sx={{ mt: 1 }}>
          <TextField
            select
            label={t('fields.user')}
            required
            value={userId}
            onChange={(e) => setUserId(Number(e.target.value))}
            error={touched && !userId}
            helperText={
              touched && !userId ? t('validation.required', { field: t('fields.user') }) : undefined
            }
          >
            {candidates.map((u) => (
              <MenuItem key={u.id} value={u.id}>
                {`${u.name} (${u.username})`}
              </MenuItem>
            ))}
          </TextField>
          <TextField
            select
            label={t('fields.role')}
            required
            value={role}
            onChange={(e) => setRole(e.target.value as ProjectRole)}
            error={touched && !role}
            helperText={touched && !role ? t('validation.required', { field: t('fields.role') }) : undefined}
          >
            {projectRoles.map((r) => (
              <MenuItem key={r} value={r}>
                {t(`roles.${r}`)}
              </MenuItem>
            ))}
          </TextField>
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.cancel')}</Button>
        <Button variant="contained" disabled={add.isPending} onClick={() => void submit()}>
          {t('team.add')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
