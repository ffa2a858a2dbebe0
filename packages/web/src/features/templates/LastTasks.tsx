import ReplayIcon from '@mui/icons-material/Replay';
import {
  Box,
  Button,
  Link,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import type { Template } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useLocation } from 'react-router';
import { Guarded } from '../../components/access';
import { formatDateTime, formatDuration } from '../../components/format';
import {
  Card,
  CardLine,
  CardList,
  fitCellSx,
  oneLineSx,
  shrinkCellSx,
  Truncated,
  usePhone,
} from '../../components/lists';
import { Spinner } from '../../components/states';
import { ErrorAlert } from '../../components/ui';
import type { Task } from '../tasks';
import { TaskStatusChip } from '../tasks';
import { RunTaskDialog } from '../tasks-run';
import { rerunLabelKey, useTemplateTasks } from './api';

/** A template's last tasks with a Re-run (Re-Build / Re-Deploy) action per task. */
export function LastTasks({ template, limit }: { template: Template; limit: number }) {
  const { t } = useTranslation();
  const location = useLocation();
  const phone = usePhone();
  const tasks = useTemplateTasks(template.project_id, template.id, limit);
  // The task whose re-run dialog is open.
  const [rerunOf, setRerunOf] = useState<Task | null>(null);
  const link = (id: number) => {
    const params = new URLSearchParams(location.search);
    params.set('t', String(id));
    return `${location.pathname}?${params}`;
  };
  const rerunDialog = rerunOf && (
    <RunTaskDialog template={template} rerunOf={rerunOf} onClose={() => setRerunOf(null)} />
  );

  if (tasks.isPending) return <Spinner full={false} />;
  if (tasks.error) return <ErrorAlert error={tasks.error} />;
  const list = tasks.data ?? [];
  if (list.length === 0)
    return (
      <Typography variant="body2" color="text.secondary" sx={{ p: 2 }}>
        {t('tpl.noTasks')}
      </Typography>
    );
  const rerunButton = (task: Task) => (
    <Guarded permission="runProjectTasks">
      <Button size="small" startIcon={<ReplayIcon />} onClick={() => setRerunOf(task)}>
        {t(rerunLabelKey(template.type))}
      </Button>
    </Guarded>
  );
  const title = (task: Task) => (
    <Link component={RouterLink} to={link(task.id)}>
      #{task.id}
    </Link>
  );
  const label = t('tpl.lastTasks', { name: template.name });
  if (phone)
    return (
      <>
        <CardList label={label}>
          {list.map((task) => (
            <Card key={task.id} title={title(task)} aside={rerunButton(task)}>
              {task.message && <CardLine label={t('layout.message')}>{task.message}</CardLine>}
              <CardLine label={t('history.status')}>
                <TaskStatusChip status={task.status} detail={task.status_detail} />
              </CardLine>
              {task.version && <CardLine label={t('history.version')}>{task.version}</CardLine>}
              <CardLine label={t('history.user')}>{task.user_name ?? '—'}</CardLine>
              <CardLine label={t('history.start')}>{formatDateTime(task.start)}</CardLine>
              <CardLine label={t('history.duration')}>{formatDuration(task.start, task.end)}</CardLine>
            </Card>
          ))}
        </CardList>
        {rerunDialog}
      </>
    );
  return (
    <>
      <Table size="small" aria-label={label} sx={{ '& th': { whiteSpace: 'nowrap' } }}>
        <TableHead>
          <TableRow>
            <TableCell sx={shrinkCellSx('30%')}>{t('history.task')}</TableCell>
            <TableCell sx={fitCellSx}>{t('history.status')}</TableCell>
            <TableCell sx={shrinkCellSx('12%')}>{t('history.version')}</TableCell>
            <TableCell sx={shrinkCellSx('18%')}>{t('history.user')}</TableCell>
            <TableCell sx={fitCellSx}>{t('history.start')}</TableCell>
            <TableCell sx={fitCellSx}>{t('history.duration')}</TableCell>
            <TableCell align="right" sx={fitCellSx}>
              {t('common.actions')}
            </TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {list.map((task) => (
            <TableRow key={task.id}>
              <TableCell sx={shrinkCellSx('30%')}>
                <Truncated text={`#${task.id}${task.message ? ` ${task.message}` : ''}`}>
                  <Box component="span" sx={oneLineSx}>
                    {title(task)}
                    {task.message ? ` ${task.message}` : ''}
                  </Box>
                </Truncated>
              </TableCell>
              <TableCell sx={fitCellSx}>
                <TaskStatusChip status={task.status} detail={task.status_detail} />
              </TableCell>
              <TableCell sx={shrinkCellSx('12%')}>
                {task.version ? <Truncated text={task.version} /> : '—'}
              </TableCell>
              <TableCell sx={shrinkCellSx('18%')}>
                {task.user_name ? <Truncated text={task.user_name} /> : '—'}
              </TableCell>
              <TableCell sx={fitCellSx}>{formatDateTime(task.start)}</TableCell>
              <TableCell sx={fitCellSx}>{formatDuration(task.start, task.end)}</TableCell>
              <TableCell align="right" sx={fitCellSx}>
                {rerunButton(task)}
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
      {rerunDialog}
    </>
  );
}
