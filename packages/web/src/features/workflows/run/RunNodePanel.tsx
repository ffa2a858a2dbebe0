import ArticleIcon from '@mui/icons-material/Article';
import HowToRegIcon from '@mui/icons-material/HowToReg';
import ReplayIcon from '@mui/icons-material/Replay';
import { Box, Button, List, ListItem, ListItemText, Stack, Typography } from '@mui/material';
import type { WorkflowRun } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { formatDateTime, formatDuration } from '../../../components/format';
import { nodeLabel } from '../editor/draft';
import { RunStatusChip } from './RunStatusChip';
import { isFinished, rerunnable } from './run-items';

/**
 * One node of a run: its status, times, why it ended, the answers to an approval, and what can be done — open the
 * task's log, approve or reject, re-run the run from it.
 */
export function RunNodePanel({
  run,
  node,
  now,
  canRun,
  onOpenLog,
  onApprove,
  onRerun,
}: {
  run: WorkflowRun;
  node: WorkflowRun['nodes'][number];
  now: number;
  canRun: boolean;
  onOpenLog: (taskId: number) => void;
  onApprove: () => void;
  onRerun: () => void;
}) {
  const { t } = useTranslation();
  const state = run.node_states.find((s) => s.node_id === node.id);
  const answers = run.approvals.filter((a) => a.node_id === node.id);
  const status = state?.status ?? 'pending';
  return (
    <Stack spacing={1.5} component="section" aria-labelledby="run-node-title" data-panel-node={node.id}>
      <Typography variant="h6" component="h2" id="run-node-title">
        {t(`wf.nodeType.${node.type}`)}: {nodeLabel(node)}
      </Typography>
      <Box>
        <RunStatusChip status={status} />
      </Box>
      {state?.start && (
        <Typography variant="body2">
          {t('wf.runView.started', { time: formatDateTime(state.start) })} ·{' '}
          {formatDuration(state.start, state.end, now)}
        </Typography>
      )}
      {state && state.attempt > 1 && (
        <Typography variant="body2">{t('wf.runView.attempt', { count: state.attempt })}</Typography>
      )}
      {state?.wait_until && !state.end && (
        <Typography variant="body2">
          {t('wf.runView.waitUntil', { time: formatDateTime(state.wait_until) })}
        </Typography>
      )}
      {state?.detail && (
        <Typography variant="body2" color="text.secondary" sx={{ whiteSpace: 'pre-wrap' }}>
          {state.detail}
        </Typography>
      )}
      {answers.length > 0 && (
        <List dense aria-label={t('wf.runView.answers')}>
          {answers.map((a) => (
            <ListItem key={a.id} disableGutters>
              <ListItemText
                primary={t(`wf.runView.decision.${a.decision}`, { name: a.user_name ?? '—' })}
                secondary={[a.reason, a.valid ? '' : t('wf.runView.voided'), formatDateTime(a.created)]
                  .filter(Boolean)
                  .join(' · ')}
              />
            </ListItem>
          ))}
        </List>
      )}
      <Box sx={{ display: 'flex', gap: 1, flexWrap: 'wrap' }}>
        {state?.task_id && (
          <Button
            variant="outlined"
            startIcon={<ArticleIcon />}
            onClick={() => onOpenLog(state.task_id as number)}
          >
            {t('wf.runView.openLog', { id: state.task_id })}
          </Button>
        )}
        {status === 'waiting_approval' && (
          <Button variant="contained" color="warning" startIcon={<HowToRegIcon />} onClick={onApprove}>
            {t('wf.runView.review')}
          </Button>
        )}
        {canRun && isFinished(run) && state && rerunnable(state) && (
          <Button variant="outlined" startIcon={<ReplayIcon />} onClick={onRerun}>
            {t('wf.runView.rerunFrom')}
          </Button>
        )}
      </Box>
    </Stack>
  );
}
