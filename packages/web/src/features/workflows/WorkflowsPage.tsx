import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import HistoryIcon from '@mui/icons-material/History';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import VisibilityIcon from '@mui/icons-material/VisibilityOutlined';
import { Box, IconButton, Link, TableCell, TableRow, Tooltip } from '@mui/material';
import type { Workflow, WorkflowRunStatus } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useNavigate } from 'react-router';
import { ConfirmDialog, useConfirmedDelete } from '../../components/ConfirmDialog';
import { formatDateTime } from '../../components/format';
import { fitCellSx, Truncated } from '../../components/lists';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { NewButton, ResourceTable } from '../../components/ResourceTable';
import { actionsSx, PageBody, wideOnlySx } from '../../components/ui';
import { useLiveWorkflowRuns, useWorkflowDelete, useWorkflows } from './api';
import { RunStatusChip } from './run/RunStatusChip';
import { StartRunDialog } from './run/StartRunDialog';

/**
 * /project/{id}/workflows: the project's workflows with their last run. Managers and owners create, edit and
 * delete; task runners and above start runs; everyone in the project sees them.
 */
export default function WorkflowsPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const navigate = useNavigate();
  const list = useWorkflows(project.id);
  useLiveWorkflowRuns(project.id);
  const remove = useWorkflowDelete(project.id);
  const deleting = useConfirmedDelete(
    remove,
    (w: Workflow) => w.id,
    (w) => t('wf.deleted', { name: w.name }),
  );
  const [running, setRunning] = useState<Workflow | null>(null);
  const manage = can('manageProjectResources');
  const base = `/project/${project.id}/workflows`;
  const sorted = [...(list.data ?? [])].sort((a, b) => a.name.localeCompare(b.name));

  return (
    <>
      <PageHeader
        title={t('nav.workflows')}
        actions={manage && <NewButton label={t('wf.newButton')} onClick={() => navigate(`${base}/new`)} />}
      />
      <PageBody>
        <ResourceTable
          label={t('nav.workflows')}
          items={sorted}
          error={list.error}
          loading={list.isPending}
          empty={t('wf.empty')}
          head={
            <>
              <TableCell>{t('wf.name')}</TableCell>
              <TableCell sx={wideOnlySx}>{t('wf.description')}</TableCell>
              <TableCell>{t('wf.lastRun')}</TableCell>
            </>
          }
        >
          {(w) => (
            <TableRow key={w.id} hover data-workflow-id={w.id}>
              <TableCell sx={{ maxWidth: 0, width: '35%' }}>
                <Truncated text={w.name}>
                  <Link component={RouterLink} to={`${base}/${w.id}`} sx={{ fontWeight: 600 }}>
                    {w.name}
                  </Link>
                </Truncated>
              </TableCell>
              <TableCell sx={{ ...wideOnlySx, maxWidth: 0, width: '40%' }}>
                <Truncated text={w.description || '—'} />
              </TableCell>
              <TableCell sx={fitCellSx}>
                {w.last_run ? (
                  <Box sx={{ display: 'flex', gap: 1, alignItems: 'center' }}>
                    <Link component={RouterLink} to={`/project/${project.id}/workflow-runs/${w.last_run.id}`}>
                      {`#${w.last_run.id}`}
                    </Link>
                    <RunStatusChip status={w.last_run.status as WorkflowRunStatus} />
                    <Box component="span" sx={{ display: { xs: 'none', md: 'inline' } }}>
                      {formatDateTime(w.last_run.created)}
                    </Box>
                  </Box>
                ) : (
                  '—'
                )}
              </TableCell>
              <TableCell align="right" sx={actionsSx}>
                {can('runProjectTasks') && (
                  <Tooltip title={t('wf.run')}>
                    <IconButton aria-label={t('wf.runNamed', { name: w.name })} onClick={() => setRunning(w)}>
                      <PlayArrowIcon fontSize="small" />
                    </IconButton>
                  </Tooltip>
                )}
                <Tooltip title={t('wf.runs.title')}>
                  <IconButton
                    aria-label={t('wf.runs.named', { name: w.name })}
                    component={RouterLink}
                    to={`${base}/${w.id}/runs`}
                  >
                    <HistoryIcon fontSize="small" />
                  </IconButton>
                </Tooltip>
                <Tooltip title={manage ? t('res.edit') : t('access.view')}>
                  <IconButton
                    aria-label={t(manage ? 'res.editNamed' : 'access.viewNamed', { name: w.name })}
                    component={RouterLink}
                    to={`${base}/${w.id}`}
                  >
                    {manage ? <EditIcon fontSize="small" /> : <VisibilityIcon fontSize="small" />}
                  </IconButton>
                </Tooltip>
                {manage && (
                  <Tooltip title={t('common.delete')}>
                    <IconButton
                      aria-label={t('res.deleteNamed', { name: w.name })}
                      onClick={() => deleting.ask(w)}
                    >
                      <DeleteIcon fontSize="small" />
                    </IconButton>
                  </Tooltip>
                )}
              </TableCell>
            </TableRow>
          )}
        </ResourceTable>
      </PageBody>
      <ConfirmDialog
        {...deleting.dialogProps}
        title={t('wf.deleteTitle')}
        text={t('wf.deleteText', { name: deleting.target?.name ?? '' })}
      />
      {running && <StartRunDialog workflow={running} onClose={() => setRunning(null)} />}
    </>
  );
}
