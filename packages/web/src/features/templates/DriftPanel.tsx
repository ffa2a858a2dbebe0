import SyncIcon from '@mui/icons-material/Sync';
import { Box, Button, Chip, Link, Paper, Stack, Tooltip, Typography } from '@mui/material';
import type { Template, TemplateDrift } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useLocation, useSearchParams } from 'react-router';
import { ApiError, api } from '../../api/client';
import { Guarded } from '../../components/access';
import { formatDateTime } from '../../components/format';
import { FormError } from '../../components/forms';
import { useNotify } from '../../components/snackbar';
import type { Task } from '../tasks';
import { templateKeys } from './api';

/** The apps that can be checked for drift. */
export const driftApps: readonly string[] = ['terraform', 'tofu', 'terragrunt'];

/** GET templates/{id}/drift: the template's last drift check, null when it has none. */
export const useTemplateDrift = (projectId: number, templateId: number, enabled: boolean) =>
  useQuery({
    queryKey: [...templateKeys.one(projectId, templateId), 'drift'] as const,
    enabled,
    retry: false,
    queryFn: async () => {
      try {
        return await api<TemplateDrift>(`/project/${projectId}/templates/${templateId}/drift`);
      } catch (err) {
        if (err instanceof ApiError && err.body?.code === 'template_has_no_drift') return null;
        throw err;
      }
    },
  });

/** The drift badge of a template in the lists: a link to its drift view. */
export function DriftBadge({ template, to }: { template: Template; to: string }) {
  const { t } = useTranslation();
  if (template.drift !== 'drifted') return null;
  return (
    <Tooltip title={t('drift.badgeHelp')}>
      <Chip
        size="small"
        color="warning"
        label={t('drift.badge')}
        component={RouterLink}
        to={to}
        clickable
        data-drift-badge
        sx={{ ml: 0.5 }}
      />
    </Tooltip>
  );
}

/**
 * The drift view of a template: whether its last check found drift, since when, what differs (resources changed
 * outside Terraform, and changes the plan would make, with the attribute paths; never values), and Reconcile, which
 * starts the normal run of the template (plan, confirmation, apply).
 */
export function DriftPanel({ projectId, template }: { projectId: number; template: Template }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const client = useQueryClient();
  const location = useLocation();
  const [params, setParams] = useSearchParams();
  const checks =
    driftApps.includes(template.app) && (!!template.task_params.drift_check || template.drift !== null);
  const drift = useTemplateDrift(projectId, template.id, checks);
  const reconcile = useMutation({
    mutationFn: () =>
      api<Task>(`/project/${projectId}/templates/${template.id}/reconcile`, { method: 'POST' }),
    onSuccess: () => void client.invalidateQueries({ queryKey: templateKeys.all(projectId) }),
  });
  if (!checks) return null;
  const taskLink = (id: number) => {
    const next = new URLSearchParams(params);
    next.set('t', String(id));
    return `${location.pathname}?${next}`;
  };
  const onReconcile = async () => {
    try {
      const task = await reconcile.mutateAsync();
      notify.success(t('drift.reconcileStarted', { id: task.id }));
      const next = new URLSearchParams(params);
      next.set('t', String(task.id));
      setParams(next);
    } catch (err) {
      notify.error(err);
    }
  };
  const d = drift.data;
  return (
    <Paper
      variant="outlined"
      sx={{ p: 2, mb: 2 }}
      component="section"
      aria-label={t('drift.title')}
      data-drift-view
    >
      <Stack direction="row" sx={{ alignItems: 'center', gap: 1, flexWrap: 'wrap' }}>
        <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600 }}>
          {t('drift.title')}
        </Typography>
        {d && (
          <Chip
            size="small"
            color={d.status === 'drifted' ? 'warning' : 'success'}
            label={t(d.status === 'drifted' ? 'drift.drifted' : 'drift.inSync')}
            data-drift-status={d.status}
          />
        )}
        <Box sx={{ flex: 1 }} />
        {d?.status === 'drifted' && (
          <Guarded permission="runProjectTasks">
            <Button
              variant="contained"
              color="warning"
              startIcon={<SyncIcon />}
              disabled={reconcile.isPending}
              onClick={() => void onReconcile()}
              data-reconcile
            >
              {t('drift.reconcile')}
            </Button>
          </Guarded>
        )}
      </Stack>
      {drift.error && <FormError error={drift.error} />}
      {drift.data === null && (
        <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
          {t('drift.never')}
        </Typography>
      )}
      {d && (
        <>
          <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
            {d.since ? `${t('drift.since', { at: formatDateTime(d.since) })} · ` : ''}
            {t('drift.checked', { at: formatDateTime(d.checked_at) })}
            {' · '}
            <Link component={RouterLink} to={taskLink(d.task_id)}>
              {t('drift.checkTask', { id: d.task_id })}
            </Link>
            {d.ignored > 0 ? ` · ${t('drift.ignored', { n: d.ignored })}` : ''}
          </Typography>
          {d.resources.length > 0 && (
            <Box
              component="ul"
              sx={{ listStyle: 'none', m: 0, mt: 1, p: 0, maxHeight: '40vh', overflow: 'auto' }}
            >
              {d.resources.map((r) => (
                <Box
                  component="li"
                  key={`${r.kind}:${r.address}`}
                  data-drift-address={r.address}
                  sx={{
                    py: 0.25,
                    overflowWrap: 'anywhere',
                    color: r.action === 'delete' || r.action === 'replace' ? 'error.main' : undefined,
                  }}
                >
                  <Box component="code" sx={{ fontFamily: 'monospace', fontWeight: 500 }}>
                    {r.address}
                  </Box>
                  <Typography component="span" variant="caption" sx={{ ml: 1 }}>
                    {r.kind === 'drift'
                      ? t('drift.outside', { action: t(`plan.group.${r.action}`) })
                      : t('drift.planned', { action: t(`plan.group.${r.action}`) })}
                  </Typography>
                  {r.paths.length > 0 && (
                    <Box
                      component="span"
                      sx={{ ml: 1, color: 'text.secondary', fontFamily: 'monospace', fontSize: '0.8rem' }}
                    >
                      {r.paths.join(', ')}
                    </Box>
                  )}
                </Box>
              ))}
            </Box>
          )}
          {d.omitted > 0 && (
            <Typography variant="caption" color="text.secondary" component="p">
              {t('plan.omitted', { n: d.omitted })}
            </Typography>
          )}
        </>
      )}
    </Paper>
  );
}
