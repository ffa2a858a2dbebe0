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
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useLocation } from 'react-router';
import { api } from '../../api/client';
import { useLiveConnection, useLiveMessages } from '../../api/live';
import { formatDateTime } from '../../components/format';
import { FormError } from '../../components/forms';
import { Card, CardLine, CardList, usePhone } from '../../components/lists';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { Spinner } from '../../components/states';
import { PageBody } from '../../components/ui';
import { ApprovalActions, approvalKeys, McpChip, type Task } from '../tasks';
import { InboxSection } from './InboxSection';

/**
 * Approvals: the project's runs waiting for a person (started by AI agents while the project asks for approval),
 * oldest first, with Approve and Reject for those who may run tasks (below 600 px a list of cards); then what else
 * waits for the signed-in user in any project (workflow approval nodes, other projects' agent runs). The lists
 * follow live changes.
 */
export default function ApprovalsPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const location = useLocation();
  const client = useQueryClient();
  const phone = usePhone();
  const key = approvalKeys.waiting(project.id);
  const waiting = useQuery({
    queryKey: key,
    queryFn: () => api<Task[]>(`/project/${project.id}/tasks?status=waiting_approval&limit=1000`),
  });
  // A task that starts waiting, or one of the list that moves on, reloads the list; other tasks do not.
  useLiveMessages((m) => {
    if (m.type !== 'update' || m.project_id !== project.id) return;
    const listed = client.getQueryData<Task[]>(key) ?? [];
    if (m.status === 'waiting_approval' || listed.some((task) => task.id === m.task_id))
      void client.invalidateQueries({ queryKey: key });
  });
  useLiveConnection(() => void client.invalidateQueries({ queryKey: key }));

  const open = (id: number) => {
    const params = new URLSearchParams(location.search);
    params.set('t', String(id));
    return `${location.pathname}?${params}`;
  };
  const tasks = [...(waiting.data ?? [])].sort((a, b) => a.id - b.id);
  const title = (task: Task) => (
    <>
      <Link component={RouterLink} to={open(task.id)} sx={{ fontWeight: 600 }}>
        {`#${task.id}`}
      </Link>{' '}
      {task.tpl_alias}
      <McpChip source={task.source} />
    </>
  );
  const actions = (task: Task) =>
    can('runProjectTasks') ? (
      <ApprovalActions projectId={project.id} taskId={task.id} />
    ) : (
      <Typography variant="body2" color="text.secondary">
        {t('approvals.cannotApprove')}
      </Typography>
    );
  const empty = tasks.length === 0 && (
    <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
      {t('approvals.empty')}
    </Typography>
  );
  return (
    <>
      <PageHeader title={t('approvals.title')} />
      <PageBody>
        {waiting.isPending ? (
          <Spinner full={false} />
        ) : waiting.error ? (
          <FormError error={waiting.error} />
        ) : phone ? (
          <>
            <CardList label={t('approvals.title')}>
              {tasks.map((task) => (
                <Card key={task.id} title={title(task)} data={{ 'data-task-id': String(task.id) }}>
                  <CardLine label={t('approvals.message')}>{task.message || '—'}</CardLine>
                  <CardLine label={t('history.user')}>{task.user_name ?? '—'}</CardLine>
                  <CardLine label={t('approvals.created')}>{formatDateTime(task.created)}</CardLine>
                  <Box sx={{ mt: 1 }}>{actions(task)}</Box>
                </Card>
              ))}
            </CardList>
            {empty}
          </>
        ) : (
          <Paper variant="outlined">
            <TableContainer>
              <Table size="small" aria-label={t('approvals.title')}>
                <TableHead>
                  <TableRow>
                    <TableCell>{t('history.task')}</TableCell>
                    <TableCell>{t('approvals.message')}</TableCell>
                    <TableCell>{t('history.user')}</TableCell>
                    <TableCell>{t('approvals.created')}</TableCell>
                    <TableCell />
                  </TableRow>
                </TableHead>
                <TableBody>
                  {tasks.map((task) => (
                    <TableRow key={task.id} hover data-task-id={task.id}>
                      <TableCell>{title(task)}</TableCell>
                      <TableCell>{task.message || '—'}</TableCell>
                      <TableCell>{task.user_name ?? '—'}</TableCell>
                      <TableCell>{formatDateTime(task.created)}</TableCell>
                      <TableCell align="right">{actions(task)}</TableCell>
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            </TableContainer>
            {empty}
          </Paper>
        )}
        <InboxSection projectId={project.id} />
      </PageBody>
    </>
  );
}
