import MenuIcon from '@mui/icons-material/Menu';
import { AppBar, Box, Drawer, IconButton, Toolbar, Typography, useMediaQuery } from '@mui/material';
import { lazy, Suspense, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Outlet, useLocation, useSearchParams } from 'react-router';
import { useProjects } from '../api/session';
import { Spinner } from '../components/states';
import { ApprovalsBadge } from '../features/approvals';
import { MyInvitesDialog } from '../features/team/MyInvitesDialog';
import { DrawerContent } from './DrawerContent';
import { LiveStatusBanner } from './LiveStatusBanner';

const loadTaskLogDialog = () => import('../features/tasks/TaskLogDialog');
const TaskLogDialog = lazy(loadTaskLogDialog);

export const DRAWER_WIDTH = 260;

/**
 * The app shell: the left drawer only under /project/ (temporary below 960 px), the page, the task dialog, and the
 * signed-in user's invites waiting for an answer.
 */
export function Shell() {
  const { t } = useTranslation();
  const location = useLocation();
  const [params] = useSearchParams();
  const wide = useMediaQuery('(min-width:960px)', { noSsr: true });
  const [open, setOpen] = useState(false);
  const withDrawer = location.pathname.startsWith('/project/');
  const projectMatch = /^\/project\/(\d+)/.exec(location.pathname);
  const projectId = projectMatch ? Number(projectMatch[1]) : null;
  const taskId = Number(params.get('t'));
  // Inside a project the phone's top bar names it; elsewhere the product.
  const projects = useProjects();
  const projectName = projects.data?.find((p) => p.id === projectId)?.name;

  // The log dialog opens from any page: fetch its code once the page is idle so it opens at once.
  useEffect(() => {
    const id = setTimeout(() => void loadTaskLogDialog(), 1500);
    return () => clearTimeout(id);
  }, []);

  const drawer = <DrawerContent projectId={projectId} onNavigate={() => setOpen(false)} />;

  return (
    <Box sx={{ display: 'flex', minHeight: '100vh' }}>
      {withDrawer &&
        (wide ? (
          <Drawer
            variant="permanent"
            sx={{ width: DRAWER_WIDTH, flexShrink: 0, '& .MuiDrawer-paper': { width: DRAWER_WIDTH } }}
          >
            {drawer}
          </Drawer>
        ) : (
          <Drawer
            variant="temporary"
            open={open}
            onClose={() => setOpen(false)}
            ModalProps={{ keepMounted: true }}
            sx={{ '& .MuiDrawer-paper': { width: DRAWER_WIDTH } }}
          >
            {drawer}
          </Drawer>
        ))}
      <Box component="main" sx={{ flexGrow: 1, minWidth: 0, display: 'flex', flexDirection: 'column' }}>
        {withDrawer && !wide && (
          <AppBar
            position="sticky"
            color="default"
            elevation={0}
            sx={{ borderBottom: 1, borderColor: 'divider' }}
          >
            <Toolbar variant="dense">
              <IconButton edge="start" aria-label={t('app.openMenu')} onClick={() => setOpen(true)}>
                <MenuIcon />
              </IconButton>
              <Typography variant="subtitle1" noWrap sx={{ ml: 1, fontWeight: 700, minWidth: 0, flex: 1 }}>
                {projectName ?? t('app.title')}
              </Typography>
              {projectId && <ApprovalsBadge projectId={projectId} />}
            </Toolbar>
          </AppBar>
        )}
        <LiveStatusBanner />
        <Suspense fallback={<Spinner full={false} />}>
          <Outlet />
        </Suspense>
      </Box>
      {taskId > 0 && (
        <Suspense fallback={null}>
          <TaskLogDialog taskId={taskId} projectId={projectId} />
        </Suspense>
      )}
      <MyInvitesDialog />
    </Box>
  );
}
