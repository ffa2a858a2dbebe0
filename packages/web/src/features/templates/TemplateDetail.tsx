import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import { Box, Button, IconButton, Paper, Tooltip, Typography } from '@mui/material';
import type { Environment, Inventory, Repository } from '@signalbox/contracts';
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { Guarded } from '../../app/access';
import { DetailHeader } from '../../app/PageHeader';
import { useProjectContext } from '../../app/project-context';
import { Spinner } from '../../app/states';
import { RunTaskDialog } from '../tasks-run/RunTaskDialog';
import { runLabelKey, useTemplate, useTemplateMutations } from './api';
import { useAppLabel } from './apps';
import { LastTasks } from './LastTasks';
import { useResourceList } from './shared/api';
import { useDeleteFlow } from './shared/DeleteFlow';
import { ErrorAlert, PageBody, useResourceNotify } from './shared/ui';

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Box sx={{ minWidth: 0 }}>
      <Typography variant="caption" color="text.secondary" component="dt">
        {label}
      </Typography>
      <Typography component="dd" sx={{ m: 0, wordBreak: 'break-word' }}>
        {children}
      </Typography>
    </Box>
  );
}

/** /project/{id}/templates/{templateId} (and under views): facts, tasks, run/edit/copy/delete. */
export function TemplateDetail({ templateId, listPath }: { templateId: number; listPath: string }) {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const navigate = useNavigate();
  const notify = useResourceNotify();
  const template = useTemplate(project.id, templateId);
  const inventories = useResourceList<Inventory>(project.id, 'inventory');
  const environments = useResourceList<Environment>(project.id, 'environment');
  const repositories = useResourceList<Repository>(project.id, 'repositories');
  const label = useAppLabel();
  const { remove } = useTemplateMutations(project.id);
  const [running, setRunning] = useState(false);
  const manage = can('manageProjectResources');
  const del = useDeleteFlow({
    projectId: project.id,
    collection: 'templates',
    objectKey: 'refs.objects.template',
    remove: (id) => remove.mutateAsync(id),
    onDeleted: (tpl) => {
      notify.success(t('tpl.deleted', { name: tpl.name }));
      navigate(listPath);
    },
  });

  if (template.isPending) return <Spinner full={false} />;
  if (template.error || !template.data)
    return (
      <PageBody>
        <ErrorAlert error={template.error} />
      </PageBody>
    );
  const tpl = template.data;
  const nameOf = (list: { id: number; name: string }[] | undefined, id: number | null) =>
    (id && list?.find((x) => x.id === id)?.name) || '—';

  return (
    <>
      <DetailHeader
        label={t('tpl.breadcrumb')}
        listLabel={t('nav.templates')}
        listPath={listPath}
        title={tpl.name}
        actions={
          <Box sx={{ display: 'flex', gap: 0.5, alignItems: 'center', ml: 'auto' }}>
            {manage && (
              <>
                <Tooltip title={t('common.delete')}>
                  <IconButton aria-label={t('tpl.delete')} onClick={() => void del.start(tpl)}>
                    <DeleteIcon />
                  </IconButton>
                </Tooltip>
                <Tooltip title={t('tpl.copy')}>
                  <IconButton
                    aria-label={t('tpl.copy')}
                    onClick={() => navigate(`${listPath}/new/edit?copy=${tpl.id}`)}
                  >
                    <ContentCopyIcon />
                  </IconButton>
                </Tooltip>
                <Tooltip title={t('res.edit')}>
                  <IconButton
                    aria-label={t('tpl.edit')}
                    onClick={() => navigate(`${listPath}/${tpl.id}/edit`)}
                  >
                    <EditIcon />
                  </IconButton>
                </Tooltip>
              </>
            )}
            <Guarded permission="runProjectTasks">
              <Button variant="contained" startIcon={<PlayArrowIcon />} onClick={() => setRunning(true)}>
                {t(runLabelKey(tpl.type))}
              </Button>
            </Guarded>
          </Box>
        }
      />
      <PageBody>
        <Paper variant="outlined" sx={{ p: 2, mb: 2 }}>
          {tpl.description && (
            <Typography sx={{ mb: 2, whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
              {tpl.description}
            </Typography>
          )}
          <Box
            component="dl"
            sx={{
              m: 0,
              display: 'grid',
              gap: 2,
              gridTemplateColumns: { xs: '1fr 1fr', md: 'repeat(6, minmax(0, 1fr))' },
            }}
          >
            <Fact label={t('tpl.col.playbook')}>{tpl.playbook || '—'}</Fact>
            <Fact label={t('res.type')}>{t(`tpl.types.${tpl.type || 'task'}`)}</Fact>
            <Fact label={t('tpl.app')}>{label(tpl.app)}</Fact>
            <Fact label={t('res.inventory')}>{nameOf(inventories.data, tpl.inventory_id)}</Fact>
            <Fact label={t('res.environment')}>{nameOf(environments.data, tpl.environment_id)}</Fact>
            <Fact label={t('res.repository')}>{nameOf(repositories.data, tpl.repository_id)}</Fact>
          </Box>
        </Paper>
        <Paper variant="outlined" sx={{ overflowX: 'auto' }}>
          <Typography variant="subtitle1" component="h2" sx={{ px: 2, pt: 1.5, fontWeight: 600 }}>
            {t('tpl.tasks')}
          </Typography>
          <LastTasks template={tpl} limit={50} />
        </Paper>
      </PageBody>
      {running && <RunTaskDialog template={tpl} onClose={() => setRunning(false)} />}
      {del.element}
    </>
  );
}
