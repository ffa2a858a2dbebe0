import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import { Box, Button, Chip, IconButton, Link, Paper, Tooltip, Typography } from '@mui/material';
import type { Environment, Inventory, Repository } from '@signalbox/contracts';
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useNavigate } from 'react-router';
import { useResourceList } from '../../api/resources';
import { Guarded } from '../../components/access';
import { useDeleteFlow } from '../../components/DeleteFlow';
import { DetailHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { Spinner } from '../../components/states';
import { ErrorAlert, PageBody, useResourceNotify } from '../../components/ui';
import { RunTaskDialog } from '../tasks-run';
import { runLabelKey, useTemplate, useTemplateMutations } from './api';
import { playbookLabelKey, useAppLabel } from './apps';
import { DriftPanel } from './DriftPanel';
import { LastTasks } from './LastTasks';

function Fact({ label, children, wide }: { label: string; children: ReactNode; wide?: boolean }) {
  return (
    <Box sx={{ minWidth: 0, gridColumn: wide ? '1 / -1' : undefined }}>
      <Typography variant="caption" color="text.secondary" component="dt">
        {label}
      </Typography>
      <Typography component="dd" sx={{ m: 0, overflowWrap: 'anywhere', whiteSpace: 'pre-wrap' }}>
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
  const buildId = template.data?.type === 'deploy' ? (template.data.build_template_id ?? 0) : 0;
  const buildTemplate = useTemplate(project.id, buildId, buildId > 0);
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
          <Box
            component="dl"
            sx={{
              m: 0,
              display: 'grid',
              gap: 2,
              gridTemplateColumns: { xs: '1fr 1fr', md: 'repeat(6, minmax(0, 1fr))' },
            }}
          >
            <Fact label={t('res.description')} wide>
              {tpl.description || '—'}
            </Fact>
            <Fact label={t(playbookLabelKey(tpl.app))}>{tpl.playbook || '—'}</Fact>
            <Fact label={t('res.type')}>{t(`tpl.types.${tpl.type || 'task'}`)}</Fact>
            <Fact label={t('tpl.app')}>{label(tpl.app)}</Fact>
            <Fact label={t('res.inventory')}>{nameOf(inventories.data, tpl.inventory_id)}</Fact>
            <Fact label={t('res.environment')}>{nameOf(environments.data, tpl.environment_id)}</Fact>
            <Fact label={t('res.repository')}>{nameOf(repositories.data, tpl.repository_id)}</Fact>
            {tpl.type === 'build' && <Fact label={t('tpl.startVersion')}>{tpl.start_version || '—'}</Fact>}
            {tpl.type === 'deploy' && (
              <>
                <Fact label={t('tpl.buildTemplate')}>
                  {tpl.build_template_id ? (
                    <Link component={RouterLink} to={`${listPath}/${tpl.build_template_id}`}>
                      {buildTemplate.data?.name ?? `#${tpl.build_template_id}`}
                    </Link>
                  ) : (
                    '—'
                  )}
                </Fact>
                <Fact label={t('layout.autorun')}>{t(tpl.autorun ? 'layout.yes' : 'layout.no')}</Fact>
              </>
            )}
            <Fact label={t('layout.surveyVars')} wide>
              {tpl.survey_vars.length === 0 ? (
                '—'
              ) : (
                <Box component="span" sx={{ display: 'flex', flexWrap: 'wrap', gap: 0.5, mt: 0.5 }}>
                  {tpl.survey_vars.map((v) => (
                    <Chip
                      key={v.name}
                      size="small"
                      variant="outlined"
                      label={`${v.title || v.name} (${v.name})`}
                      title={`${t(`survey.types.${v.type || 'string'}`)}${v.required ? ` · ${t('layout.required')}` : ''}${v.description ? ` · ${v.description}` : ''}`}
                    />
                  ))}
                </Box>
              )}
            </Fact>
          </Box>
        </Paper>
        <DriftPanel projectId={project.id} template={tpl} />
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
