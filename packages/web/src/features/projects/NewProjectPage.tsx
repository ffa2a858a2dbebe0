import { zodResolver } from '@hookform/resolvers/zod';
import { Box, Button, Paper, Stack, Typography } from '@mui/material';
import { projectInput } from '@signalbox/contracts';
import { useState } from 'react';
import { type Resolver, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Navigate, useNavigate } from 'react-router';
import { useProjects, useSignedInUser } from '../../api/session';
import { FormError } from '../../components/forms';
import { PageHeader } from '../../components/PageHeader';
import { useNotify } from '../../components/snackbar';
import { type ProjectValues, useCreateProject } from './api';
import { ProjectFields } from './ProjectFields';
import RestoreProjectDialog from './RestoreProjectDialog';

export const projectName = (p: { name?: string; id: number }) => p.name || `#${p.id}`;

/** /project/new: Create and Create Demo Project (users with can_create_project, and admins). */
export default function NewProjectPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const notify = useNotify();
  const user = useSignedInUser();
  const projects = useProjects().data ?? [];
  const create = useCreateProject();
  const [restoring, setRestoring] = useState(false);
  const form = useForm<ProjectValues>({
    mode: 'onTouched',
    resolver: zodResolver(projectInput) as unknown as Resolver<ProjectValues>,
    defaultValues: { name: '', alert: false, alert_chat: '', max_parallel_tasks: 0 },
  });
  const canCreate = user.admin || user.can_create_project;

  const run = async (values: Partial<ProjectValues> & { demo?: boolean }) => {
    try {
      const project = await create.mutateAsync(values);
      notify.success(t('projects.created', { name: projectName(project) }));
      navigate(`/project/${project.id}`);
    } catch {
      // Shown in the form's alert.
    }
  };
  const submit = form.handleSubmit((values) => run(values));
  const demo = () => run({ name: form.getValues('name').trim() || t('projects.demoName'), demo: true });

  if (!canCreate && projects.length > 0) return <Navigate to="/" replace />;

  return (
    <Box>
      <PageHeader title={t('projects.newTitle')} />
      <Box sx={{ p: { xs: 2, md: 3 }, maxWidth: 640 }}>
        {!canCreate ? (
          <Paper variant="outlined" sx={{ p: 3 }}>
            <Typography>{t('projects.noProjectsNoRights')}</Typography>
          </Paper>
        ) : (
          <Paper variant="outlined" sx={{ p: 3 }}>
            {projects.length === 0 && (
              <Typography color="text.secondary" sx={{ mb: 2 }}>
                {t('projects.noProjectsIntro')}
              </Typography>
            )}
            <form onSubmit={submit} noValidate>
              <FormError error={create.error} />
              <ProjectFields form={form} serverError={create.error} />
              <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5} sx={{ mt: 3 }}>
                <Button type="submit" variant="contained" disabled={create.isPending}>
                  {t('common.create')}
                </Button>
                <Button variant="outlined" disabled={create.isPending} onClick={() => void demo()}>
                  {t('projects.createDemo')}
                </Button>
                <Box sx={{ flex: 1 }} />
                <Button onClick={() => setRestoring(true)}>{t('app.restoreProject')}</Button>
              </Stack>
            </form>
            <Typography variant="body2" color="text.secondary" sx={{ mt: 2 }}>
              {t('projects.demoHint')}
            </Typography>
          </Paper>
        )}
      </Box>
      <RestoreProjectDialog open={restoring} onClose={() => setRestoring(false)} />
    </Box>
  );
}
