import UploadFileIcon from '@mui/icons-material/UploadFile';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { FormError } from '../../components/forms';
import { useNotify } from '../../components/snackbar';
import { useRestoreProject } from './api';

/** Restore a project from a backup file made by Backup (POST /api/projects/restore). */
export default function RestoreProjectDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const notify = useNotify();
  const restore = useRestoreProject();
  const [file, setFile] = useState<File | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the dialog opens
  useEffect(() => {
    if (open) {
      setFile(null);
      restore.reset();
    }
  }, [open]);

  const submit = async () => {
    if (!file) return;
    try {
      const project = await restore.mutateAsync(await file.text());
      const id = typeof project === 'number' ? project : project.id;
      const name = typeof project === 'object' && project.name ? project.name : `#${id}`;
      notify.success(t('projectRestore.restored', { name }));
      onClose();
      navigate(`/project/${id}`);
    } catch {
      // Shown in the alert.
    }
  };

  return (
    <Dialog open={open} onClose={onClose} maxWidth="xs" fullWidth>
      <DialogTitle>{t('app.restoreProject')}</DialogTitle>
      <DialogContent>
        <FormError error={restore.error} />
        <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
          {t('projects.restoreHint')}
        </Typography>
        <Button component="label" variant="outlined" startIcon={<UploadFileIcon />}>
          {t('projects.chooseFile')}
          <input
            hidden
            type="file"
            accept="application/json,.json"
            aria-label={t('projects.backupFile')}
            onChange={(e) => setFile(e.target.files?.[0] ?? null)}
          />
        </Button>
        {file && (
          <Typography variant="body2" sx={{ mt: 1, wordBreak: 'break-all' }}>
            {file.name}
          </Typography>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.cancel')}</Button>
        <Button variant="contained" disabled={!file || restore.isPending} onClick={() => void submit()}>
          {t('projects.restore')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
