import AccountTreeIcon from '@mui/icons-material/AccountTree';
import AddIcon from '@mui/icons-material/Add';
import ArrowDropDownIcon from '@mui/icons-material/ArrowDropDown';
import ChecklistIcon from '@mui/icons-material/Checklist';
import DashboardIcon from '@mui/icons-material/Dashboard';
import DnsIcon from '@mui/icons-material/Dns';
import GroupIcon from '@mui/icons-material/Group';
import HowToRegIcon from '@mui/icons-material/HowToReg';
import KeyIcon from '@mui/icons-material/Key';
import LayersIcon from '@mui/icons-material/Layers';
import ListAltIcon from '@mui/icons-material/ListAlt';
import ScheduleIcon from '@mui/icons-material/Schedule';
import SettingsInputComponentIcon from '@mui/icons-material/SettingsInputComponent';
import SourceIcon from '@mui/icons-material/Source';
import TuneIcon from '@mui/icons-material/Tune';
import UploadFileIcon from '@mui/icons-material/UploadFile';
import {
  Box,
  Divider,
  List,
  ListItemButton,
  ListItemIcon,
  ListItemText,
  Menu,
  MenuItem,
  Typography,
} from '@mui/material';
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { NavLink, useLocation, useNavigate } from 'react-router';
import { useProject, useProjects, useUser } from '../api/session';
import { usePickLabels } from '../components/pick-labels';
import { ApprovalsBadge } from '../features/approvals';
import RestoreProjectDialog from '../features/projects/RestoreProjectDialog';
import { DrawerFooter } from './DrawerFooter';
import { ProjectAvatar } from './ProjectAvatar';

type NavItem = { to: string; key: string; icon: ReactNode; match?: RegExp };

/** Nav items in menu order; Integrations only for projects whose type is empty. */
function navItems(projectType: string): NavItem[] {
  const items: NavItem[] = [
    { to: 'history', key: 'nav.dashboard', icon: <DashboardIcon />, match: /\/(history|activity|settings)$/ },
    { to: 'templates', key: 'nav.templates', icon: <ListAltIcon />, match: /\/(templates|views)(\/|$)/ },
    {
      to: 'workflows',
      key: 'nav.workflows',
      icon: <AccountTreeIcon />,
      match: /\/(workflows|workflow-runs)(\/|$)/,
    },
    { to: 'schedule', key: 'nav.schedule', icon: <ScheduleIcon /> },
    { to: 'inventory', key: 'nav.inventory', icon: <DnsIcon /> },
    { to: 'environment', key: 'nav.environment', icon: <TuneIcon /> },
    { to: 'keys', key: 'nav.keys', icon: <KeyIcon /> },
    { to: 'repositories', key: 'nav.repositories', icon: <SourceIcon /> },
    { to: 'option_lists', key: 'nav.optionLists', icon: <ChecklistIcon /> },
    { to: 'terraform_states', key: 'nav.states', icon: <LayersIcon /> },
    {
      to: 'integrations',
      key: 'nav.integrations',
      icon: <SettingsInputComponentIcon />,
      match: /\/integrations?(\/|$)/,
    },
    { to: 'team', key: 'nav.team', icon: <GroupIcon /> },
    // Last: an addition to the menu of the spec, for runs AI agents started that wait for a person.
    { to: 'approvals', key: 'nav.approvals', icon: <HowToRegIcon /> },
  ];
  if (projectType) items[0].to = 'activity';
  return projectType ? items.filter((i) => i.to !== 'integrations') : items;
}

export function DrawerContent({
  projectId,
  onNavigate,
}: {
  projectId: number | null;
  onNavigate: () => void;
}) {
  const { t } = useTranslation();
  const labelled = usePickLabels();
  const navigate = useNavigate();
  const { pathname } = useLocation();
  const user = useUser().data;
  const projects = useProjects().data ?? [];
  const current = useProject(projectId ?? 0);
  const project = projectId ? current.data : undefined;
  const [menu, setMenu] = useState<HTMLElement | null>(null);
  const [restoring, setRestoring] = useState(false);
  const canCreate = !!user && (user.admin || user.can_create_project);

  const go = (to: string) => {
    setMenu(null);
    onNavigate();
    navigate(to);
  };

  return (
    <Box sx={{ display: 'flex', flexDirection: 'column', height: '100%' }}>
      <Box sx={{ display: 'flex', alignItems: 'center' }}>
        <ListItemButton
          aria-label={t('app.selectProject')}
          aria-haspopup="menu"
          onClick={(e) => setMenu(e.currentTarget)}
          sx={{ py: 1.5, minHeight: 64, flexGrow: 1, minWidth: 0 }}
        >
          {project ? (
            <ProjectAvatar project={project} />
          ) : (
            <Box
              component="img"
              src={`${import.meta.env.BASE_URL}favicon.svg`}
              alt=""
              sx={{ width: 32, height: 32 }}
            />
          )}
          <Typography noWrap sx={{ ml: 1.5, flex: 1, fontWeight: 700 }}>
            {project?.name ?? t('app.selectProject')}
          </Typography>
          <ArrowDropDownIcon />
        </ListItemButton>
        {project && <ApprovalsBadge projectId={project.id} />}
      </Box>
      <Menu
        anchorEl={menu}
        open={!!menu}
        onClose={() => setMenu(null)}
        slotProps={{ paper: { sx: { minWidth: 240 } } }}
      >
        {labelled(projects).map((p) => (
          <MenuItem key={p.id} selected={p.id === projectId} onClick={() => go(`/project/${p.id}`)}>
            <ListItemIcon>
              <ProjectAvatar project={p} size={24} />
            </ListItemIcon>
            <ListItemText>{p.name}</ListItemText>
          </MenuItem>
        ))}
        {projects.length > 0 && canCreate && <Divider />}
        {canCreate && (
          <MenuItem onClick={() => go('/project/new')}>
            <ListItemIcon>
              <AddIcon />
            </ListItemIcon>
            <ListItemText>{t('app.newProject')}</ListItemText>
          </MenuItem>
        )}
        {canCreate && (
          <MenuItem
            onClick={() => {
              setMenu(null);
              setRestoring(true);
            }}
          >
            <ListItemIcon>
              <UploadFileIcon />
            </ListItemIcon>
            <ListItemText>{t('app.restoreProject')}</ListItemText>
          </MenuItem>
        )}
      </Menu>
      <Divider />
      {project && (
        <List component="nav" aria-label={t('app.projectNavigation')} sx={{ px: 1 }}>
          {navItems(project.type).map((item) => (
            <ListItemButton
              key={item.key}
              component={NavLink}
              to={`/project/${project.id}/${item.to}`}
              onClick={onNavigate}
              selected={item.match ? item.match.test(pathname) : undefined}
              sx={{ borderRadius: 2, mb: 0.25, '&.active': { bgcolor: 'action.selected' } }}
            >
              <ListItemIcon sx={{ minWidth: 40 }}>{item.icon}</ListItemIcon>
              <ListItemText primary={t(item.key)} />
            </ListItemButton>
          ))}
        </List>
      )}
      {!project && projects.length > 0 && (
        // No project open (a new project's page, say): the projects to go to rather than an empty drawer.
        <List component="nav" aria-label={t('app.selectProject')} sx={{ px: 1 }}>
          {labelled(projects).map((p) => (
            <ListItemButton
              key={p.id}
              component={NavLink}
              to={`/project/${p.id}`}
              onClick={onNavigate}
              sx={{ borderRadius: 2, mb: 0.25 }}
            >
              <ListItemIcon sx={{ minWidth: 40 }}>
                <ProjectAvatar project={p} size={24} />
              </ListItemIcon>
              <ListItemText primary={p.name} />
            </ListItemButton>
          ))}
        </List>
      )}
      <Box sx={{ flex: 1 }} />
      <Divider />
      <DrawerFooter />
      <RestoreProjectDialog open={restoring} onClose={() => setRestoring(false)} />
    </Box>
  );
}
