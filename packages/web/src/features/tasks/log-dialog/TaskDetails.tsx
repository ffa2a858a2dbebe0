import { Alert, Box, Typography } from '@mui/material';
import type { Environment } from '@signalbox/contracts';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useResourceList } from '../../../api/resources';
import { formatDateTime, formatDuration } from '../../../components/format';
import type { Task } from '../api';
import { TaskOutputs } from './TaskOutputs';

function Detail({ label, value }: { label: string; value: string | null | undefined }) {
  if (!value) return null;
  return (
    <Box sx={{ minWidth: 0 }}>
      <Typography variant="caption" color="text.secondary" component="div">
        {label}
      </Typography>
      <Typography variant="body2" sx={{ overflowWrap: 'anywhere' }}>
        {value}
      </Typography>
    </Box>
  );
}

/** Keeps a running task's duration counting. */
function useNow(active: boolean) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    const id = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(id);
  }, [active]);
  return now;
}

/**
 * Who ran the task, when, how long, which commit and version, the environment it ran with when it overrode its
 * template's, its message, its outputs and workflow run.
 */
export function TaskDetails({
  task,
  userName,
  running,
}: {
  task: Task;
  userName: string | null | undefined;
  running: boolean;
}) {
  const { t } = useTranslation();
  const now = useNow(running);
  // Why the task waits, as the server says it ("Waiting: no runner with tag … is online").
  const waitingFor = task.status === 'waiting' && task.status_detail ? task.status_detail : null;
  const environments = useResourceList<Environment>(task.project_id, 'environment', !!task.environment_id);
  const environment = task.environment_id
    ? (environments.data?.find((e) => e.id === task.environment_id)?.name ?? `#${task.environment_id}`)
    : null;
  return (
    <>
      {waitingFor && (
        <Alert severity="info" sx={{ py: 0 }} data-status-detail>
          {waitingFor}
        </Alert>
      )}
      <Box
        sx={{
          display: 'grid',
          gridTemplateColumns: { xs: 'repeat(2, minmax(0, 1fr))', md: 'repeat(6, minmax(0, 1fr))' },
          gap: 1.5,
        }}
      >
        <Detail
          label={t('tasks.user')}
          value={userName ?? (task.integration_id ? t('history.integration') : '—')}
        />
        {task.start ? (
          <Detail label={t('tasks.started')} value={formatDateTime(task.start)} />
        ) : (
          <Detail label={t('tasks.queued')} value={formatDateTime(task.created)} />
        )}
        <Detail label={t('tasks.ended')} value={task.end ? formatDateTime(task.end) : '—'} />
        <Detail label={t('tasks.duration')} value={formatDuration(task.start, task.end, now)} />
        <Detail
          label={t('tasks.commit')}
          value={
            task.commit_hash ? `${task.commit_hash.slice(0, 10)} ${task.commit_message ?? ''}`.trim() : '—'
          }
        />
        <Detail label={t('tasks.version')} value={task.version ?? '—'} />
        {environment && <Detail label={t('res.environment')} value={environment} />}
        {task.runner && (
          <Detail
            label={t('runners.ranOn')}
            value={task.runner.name ?? t('runners.deletedRunner', { id: task.runner.id })}
          />
        )}
        {task.message && (
          <Box sx={{ gridColumn: '1 / -1' }}>
            <Detail label={t('tasks.message')} value={task.message} />
          </Box>
        )}
      </Box>
      <TaskOutputs task={task} />
    </>
  );
}
