import LockOutlinedIcon from '@mui/icons-material/LockOutlined';
import { Box, Button, Paper, Tooltip, Typography } from '@mui/material';
import type { PermissionName } from '@signalbox/contracts';
import { cloneElement, type ReactElement, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { useOptionalProject, useProjectContext } from './project-context';

/**
 * What the signed-in user may do in the current project, from the permission bits of their role (GET
 * project/{id}/role; admins hold every bit). `allowed` says whether an action is open, `why` says in plain words
 * why it is not (for a disabled action's tooltip).
 */
export function useCan() {
  const { t } = useTranslation();
  const { can } = useProjectContext();
  return {
    allowed: can,
    why: (permission: PermissionName) => t(`access.why.${permission}`),
  };
}

/**
 * An action the role may lack: shown as is when `permission` is held, otherwise disabled with a tooltip saying
 * why (the tooltip sits on a wrapper, since a disabled button gets no pointer events). Outside a project route
 * (a dialog over any page) pass `can`, the permissions of the project the action is about.
 */
export function Guarded({
  permission,
  can,
  children,
}: {
  permission: PermissionName;
  can?: (permission: PermissionName) => boolean;
  children: ReactElement<{ disabled?: boolean }>;
}) {
  const { t } = useTranslation();
  const project = useOptionalProject();
  const allowed = can ?? project?.can;
  if (!allowed) throw new Error('Guarded outside a project route needs `can`');
  if (allowed(permission)) return children;
  const reason = t(`access.why.${permission}`);
  return (
    <Tooltip title={reason}>
      <span data-denied={permission} style={{ display: 'inline-flex' }}>
        {cloneElement(children, { disabled: true })}
      </span>
    </Tooltip>
  );
}

/**
 * A page the role may not use (a template's edit page for a task runner): says so and why, with a way back,
 * instead of a form whose Save would be refused.
 */
export function NotAllowed({
  title,
  permission,
  backTo,
  backLabel,
}: {
  title: string;
  permission: PermissionName;
  backTo: string;
  backLabel: string;
}): ReactNode {
  const { t } = useTranslation();
  const { role } = useProjectContext();
  return (
    <Box sx={{ p: { xs: 1, md: 3 } }}>
      <Paper
        variant="outlined"
        role="status"
        sx={{ p: { xs: 2, md: 4 }, maxWidth: 560, mx: 'auto', textAlign: 'center' }}
      >
        <LockOutlinedIcon color="action" sx={{ fontSize: 40 }} />
        <Typography variant="h6" component="h1" sx={{ mt: 1 }}>
          {title}
        </Typography>
        <Typography color="text.secondary" sx={{ mt: 1, mb: 3 }}>
          {t(`access.why.${permission}`)}
          {role ? ` ${t('access.yourRole', { role: t(`roles.${role}`) })}` : ''}
        </Typography>
        <Button variant="contained" component={RouterLink} to={backTo}>
          {backLabel}
        </Button>
      </Paper>
    </Box>
  );
}
