import ReplayIcon from '@mui/icons-material/Replay';
import { Button, Link, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import type { Template } from '@signalbox/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useLocation, useNavigate } from 'react-router';
import { api } from '../../api/client';
import { Guarded } from '../../app/access';
import { formatDateTime, formatDuration } from '../../app/format';
import { Spinner } from '../../app/states';
import type { Task } from '../tasks/api';
import { TaskStatusChip } from '../tasks/TaskStatusChip';
import { rerunLabelKey, templateKeys, useTemplateTasks } from './api';
import { ErrorAlert, useResourceNotify } from './shared/ui';

/** A template's last tasks with a Re-run (Re-Build / Re-Deploy) action per task. */
export function LastTasks({ template, limit }: { template: Template; limit: number }) {
  const { t } = useTranslation();
  const location = useLocation();
  const navigate = useNavigate();
  const client = useQueryClient();
  const notify = useResourceNotify();
  const tasks = useTemplateTasks(template.project_id, template.id, limit);
  const rerun = useMutation({
    mutationFn: (taskId: number) =>
      api<Task>(`/project/${template.project_id}/tasks/${taskId}/rerun`, { method: 'POST', body: {} }),
    onSuccess: () => void client.invalidateQueries({ queryKey: templateKeys.all(template.project_id) }),
  });
  const link = (id: number) => {
    const params = new URLSearchParams(location.search);
    params.set('t', String(id));
    return `${location.pathname}?${params}`;
  };
  const again = async (id: number) => {
    try {
      const task = await rerun.mutateAsync(id);
      navigate(link(task.id));
    } catch (err) {
      notify.error(err);
    }
  };

  if (tasks.isPending) return <Spinner full={false} />;
  if (tasks.error) return <ErrorAlert error={tasks.error} />;
  const list = tasks.data ?? [];
  if (list.length === 0)
    return (
      <Typography variant="body2" color="text.secondary" sx={{ p: 2 }}>
        {t('tpl.noTasks')}
      </Typography>
    );
  return (
    <Table size="small" aria-label={t('tpl.lastTasks', { name: template.name })}>
      <TableHead>
        <TableRow>
          <TableCell>{t('history.task')}</TableCell>
          <TableCell>{t('history.status')}</TableCell>
          <TableCell>{t('history.version')}</TableCell>
          <TableCell>{t('history.user')}</TableCell>
          <TableCell>{t('history.start')}</TableCell>
          <TableCell>{t('history.duration')}</TableCell>
          <TableCell align="right">{t('common.actions')}</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>
        {list.map((task) => (
          <TableRow key={task.id}>
            <TableCell sx={{ wordBreak: 'break-word' }}>
              <Link component={RouterLink} to={link(task.id)}>
                #{task.id}
              </Link>
              {task.message ? ` ${task.message}` : ''}
            </TableCell>
            <TableCell>
              <TaskStatusChip status={task.status} />
            </TableCell>
            <TableCell>{task.version ?? '—'}</TableCell>
            <TableCell>{task.user_name ?? '—'}</TableCell>
            <TableCell sx={{ whiteSpace: 'nowrap' }}>{formatDateTime(task.start ?? task.created)}</TableCell>
            <TableCell>{formatDuration(task.start, task.end)}</TableCell>
            <TableCell align="right">
              <Guarded permission="runProjectTasks">
                <Button
                  size="small"
                  startIcon={<ReplayIcon />}
                  disabled={rerun.isPending}
                  onClick={() => void again(task.id)}
                >
                  {t(rerunLabelKey(template.type))}
                </Button>
              </Guarded>
            </TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}
