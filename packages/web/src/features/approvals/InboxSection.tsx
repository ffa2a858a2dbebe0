import {
  Button,
  Link,
  Paper,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import type { ApprovalInboxItem } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { formatDateTime } from '../../components/format';
import { FormError } from '../../components/forms';
import { Spinner } from '../../components/states';
import { ApprovalActions } from '../tasks';
import { ApprovalDialog, type ApprovalTarget, useApprovalInbox } from '../workflows';

const targetOf = (item: ApprovalInboxItem): ApprovalTarget => ({
  projectId: item.project_id,
  runId: item.run_id ?? 0,
  nodeId: item.node_id ?? '',
  nodeName: item.node_name ?? item.node_id ?? '',
  workflowName: item.workflow_name ?? '',
  message: item.message,
  digest: item.input_digest,
  given: item.approvals_given,
  required: item.approvals_required,
});

/**
 * What waits for the signed-in user's decision across their projects (GET /api/approvals): workflow approval
 * nodes they may approve, and agent runs of other projects. The current project's agent runs are listed above it.
 */
export function InboxSection({ projectId }: { projectId: number }) {
  const { t } = useTranslation();
  const inbox = useApprovalInbox();
  const [reviewing, setReviewing] = useState<ApprovalTarget | null>(null);
  const items = (inbox.data ?? []).filter((i) => !(i.kind === 'task' && i.project_id === projectId));
  return (
    <section aria-labelledby="inbox-title">
      <Typography variant="h6" component="h2" id="inbox-title" sx={{ mt: 3, mb: 1 }}>
        {t('approvals.inbox.title')}
      </Typography>
      {inbox.isPending ? (
        <Spinner full={false} />
      ) : inbox.error ? (
        <FormError error={inbox.error} />
      ) : (
        <Paper variant="outlined">
          <TableContainer>
            <Table size="small" aria-label={t('approvals.inbox.title')}>
              <TableHead>
                <TableRow>
                  <TableCell>{t('approvals.inbox.what')}</TableCell>
                  <TableCell>{t('approvals.inbox.project')}</TableCell>
                  <TableCell>{t('approvals.message')}</TableCell>
                  <TableCell>{t('history.user')}</TableCell>
                  <TableCell>{t('approvals.inbox.since')}</TableCell>
                  <TableCell />
                </TableRow>
              </TableHead>
              <TableBody>
                {items.map((item) => (
                  <InboxRow
                    key={item.kind === 'task' ? `t${item.task_id}` : `r${item.run_id}-${item.node_id}`}
                    item={item}
                    onReview={() => setReviewing(targetOf(item))}
                  />
                ))}
              </TableBody>
            </Table>
          </TableContainer>
          {items.length === 0 && (
            <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
              {t('approvals.inbox.empty')}
            </Typography>
          )}
        </Paper>
      )}
      {reviewing && <ApprovalDialog target={reviewing} onClose={() => setReviewing(null)} />}
    </section>
  );
}

function InboxRow({ item, onReview }: { item: ApprovalInboxItem; onReview: () => void }) {
  const { t } = useTranslation();
  const base = `/project/${item.project_id}`;
  return (
    <TableRow hover data-inbox-kind={item.kind} data-run-id={item.run_id ?? undefined}>
      <TableCell>
        {item.kind === 'task' ? (
          <>
            <Link component={RouterLink} to={`${base}/history?t=${item.task_id}`} sx={{ fontWeight: 600 }}>
              {`#${item.task_id}`}
            </Link>{' '}
            {item.template_name}
          </>
        ) : (
          <>
            <Link component={RouterLink} to={`${base}/workflow-runs/${item.run_id}`} sx={{ fontWeight: 600 }}>
              {t('approvals.inbox.run', { workflow: item.workflow_name, id: item.run_id })}
            </Link>
            {` · ${item.node_name}`}
            {item.approvals_required !== null &&
              ` (${t('wf.approval.progress', { given: item.approvals_given ?? 0, required: item.approvals_required })})`}
          </>
        )}
      </TableCell>
      <TableCell>{item.project_name}</TableCell>
      <TableCell sx={{ whiteSpace: 'pre-wrap' }}>{item.message || '—'}</TableCell>
      <TableCell>{item.started_by ?? '—'}</TableCell>
      <TableCell>{formatDateTime(item.since)}</TableCell>
      <TableCell align="right">
        {item.kind === 'task' ? (
          <ApprovalActions projectId={item.project_id} taskId={item.task_id ?? 0} />
        ) : (
          <Button variant="contained" color="warning" size="small" onClick={onReview}>
            {t('wf.runView.review')}
          </Button>
        )}
      </TableCell>
    </TableRow>
  );
}
