import { Chip, type ChipProps, Tooltip } from '@mui/material';
import { useTranslation } from 'react-i18next';

const colors: Record<string, ChipProps['color']> = {
  waiting_approval: 'warning',
  waiting: 'default',
  starting: 'info',
  waiting_confirmation: 'warning',
  confirmed: 'info',
  running: 'primary',
  success: 'success',
  error: 'error',
  rejected: 'error',
  stopping: 'warning',
  stopped: 'default',
};

/**
 * Status with its label; an unknown status shows as an error. A waiting task's `detail` (why it waits) is its
 * tooltip and accessible description.
 */
export function TaskStatusChip({
  status,
  detail,
  size = 'small',
}: {
  status: string;
  detail?: string | null;
  size?: ChipProps['size'];
}) {
  const { t } = useTranslation();
  const known = status in colors;
  const reason = status === 'waiting' && detail ? detail : null;
  const chip = (
    <Chip
      size={size}
      color={known ? colors[status] : 'error'}
      variant={status === 'running' || status === 'success' || status === 'error' ? 'filled' : 'outlined'}
      label={known ? t(`status.${status}`) : t('status.unknown', { status })}
      data-status={status}
      aria-description={reason ?? undefined}
    />
  );
  return reason ? <Tooltip title={reason}>{chip}</Tooltip> : chip;
}
