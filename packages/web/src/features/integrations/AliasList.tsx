import AddIcon from '@mui/icons-material/Add';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import DeleteIcon from '@mui/icons-material/Delete';
import { Box, Button, IconButton, Paper, Tooltip, Typography } from '@mui/material';
import type { IntegrationAlias } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/client';
import { ErrorAlert, useResourceNotify } from '../../components/ui';

/** Aliases of an integration (or of the project when integrationId is null), with copy to clipboard. */
export function AliasList({
  projectId,
  integrationId,
  canWrite,
}: {
  projectId: number;
  integrationId: number | null;
  canWrite: boolean;
}) {
  const { t } = useTranslation();
  const notify = useResourceNotify();
  const client = useQueryClient();
  const path = integrationId
    ? `/project/${projectId}/integrations/${integrationId}/aliases`
    : `/project/${projectId}/integrations/aliases`;
  const key = ['project', projectId, 'integrations', 'aliases', integrationId ?? 'project'];
  const aliases = useQuery({ queryKey: key, queryFn: () => api<IntegrationAlias[]>(path) });
  const invalidate = () => void client.invalidateQueries({ queryKey: key });
  const add = useMutation({
    mutationFn: () => api(path, { method: 'POST', body: {} }),
    onSuccess: invalidate,
  });
  const remove = useMutation({
    mutationFn: (id: number) => api(`${path}/${id}`, { method: 'DELETE' }),
    onSuccess: invalidate,
  });

  const copy = async (url: string) => {
    try {
      if (!navigator.clipboard) throw new Error(t('integrations.clipboardUnavailable'));
      await navigator.clipboard.writeText(url);
      notify.success(t('integrations.copied'));
    } catch (err) {
      notify.error(t('integrations.copyFailed', { message: (err as Error).message || String(err) }));
    }
  };

  return (
    <Paper variant="outlined" sx={{ p: 1 }}>
      <ErrorAlert error={aliases.error} />
      {(aliases.data ?? []).length === 0 && (
        <Typography variant="body2" color="text.secondary" sx={{ p: 1 }}>
          {t('integrations.noAliases')}
        </Typography>
      )}
      {(aliases.data ?? []).map((a) => (
        <Box key={a.id} sx={{ display: 'flex', alignItems: 'center', gap: 1, py: 0.5, minWidth: 0 }}>
          <Typography
            component="code"
            data-testid="alias-url"
            sx={{ flex: 1, minWidth: 0, wordBreak: 'break-all', fontFamily: 'monospace', fontSize: 13 }}
          >
            {a.url}
          </Typography>
          <Tooltip title={t('integrations.copy')}>
            <IconButton
              aria-label={t('integrations.copyNamed', { url: a.url })}
              onClick={() => void copy(a.url)}
            >
              <ContentCopyIcon fontSize="small" />
            </IconButton>
          </Tooltip>
          {canWrite && (
            <Tooltip title={t('common.delete')}>
              <IconButton
                aria-label={t('integrations.deleteAlias', { url: a.url })}
                onClick={() => remove.mutate(a.id, { onError: (err) => notify.error(err) })}
              >
                <DeleteIcon fontSize="small" />
              </IconButton>
            </Tooltip>
          )}
        </Box>
      ))}
      {canWrite && (
        <Button
          size="small"
          startIcon={<AddIcon />}
          disabled={add.isPending}
          onClick={() => add.mutate(undefined, { onError: (err) => notify.error(err) })}
        >
          {t('integrations.addAlias')}
        </Button>
      )}
    </Paper>
  );
}
