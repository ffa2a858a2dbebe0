import {
  Box,
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
import type { Integration, Schedule } from '@signalbox/contracts';
import { useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useLocation } from 'react-router';
import { useLiveConnection, useLiveMessages } from '../../api/live';
import { useResourceList } from '../../api/resources';
import { formatDateTime, formatDuration } from '../../components/format';
import { FormError } from '../../components/forms';
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
import { useProjectContext } from '../../components/project-context';
import { Spinner } from '../../components/states';
import { McpChip, type Task, TaskStatusChip, taskKeys, useTaskHistory } from '../tasks';

/**
 * Who started a task: its user, else the schedule or the integration that started it (by name, linking to
 * the schedules or to the integration).
 */
function useStarter(projectId: number, tasks: Task[]) {
  const { t } = useTranslation();
  const schedules = useResourceList<Schedule>(
    projectId,
    'schedules',
    tasks.some((task) => !task.user_name && task.schedule_id),
  );
  const integrations = useResourceList<Integration>(
    projectId,
    'integrations',
    tasks.some((task) => !task.user_name && task.integration_id),
  );
  return (task: Task): { text: string; node: ReactNode } => {
    if (task.user_name) return { text: task.user_name, node: task.user_name };
    if (task.schedule_id) {
      const schedule = schedules.data?.find((s) => s.id === task.schedule_id);
      const name = schedule
        ? schedule.name || schedule.cron_format || t('layout.scheduleOf', { name: schedule.tpl_name })
        : t('layout.scheduleNumber', { id: task.schedule_id });
      return {
        text: t('layout.bySchedule', { name }),
        node: (
          <>
            {`${t('layout.schedule')}: `}
            <Link component={RouterLink} to={`/project/${projectId}/schedule`}>
              {name}
            </Link>
          </>
        ),
      };
    }
    if (task.integration_id) {
      const name =
        integrations.data?.find((i) => i.id === task.integration_id)?.name ??
        t('layout.integrationNumber', { id: task.integration_id });
      return {
        text: t('layout.byIntegration', { name }),
        node: (
          <>
            {`${t('history.integration')}: `}
            <Link component={RouterLink} to={`/project/${projectId}/integration/${task.integration_id}`}>
              {name}
            </Link>
          </>
        ),
      };
    }
    return { text: '—', node: '—' };
  };
}

/** Dashboard History: the last 200 tasks of the project; statuses update live. */
export default function HistoryPage() {
  const { t } = useTranslation();
  const { project } = useProjectContext();
  const location = useLocation();
  const client = useQueryClient();
  const history = useTaskHistory(project.id);
  const phone = usePhone();
  const starter = useStarter(project.id, history.data ?? []);
  const key = taskKeys.history(project.id);

  useLiveMessages((m) => {
    if (m.type !== 'update' || m.project_id !== project.id) return;
    const list = client.getQueryData<Task[]>(key);
    if (list?.some((task) => task.id === m.task_id)) {
      client.setQueryData<Task[]>(key, (old) =>
        old?.map((task) =>
          task.id === m.task_id
            ? {
                ...task,
                status: m.status,
                start: m.start,
                end: m.end,
                version: m.version ?? task.version,
                status_detail: typeof m.status_detail === 'string' ? m.status_detail : null,
              }
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

  const empty = tasks.length === 0 && (
    <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
      {t('history.empty')}
    </Typography>
  );
  const taskLink = (task: Task) => (
    <Link component={RouterLink} to={open(task.id)} sx={{ fontWeight: 600 }}>
      {`#${task.id}`}
    </Link>
  );

  if (phone)
    return (
      <>
        <CardList label={t('dashboard.history')}>
          {tasks.map((task) => (
            <Card
              key={task.id}
              title={
                <>
                  {taskLink(task)} {task.tpl_alias}
                  <McpChip source={task.source} />
                </>
              }
              aside={<TaskStatusChip status={task.status} detail={task.status_detail} />}
            >
              {task.version && <CardLine label={t('history.version')}>{task.version}</CardLine>}
              <CardLine label={t('history.user')}>{starter(task).node}</CardLine>
              <CardLine label={t('history.start')}>{formatDateTime(task.start)}</CardLine>
              <CardLine label={t('history.duration')}>{formatDuration(task.start, task.end)}</CardLine>
            </Card>
          ))}
        </CardList>
        {empty && <Paper variant="outlined">{empty}</Paper>}
      </>
    );

  return (
    <Paper variant="outlined">
      <TableContainer>
        <Table size="small" sx={{ '& th': { whiteSpace: 'nowrap' } }} aria-label={t('dashboard.history')}>
          <TableHead>
            <TableRow>
              <TableCell sx={shrinkCellSx('32%')}>{t('history.task')}</TableCell>
              <TableCell sx={shrinkCellSx('10%')}>{t('history.version')}</TableCell>
              <TableCell sx={fitCellSx}>{t('history.status')}</TableCell>
              <TableCell sx={shrinkCellSx('32%')}>{t('history.user')}</TableCell>
              <TableCell sx={fitCellSx}>{t('history.start')}</TableCell>
              <TableCell sx={fitCellSx}>{t('history.duration')}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {tasks.map((task) => {
              const who = starter(task);
              return (
                <TableRow key={task.id} hover>
                  <TableCell sx={shrinkCellSx('32%')}>
                    <Truncated text={`#${task.id} ${task.tpl_alias ?? ''}`}>
                      <Box component="span" sx={oneLineSx}>
                        {taskLink(task)} {task.tpl_alias}
                        <McpChip source={task.source} />
                      </Box>
                    </Truncated>
                  </TableCell>
                  <TableCell sx={shrinkCellSx('10%')}>
                    {task.version ? <Truncated text={task.version} /> : '—'}
                  </TableCell>
                  <TableCell sx={fitCellSx}>
                    <TaskStatusChip status={task.status} detail={task.status_detail} />
                  </TableCell>
                  <TableCell sx={shrinkCellSx('32%')}>
                    <Truncated text={who.text}>
                      <Box component="span" sx={oneLineSx}>
                        {who.node}
                      </Box>
                    </Truncated>
                  </TableCell>
                  <TableCell sx={fitCellSx}>{formatDateTime(task.start)}</TableCell>
                  <TableCell sx={fitCellSx}>{formatDuration(task.start, task.end)}</TableCell>
                </TableRow>
              );
            })}
          </TableBody>
        </Table>
      </TableContainer>
      {empty}
    </Paper>
  );
}
