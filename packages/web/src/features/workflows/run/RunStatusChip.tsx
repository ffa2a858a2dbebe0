import { Chip, type ChipProps } from '@mui/material';
import type { WorkflowNodeStatus, WorkflowRunStatus } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { statusColor } from '../graph/status-colors';

/** A run's or node's status with its label and colour; `data-status` names it for tests and styles. */
export function RunStatusChip({
  status,
  size = 'small',
}: {
  status: WorkflowRunStatus | WorkflowNodeStatus;
  size?: ChipProps['size'];
}) {
  const { t } = useTranslation();
  const filled = status === 'running' || status === 'success' || status === 'failed';
  return (
    <Chip
      size={size}
      color={statusColor[status] ?? 'error'}
      variant={filled ? 'filled' : 'outlined'}
      label={t(`wf.status.${status}`)}
      data-status={status}
    />
  );
}
