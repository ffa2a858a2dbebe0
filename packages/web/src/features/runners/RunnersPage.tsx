import ArrowBackIcon from '@mui/icons-material/ArrowBack';
import { Box, IconButton, Tooltip } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Navigate, useNavigate } from 'react-router';
import { useSignedInUser } from '../../api/session';
import { PageHeader } from '../../app/PageHeader';
import { readPref } from '../../app/prefs';
import { RunnerList } from './RunnerList';

/** /runners: the global remote runners (admins only). */
export default function RunnersPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const me = useSignedInUser();
  if (!me.admin) return <Navigate to="/" replace />;
  const lastProject = readPref('projectId');
  return (
    <Box>
      <PageHeader
        title={t('runners.title')}
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
      />
      <Box sx={{ p: { xs: 1, md: 3 } }}>
        <RunnerList scope={{ projectId: null }} />
      </Box>
    </Box>
  );
}
