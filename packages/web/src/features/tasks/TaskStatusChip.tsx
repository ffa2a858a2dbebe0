import { Chip, type ChipProps } from '@mui/material';
import { useTranslation } from 'react-i18next';

const colors: Record<string, ChipProps['color']> = {
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

/** Status with its label; an unknown status shows as an error. */
export function TaskStatusChip({ status, size = 'small' }: { status: string; size?: ChipProps['size'] }) {
  const { t } = useTranslation();
  const known = status in colors;
  return (
    <Chip
      size={size}
      color={known ? colors[status] : 'error'}
      variant={status === 'running' || status === 'success' || status === 'error' ? 'filled' : 'outlined'}
      label={known ? t(`status.${status}`) : t('status.unknown', { status })}
      data-status={status}
    />
  );
}
