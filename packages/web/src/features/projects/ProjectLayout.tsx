import { Alert, Box, Button } from '@mui/material';
import { useEffect, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { Outlet, Link as RouterLink, useParams } from 'react-router';
import { useProject, useProjectRole } from '../../api/session';
import { makeCan, ProjectContext, type ProjectContextValue } from '../../components/project-context';
import { Spinner } from '../../components/states';
import { errorText } from '../../i18n/messages';
import { writePref } from '../../lib/prefs';

/** /project/{id}/…: loads the project and the caller's role, remembers it as the last project. */
export default function ProjectLayout() {
  const { t } = useTranslation();
  const projectId = Number(useParams().projectId);
  const project = useProject(projectId);
  const role = useProjectRole(projectId);

  useEffect(() => {
    if (project.data) writePref('projectId', String(project.data.id));
  }, [project.data]);

  const value = useMemo<ProjectContextValue | null>(() => {
    if (!project.data || !role.data) return null;
    return {
      project: project.data,
      role: role.data.role,
      permissions: role.data.permissions,
      can: makeCan(role.data.permissions),
    };
  }, [project.data, role.data]);

  const error = project.error ?? role.error;
  if (error)
    return (
      <Box sx={{ p: 3 }}>
        <Alert
          severity="error"
          action={
            <Button color="inherit" component={RouterLink} to="/">
              {t('common.home')}
            </Button>
          }
        >
          {errorText(error, t)}
        </Alert>
      </Box>
    );
  if (!value) return <Spinner full={false} />;
  return (
    <ProjectContext.Provider value={value}>
      <Outlet />
    </ProjectContext.Provider>
  );
}
