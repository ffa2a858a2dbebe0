import { Box, Tab, Tabs } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Navigate, Outlet, Link as RouterLink, useLocation } from 'react-router';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';

/** Dashboard tabs: History (projects whose type is empty), Activity, Settings and Runners (updateProject). */
export default function DashboardLayout() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const location = useLocation();
  const tabs = [
    ...(project.type ? [] : ['history']),
    'activity',
    ...(can('updateProject') ? ['settings', 'runners'] : []),
  ];
  const current = location.pathname.split('/').pop() ?? '';
  if (!tabs.includes(current)) return <Navigate to={`/project/${project.id}/${tabs[0]}`} replace />;
  return (
    <Box>
      <PageHeader title={project.name} />
      <Tabs
        value={current}
        variant="scrollable"
        allowScrollButtonsMobile
        sx={{ px: { xs: 1, md: 2 }, borderBottom: 1, borderColor: 'divider', bgcolor: 'background.paper' }}
      >
        {tabs.map((tab) => (
          <Tab
            key={tab}
            value={tab}
            label={tab === 'runners' ? t('runners.tab') : t(`dashboard.${tab}`)}
            component={RouterLink}
            to={`/project/${project.id}/${tab}`}
          />
        ))}
      </Tabs>
      <Box sx={{ p: { xs: 1, md: 3 } }}>
        <Outlet />
      </Box>
    </Box>
  );
}
