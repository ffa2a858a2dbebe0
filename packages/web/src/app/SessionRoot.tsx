import { lazy, type ReactElement, Suspense, useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { ApiError } from '../api/client';
import { useUser } from '../api/session';
import { liveSocket } from '../api/socket';
import { ErrorPage, Spinner } from '../components/states';
import { errorText } from '../i18n/messages';
import { HomeRedirect, ProjectIndexRedirect } from './redirects';
import { Shell } from './Shell';

const UsersPage = lazy(() => import('../features/users/UsersPage'));
const RunnersPage = lazy(() => import('../features/runners/RunnersPage'));
const ProjectRunnersPage = lazy(() => import('../features/runners/ProjectRunnersPage'));
const GlobalActivityPage = lazy(() => import('../features/activity/GlobalActivityPage'));
const NewProjectPage = lazy(() => import('../features/projects/NewProjectPage'));
const ProjectLayout = lazy(() => import('../features/projects/ProjectLayout'));
const DashboardLayout = lazy(() => import('../features/dashboard/DashboardLayout'));
const HistoryPage = lazy(() => import('../features/dashboard/HistoryPage'));
const ApprovalsPage = lazy(() => import('../features/approvals/ApprovalsPage'));
const ActivityPage = lazy(() => import('../features/dashboard/ActivityPage'));
const SettingsPage = lazy(() => import('../features/projects/SettingsPage'));
const TeamPage = lazy(() => import('../features/team/TeamPage'));
const ResourcePage = lazy(() => import('../features/resources/ResourcePage'));
const TemplatesRoutes = lazy(() => import('../features/templates/TemplatesRoutes'));
const SchedulePage = lazy(() => import('../features/schedule/SchedulePage'));
const InventoryPage = lazy(() => import('../features/inventory/InventoryPage'));
const EnvironmentPage = lazy(() => import('../features/environment/EnvironmentPage'));
const KeysPage = lazy(() => import('../features/keys/KeysPage'));
const RepositoriesPage = lazy(() => import('../features/repositories/RepositoriesPage'));
const OptionListsPage = lazy(() => import('../features/option-lists/OptionListsPage'));
const StatesPage = lazy(() => import('../features/terraform-states/StatesPage'));
const IntegrationsPage = lazy(() => import('../features/integrations/IntegrationsPage'));
const IntegrationDetail = lazy(() => import('../features/integrations/IntegrationDetail'));
const WorkflowsRoutes = lazy(() => import('../features/workflows/WorkflowsRoutes'));
const RunViewPage = lazy(() => import('../features/workflows/run/RunViewPage'));

/** The pages, by route path; a path without one keeps its placeholder. */
const resourcePages: Record<string, ReactElement> = {
  'templates/*': <TemplatesRoutes />,
  'views/:viewId/templates/*': <TemplatesRoutes />,
  'workflows/*': <WorkflowsRoutes />,
  'workflow-runs/:runId': <RunViewPage />,
  schedule: <SchedulePage />,
  inventory: <InventoryPage />,
  environment: <EnvironmentPage />,
  keys: <KeysPage />,
  repositories: <RepositoriesPage />,
  option_lists: <OptionListsPage />,
  terraform_states: <StatesPage />,
  integrations: <IntegrationsPage />,
  'integration/:integrationId': <IntegrationDetail />,
};

/**
 * Project pages built in later issues (templates, schedules, inventory, environment, keys, repositories,
 * integrations): each has its route here and a page title until its feature folder provides the page.
 */
const resourceRoutes: { path: string; titleKey: string }[] = [
  { path: 'templates/*', titleKey: 'nav.templates' },
  { path: 'views/:viewId/templates/*', titleKey: 'nav.templates' },
  { path: 'workflows/*', titleKey: 'nav.workflows' },
  { path: 'workflow-runs/:runId', titleKey: 'nav.workflows' },
  { path: 'schedule', titleKey: 'nav.schedule' },
  { path: 'inventory', titleKey: 'nav.inventory' },
  { path: 'environment', titleKey: 'nav.environment' },
  { path: 'keys', titleKey: 'nav.keys' },
  { path: 'repositories', titleKey: 'nav.repositories' },
  { path: 'option_lists', titleKey: 'nav.optionLists' },
  { path: 'terraform_states', titleKey: 'nav.states' },
  { path: 'integrations', titleKey: 'nav.integrations' },
  { path: 'integration/:integrationId', titleKey: 'nav.integrations' },
];

/** Loads the signed-in user (app states: spinner, error page, success) and routes inside the shell. */
export default function SessionRoot() {
  const { t } = useTranslation();
  const location = useLocation();
  const user = useUser();
  const signedIn = !!user.data;

  useEffect(() => {
    if (!signedIn) return;
    liveSocket.start();
    return () => liveSocket.stop();
  }, [signedIn]);

  if (user.isPending) return <Spinner />;
  if (user.error) {
    if (user.error instanceof ApiError && user.error.status === 401)
      return <Navigate to={`/auth/login${location.search}`} replace />;
    return <ErrorPage message={errorText(user.error, t)} />;
  }
  return (
    <Suspense fallback={<Spinner />}>
      <Routes>
        <Route element={<Shell />}>
          <Route index element={<HomeRedirect />} />
          <Route path="users" element={<UsersPage />} />
          <Route path="runners" element={<RunnersPage />} />
          <Route path="activity" element={<GlobalActivityPage />} />
          <Route path="project/new" element={<NewProjectPage />} />
          <Route path="project/:projectId" element={<ProjectLayout />}>
            <Route index element={<ProjectIndexRedirect />} />
            <Route element={<DashboardLayout />}>
              <Route path="history" element={<HistoryPage />} />
              <Route path="activity" element={<ActivityPage />} />
              <Route path="settings" element={<SettingsPage />} />
              <Route path="runners" element={<ProjectRunnersPage />} />
            </Route>
            <Route path="team" element={<TeamPage />} />
            <Route path="approvals" element={<ApprovalsPage />} />
            {resourceRoutes.map((r) => (
              <Route
                key={r.path}
                path={r.path}
                element={resourcePages[r.path] ?? <ResourcePage titleKey={r.titleKey} />}
              />
            ))}
          </Route>
          <Route path="*" element={<Navigate to="/" replace />} />
        </Route>
      </Routes>
    </Suspense>
  );
}
