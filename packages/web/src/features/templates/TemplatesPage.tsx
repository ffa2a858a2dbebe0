import AddIcon from '@mui/icons-material/Add';
import EditIcon from '@mui/icons-material/Edit';
import ExpandMoreIcon from '@mui/icons-material/ExpandMore';
import ViewColumnIcon from '@mui/icons-material/ViewColumn';
import { Box, Button, IconButton, Menu, MenuItem, Tab, Tabs, Tooltip, useMediaQuery } from '@mui/material';
import type { Template } from '@signalbox/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { useLayoutEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Navigate, Link as RouterLink, useLocation, useNavigate, useParams } from 'react-router';
import { useLiveConnection, useLiveMessages } from '../../api/live';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { Spinner } from '../../components/states';
import { ErrorAlert, PageBody } from '../../components/ui';
import { RunTaskDialog } from '../tasks-run';
import { EditViewsDialog } from '../views';
import { readLastView, templateKeys, useTemplates, useViews, writeLastView } from './api';
import { activeApps, appLabel, useApps } from './apps';
import { ColumnSettings } from './ColumnSettings';
import { useColumns } from './columns';
import { TemplatesTable } from './TemplatesTable';

/** /project/{id}/templates and /project/{id}/views/{viewId}/templates. */
export default function TemplatesPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const navigate = useNavigate();
  const location = useLocation();
  const client = useQueryClient();
  const viewId = Number(useParams().viewId) || null;
  const views = useViews(project.id);
  const templates = useTemplates(project.id, viewId);
  // New templates of the apps the server has active (SIGNALBOX_APPS), in its order.
  const registry = useApps();
  const apps = activeApps(registry.data);
  const columns = useColumns();
  const [appMenu, setAppMenu] = useState<HTMLElement | null>(null);
  const [columnsOpen, setColumnsOpen] = useState(false);
  const [editViews, setEditViews] = useState(false);
  const [running, setRunning] = useState<Template | null>(null);
  const manage = can('manageProjectResources');
  const phone = useMediaQuery('(max-width:600px)', { noSsr: true });
  const base = `/project/${project.id}`;
  const knownView = !viewId || views.data?.some((v) => v.id === viewId);

  // A layout effect: remembered in the same task as the navigation, so leaving at once still remembers it.
  useLayoutEffect(() => {
    if (views.data && knownView) writeLastView(project.id, viewId);
  }, [views.data, knownView, project.id, viewId]);

  // Updates for a template's task refresh its last task.
  useLiveMessages((m) => {
    if (m.type === 'update' && m.project_id === project.id)
      void client.invalidateQueries({ queryKey: templateKeys.all(project.id) });
  });
  useLiveConnection(() => void client.invalidateQueries({ queryKey: templateKeys.all(project.id) }));

  // The last visited view is remembered per project; the All tab says so in its link state.
  const lastView = readLastView(project.id);
  const chooseAll = (location.state as { all?: boolean } | null)?.all;
  if (!viewId && lastView && !chooseAll && views.data?.some((v) => v.id === lastView))
    return <Navigate to={`${base}/views/${lastView}/templates`} replace />;
  // An unknown view in the route goes to the project's templates page.
  if (viewId && views.data && !knownView) {
    writeLastView(project.id, null);
    return <Navigate to={`${base}/templates`} replace state={{ all: true }} />;
  }

  const newTemplate = (app: string) => navigate(`${base}/templates/new/edit?app=${app}`);
  const tabValue = viewId ?? 0;

  return (
    <>
      <PageHeader
        title={t('nav.templates')}
        actions={
          <>
            <Tooltip title={t('tpl.columns')}>
              <IconButton aria-label={t('tpl.columns')} onClick={() => setColumnsOpen(true)}>
                <ViewColumnIcon />
              </IconButton>
            </Tooltip>
            {manage && (
              <>
                <Button
                  variant="contained"
                  disabled={apps.length === 0}
                  aria-label={phone ? t('tpl.new') : undefined}
                  startIcon={phone ? undefined : <AddIcon />}
                  endIcon={apps.length > 1 ? <ExpandMoreIcon /> : undefined}
                  aria-haspopup={apps.length > 1 ? 'menu' : undefined}
                  aria-controls={appMenu ? 'new-template-menu' : undefined}
                  aria-expanded={!!appMenu}
                  onClick={(e) =>
                    apps.length > 1 ? setAppMenu(e.currentTarget) : apps[0] && newTemplate(apps[0])
                  }
                >
                  {phone ? <AddIcon /> : t('tpl.new')}
                </Button>
                <Menu
                  id="new-template-menu"
                  anchorEl={appMenu}
                  open={!!appMenu}
                  onClose={() => setAppMenu(null)}
                >
                  {apps.map((app) => (
                    <MenuItem key={app} onClick={() => newTemplate(app)}>
                      {appLabel(t, app, registry.data)}
                    </MenuItem>
                  ))}
                </Menu>
              </>
            )}
          </>
        }
      />
      <Box
        sx={{
          display: 'flex',
          alignItems: 'center',
          borderBottom: 1,
          borderColor: 'divider',
          px: { xs: 0, md: 2 },
        }}
      >
        <Tabs
          value={views.data ? tabValue : false}
          variant="scrollable"
          scrollButtons="auto"
          allowScrollButtonsMobile
          aria-label={t('views.tabs')}
          sx={{ flex: 1, minWidth: 0 }}
        >
          <Tab
            value={0}
            label={t('views.all')}
            component={RouterLink}
            to={`${base}/templates`}
            state={{ all: true }}
            onClick={() => writeLastView(project.id, null)}
          />
          {(views.data ?? []).map((v) => (
            <Tab
              key={v.id}
              value={v.id}
              label={v.title}
              component={RouterLink}
              to={`${base}/views/${v.id}/templates`}
              // Remembered on the click too: the route change renders in a transition, after the URL changes.
              onClick={() => writeLastView(project.id, v.id)}
            />
          ))}
        </Tabs>
        {manage && (
          <Tooltip title={t('views.editTitle')}>
            <IconButton aria-label={t('views.editTitle')} onClick={() => setEditViews(true)} sx={{ mx: 1 }}>
              <EditIcon fontSize="small" />
            </IconButton>
          </Tooltip>
        )}
      </Box>
      <PageBody>
        <ErrorAlert error={templates.error ?? views.error} />
        {templates.isPending ? (
          <Spinner full={false} />
        ) : (
          <TemplatesTable
            templates={templates.data ?? []}
            visible={columns.visible}
            detailBase={viewId ? `${base}/views/${viewId}/templates` : `${base}/templates`}
            onRun={setRunning}
          />
        )}
      </PageBody>
      <ColumnSettings
        open={columnsOpen}
        onClose={() => setColumnsOpen(false)}
        visible={columns.visible}
        toggle={columns.toggle}
      />
      {editViews && (
        <EditViewsDialog
          projectId={project.id}
          views={views.data ?? []}
          onClose={() => setEditViews(false)}
        />
      )}
      {running && <RunTaskDialog template={running} onClose={() => setRunning(null)} />}
    </>
  );
}
