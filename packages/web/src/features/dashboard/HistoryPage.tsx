import {
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
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useLocation } from 'react-router';
import { useLiveConnection, useLiveMessages } from '../../api/live';
import { formatDateTime, formatDuration } from '../../app/format';
import { FormError } from '../../app/forms';
import { useProjectContext } from '../../app/project-context';
import { Spinner } from '../../app/states';
import { type Task, taskKeys, useTaskHistory } from '../tasks/api';
import { TaskStatusChip } from '../tasks/TaskStatusChip';

/** Dashboard History: the last 200 tasks of the project; statuses update live. */
export default function HistoryPage() {
  const { t } = useTranslation();
  const { project } = useProjectContext();
  const location = useLocation();
  const client = useQueryClient();
  const history = useTaskHistory(project.id);
  const key = taskKeys.history(project.id);

  useLiveMessages((m) => {
    if (m.type !== 'update' || m.project_id !== project.id) return;
    const list = client.getQueryData<Task[]>(key);
    if (list?.some((task) => task.id === m.task_id)) {
      client.setQueryData<Task[]>(key, (old) =>
        old?.map((task) =>
          task.id === m.task_id
            ? { ...task, status: m.status, start: m.start, end: m.end, version: m.version ?? task.version }
            : task,
        ),
      );
      // A fetch in flight started before this update and would put the older status back: fetch anew.
      if (client.isFetching({ queryKey: key }) > 0) void client.invalidateQueries({ queryKey: key });
    } else void client.invalidateQueries({ queryKey: key });
  });
  useLiveConnection(() => void client.invalidateQueries({ queryKey: key }));

  if (history.isPending) return <Spinner full={false} />;
  if (history.error) return <FormError error={history.error} />;
  const tasks = history.data ?? [];
  const open = (id: number) => {
    const params = new URLSearchParams(location.search);
    params.set('t', String(id));
    return `${location.pathname}?${params}`;
  };

  return (
    <Paper variant="outlined">
      <TableContainer>
        <Table
          size="small"
          sx={{ '& td, & th': { whiteSpace: 'nowrap' } }}
          aria-label={t('dashboard.history')}
        >
          <TableHead>
            <TableRow>
              <TableCell>{t('history.task')}</TableCell>
              <TableCell>{t('history.version')}</TableCell>
              <TableCell>{t('history.status')}</TableCell>
              <TableCell>{t('history.user')}</TableCell>
              <TableCell>{t('history.start')}</TableCell>
              <TableCell>{t('history.duration')}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {tasks.map((task) => (
              <TableRow key={task.id} hover>
                <TableCell>
                  <Link component={RouterLink} to={open(task.id)} sx={{ fontWeight: 600 }}>
                    {`#${task.id}`}
                  </Link>{' '}
                  {task.tpl_alias}
                </TableCell>
                <TableCell>{task.version ?? '—'}</TableCell>
                <TableCell>
                  <TaskStatusChip status={task.status} />
                </TableCell>
                <TableCell>
                  {task.user_name ?? (task.integration_id ? t('history.integration') : '—')}
                </TableCell>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>
                  {formatDateTime(task.start ?? task.created)}
                </TableCell>
                <TableCell>{formatDuration(task.start, task.end)}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
      {tasks.length === 0 && (
        <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
          {t('history.empty')}
        </Typography>
      )}
    </Paper>
  );
}
