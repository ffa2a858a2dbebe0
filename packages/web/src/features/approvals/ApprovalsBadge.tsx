import HowToRegIcon from '@mui/icons-material/HowToReg';
import { Badge, IconButton, Tooltip } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { useApprovalInbox } from '../workflows';

/** The app bar's approvals button: how many things wait for the signed-in user, opening the approvals page. */
export function ApprovalsBadge({ projectId }: { projectId: number }) {
  const { t } = useTranslation();
  const count = useApprovalInbox().data?.length ?? 0;
  const label = t('approvals.badge', { count });
  return (
    <Tooltip title={label}>
      <IconButton
        component={RouterLink}
        to={`/project/${projectId}/approvals`}
        aria-label={label}
        data-testid="approvals-badge"
        data-count={count}
        sx={{ mr: 0.5 }}
      >
        <Badge badgeContent={count} color="warning" max={99}>
          <HowToRegIcon />
        </Badge>
      </IconButton>
    </Tooltip>
  );
}
