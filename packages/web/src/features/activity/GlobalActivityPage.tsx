import ArrowBackIcon from '@mui/icons-material/ArrowBack';
import { Box, IconButton, Tooltip } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Navigate, useNavigate } from 'react-router';
import { useSignedInUser } from '../../api/session';
import { PageHeader } from '../../components/PageHeader';
import { readPref } from '../../lib/prefs';
import { EventLog } from './EventLog';

/** /activity: the events of every project, users and sign-ins included (admins only). */
export default function GlobalActivityPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const me = useSignedInUser();
  if (!me.admin) return <Navigate to="/" replace />;
  const lastProject = readPref('projectId');
  return (
    <Box>
      <PageHeader
        title={t('activity.globalTitle')}
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
        <EventLog scope={{ global: true }} />
      </Box>
    </Box>
  );
}
