import { zodResolver } from '@hookform/resolvers/zod';
import DeleteIcon from '@mui/icons-material/Delete';
import DownloadIcon from '@mui/icons-material/Download';
import NotificationsActiveIcon from '@mui/icons-material/NotificationsActive';
import { Box, Button, Divider, Paper, Stack, Tooltip, Typography } from '@mui/material';
import { projectInput } from '@signalbox/contracts';
import { useState } from 'react';
import { type Resolver, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Navigate, useNavigate } from 'react-router';
import { api, apiText, saveFile } from '../../api/client';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { FormError } from '../../components/forms';
import { useProjectContext } from '../../components/project-context';
import { useNotify } from '../../components/snackbar';
import { writePref } from '../../lib/prefs';
import { type ProjectValues, useDeleteProject, useSaveProject } from './api';
import { ProjectFields } from './ProjectFields';

/** /project/{id}/settings: the project form, Save, Send test alert, Backup and Delete project (updateProject). */
export default function SettingsPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const notify = useNotify();
  const { project, can } = useProjectContext();
  const save = useSaveProject(project.id);
  const remove = useDeleteProject(project.id);
  const [confirming, setConfirming] = useState(false);
  const [backingUp, setBackingUp] = useState(false);
  const [testing, setTesting] = useState(false);
  const form = useForm<ProjectValues>({
    mode: 'onTouched',
    resolver: zodResolver(projectInput) as unknown as Resolver<ProjectValues>,
    values: {
      name: project.name,
      alert: project.alert,
      alert_chat: project.alert_chat ?? '',
      max_parallel_tasks: project.max_parallel_tasks ?? 0,
      task_retention_days: project.task_retention_days ?? 0,
      agent_runs_need_approval: project.agent_runs_need_approval ?? true,
    },
  });

  if (!can('updateProject')) return <Navigate to={`/project/${project.id}`} replace />;

  const submit = form.handleSubmit(async (values) => {
    try {
      await save.mutateAsync({ ...values, type: project.type });
      notify.success(t('projects.saved', { name: values.name || `#${project.id}` }));
    } catch {
      // Shown in the form's alert.
    }
  });

  /** A test alert through the configured channels, as the project's alerts are saved (the server limits how often). */
  const sendTest = async () => {
    setTesting(true);
    try {
      await api(`/project/${project.id}/notifications/test`, { method: 'POST', body: {} });
      notify.success(t('projects.testAlertSent'));
    } catch (err) {
      notify.error(err);
    } finally {
      setTesting(false);
    }
  };

  const backup = async () => {
    setBackingUp(true);
    try {
      const text = await apiText(`/project/${project.id}/backup`);
      const safe = project.name.replace(/[^\w.-]+/g, '_').slice(0, 60) || `project-${project.id}`;
      saveFile(`${safe}-backup.json`, text);
    } catch (err) {
      notify.error(err);
    } finally {
      setBackingUp(false);
    }
  };

  const confirmDelete = async () => {
    try {
      await remove.mutateAsync();
      writePref('projectId', null);
      setConfirming(false);
      notify.success(t('projects.deleted', { name: project.name || `#${project.id}` }));
      navigate('/', { replace: true });
    } catch {
      // Shown in the dialog.
    }
  };

  return (
    <Stack spacing={3} sx={{ maxWidth: 720 }}>
      <Paper variant="outlined" sx={{ p: 3 }}>
        <form onSubmit={submit} noValidate>
          <FormError error={save.error} />
          <ProjectFields form={form} serverError={save.error} retention />
          <Box sx={{ mt: 3, display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'center' }}>
            <Button type="submit" variant="contained" disabled={save.isPending}>
              {t('common.save')}
            </Button>
            <Tooltip title={project.alert ? '' : t('projects.testAlertNeedsAlerts')}>
              <span>
                <Button
                  variant="outlined"
                  startIcon={<NotificationsActiveIcon />}
                  disabled={!project.alert || testing}
                  onClick={() => void sendTest()}
                >
                  {t('projects.sendTestAlert')}
                </Button>
              </span>
            </Tooltip>
          </Box>
        </form>
      </Paper>
      <Paper variant="outlined" sx={{ p: 3 }}>
        <Typography variant="subtitle1" sx={{ fontWeight: 700 }}>
          {t('projects.backup')}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
          {t('projects.backupHint')}
        </Typography>
        <Button
          variant="outlined"
          startIcon={<DownloadIcon />}
          disabled={backingUp}
          onClick={() => void backup()}
        >
          {t('projects.backup')}
        </Button>
        <Divider sx={{ my: 3 }} />
        <Typography variant="subtitle1" sx={{ fontWeight: 700 }} color="error">
          {t('projects.deleteProject')}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
          {t('projects.deleteHint')}
        </Typography>
        <Button
          variant="outlined"
          color="error"
          startIcon={<DeleteIcon />}
          onClick={() => {
            remove.reset();
            setConfirming(true);
          }}
        >
          {t('projects.deleteProject')}
        </Button>
      </Paper>
      <ConfirmDialog
        open={confirming}
        title={t('projects.deleteConfirmTitle')}
        text={t('projects.deleteConfirmText', { name: project.name })}
        confirmLabel={t('projects.deleteProject')}
        pending={remove.isPending}
        error={remove.error}
        onConfirm={() => void confirmDelete()}
        onClose={() => setConfirming(false)}
      />
    </Stack>
  );
}
