import { Chip, Tooltip } from '@mui/material';
import { useTranslation } from 'react-i18next';

/** Marks a task an AI agent started through the MCP endpoint (source `mcp`); nothing for any other task. */
export function McpChip({ source }: { source: string | null | undefined }) {
  const { t } = useTranslation();
  if (source !== 'mcp') return null;
  return (
    <Tooltip title={t('approvals.startedByAgent')}>
      <Chip
        size="small"
        variant="outlined"
        color="secondary"
        label={t('approvals.mcp')}
        data-source="mcp"
        aria-description={t('approvals.startedByAgent')}
        sx={{ ml: 0.5 }}
      />
    </Tooltip>
  );
}
