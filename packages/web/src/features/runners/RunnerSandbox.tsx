import { Chip, Tooltip } from '@mui/material';
import type { Runner } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { sandboxView } from './api';

/** A runner's (or the server's) task sandbox as a chip: off is a warning, refused an error; why on hover. */
export function SandboxChip({
  sandbox,
}: {
  sandbox: { mode: string; reason?: string | null } | null | undefined;
}) {
  const { t } = useTranslation();
  const view = sandboxView(sandbox);
  return (
    <Tooltip title={t(view.help, { reason: view.reason })}>
      <Chip
        size="small"
        color={view.color}
        variant={view.color === 'success' || view.color === 'default' ? 'outlined' : 'filled'}
        label={t(view.label)}
        data-sandbox={sandbox?.mode ?? 'unknown'}
      />
    </Tooltip>
  );
}

/** The runner's version, and when it speaks another protocol version than the server, an "incompatible" chip. */
export function RunnerVersion({ runner }: { runner: Runner }) {
  const { t } = useTranslation();
  return (
    <>
      {runner.version || '—'}
      {runner.incompatible && (
        <Tooltip title={t('runners.incompatibleHelp', { protocol: runner.protocol ?? '?' })}>
          <Chip size="small" color="error" label={t('runners.incompatible')} sx={{ ml: 1 }} />
        </Tooltip>
      )}
    </>
  );
}
