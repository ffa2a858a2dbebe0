import { Link, TableCell, TableRow } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useParams } from 'react-router';
import { formatDateTime, formatDuration } from '../../../components/format';
import { DetailHeader } from '../../../components/PageHeader';
import { useProjectContext } from '../../../components/project-context';
import { ResourceTable } from '../../../components/ResourceTable';
import { PageBody, wideOnlySx } from '../../../components/ui';
import { useLiveWorkflowRuns, useWorkflow, useWorkflowRuns } from '../api';
import { RunStatusChip } from './RunStatusChip';

/** /project/{id}/workflows/{workflowId}/runs: a workflow's runs, newest first, following them live. */
export default function RunsPage() {
  const { t } = useTranslation();
  const { project } = useProjectContext();
  const workflowId = Number(useParams().workflowId);
  const workflow = useWorkflow(project.id, workflowId);
  const runs = useWorkflowRuns(project.id, workflowId);
  useLiveWorkflowRuns(project.id);
  const base = `/project/${project.id}`;
  return (
    <>
      <DetailHeader
        label={t('wf.breadcrumb')}
        listLabel={workflow.data?.name ?? t('nav.workflows')}
        listPath={`${base}/workflows/${workflowId}`}
        title={t('wf.runs.title')}
      />
      <PageBody>
        <ResourceTable
          label={t('wf.runs.title')}
          items={runs.data}
          error={runs.error ?? workflow.error}
          loading={runs.isPending}
          empty={t('wf.runs.empty')}
          withActions={false}
          head={
            <>
              <TableCell>{t('wf.runs.run')}</TableCell>
              <TableCell>{t('wf.runs.status')}</TableCell>
              <TableCell sx={wideOnlySx}>{t('wf.runs.by')}</TableCell>
              <TableCell>{t('wf.runs.started')}</TableCell>
              <TableCell sx={wideOnlySx}>{t('wf.runs.duration')}</TableCell>
            </>
          }
        >
          {(run) => (
            <TableRow key={run.id} hover data-run-id={run.id}>
              <TableCell>
                <Link component={RouterLink} to={`${base}/workflow-runs/${run.id}`} sx={{ fontWeight: 600 }}>
                  {`#${run.id}`}
                </Link>{' '}
                {run.message}
              </TableCell>
              <TableCell>
                <RunStatusChip status={run.status} />
              </TableCell>
              <TableCell sx={wideOnlySx}>{run.user_name ?? t(`wf.runSource.${run.source}`)}</TableCell>
              <TableCell>{formatDateTime(run.created)}</TableCell>
              <TableCell sx={wideOnlySx}>{formatDuration(run.start, run.end)}</TableCell>
            </TableRow>
          )}
        </ResourceTable>
      </PageBody>
    </>
  );
}
