import ArrowBackIcon from '@mui/icons-material/ArrowBack';
import { Box, FormControlLabel, IconButton, Switch, Tooltip, Typography } from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Navigate, useNavigate } from 'react-router';
import { useInfo, useSignedInUser } from '../../api/session';
import { PageHeader } from '../../components/PageHeader';
import { readPref } from '../../lib/prefs';
import { RunnerList } from './RunnerList';
import { SandboxChip } from './RunnerSandbox';

/** /runners: the global remote runners, and with a switch every project's too (admins only). */
export default function RunnersPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const me = useSignedInUser();
  const [all, setAll] = useState(false);
  const serverSandbox = useInfo().data?.task_sandbox;
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
        {serverSandbox && (
          <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, mb: 2 }} data-testid="server-sandbox">
            <Typography variant="body2" color="text.secondary">
              {t('runners.serverSandbox')}
            </Typography>
            <SandboxChip sandbox={serverSandbox} />
          </Box>
        )}
        <RunnerList
          scope={{ projectId: null, all }}
          filter={
            <FormControlLabel
              control={<Switch checked={all} onChange={(e) => setAll(e.target.checked)} />}
              label={t('runners.showProjectRunners')}
            />
          }
        />
      </Box>
    </Box>
  );
}
