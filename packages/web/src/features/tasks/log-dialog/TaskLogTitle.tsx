import CloseIcon from '@mui/icons-material/Close';
import ReplayIcon from '@mui/icons-material/Replay';
import { Breadcrumbs, Button, DialogTitle, IconButton, Link, Typography } from '@mui/material';
import { isFinished, stoppableStatuses, type TaskStatus } from '@signalbox/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { api } from '../../../api/client';
import { useProjectRole } from '../../../api/session';
import { Guarded } from '../../../app/access';
import { makeCan, useOptionalProject } from '../../../app/project-context';
import { useNotify } from '../../../app/snackbar';
import { rerunLabelKey } from '../../templates/api';
import { type Task, taskKeys } from '../api';
import { TaskStatusChip } from '../TaskStatusChip';

/**
 * Re-Run (Re-Build, Re-Deploy by the template's type) of a finished task: starts the same task again and shows the
 * new one. Hidden where the project says the user may not run tasks.
 */
function RerunButton({
  projectId,
  task,
  onStarted,
}: {
  projectId: number;
  task: Task;
  onStarted: (taskId: number) => void;
}) {
  const { t } = useTranslation();
  const notify = useNotify();
  const client = useQueryClient();
  const project = useOptionalProject();
  const rerun = useMutation({
    mutationFn: () => api<Task>(`/project/${projectId}/tasks/${task.id}/rerun`, { method: 'POST', body: {} }),
    onSuccess: () => void client.invalidateQueries({ queryKey: taskKeys.history(projectId) }),
  });
  if (project && project.project.id === projectId && !project.can('runProjectTasks')) return null;
  return (
    <Button
      variant="outlined"
      startIcon={<ReplayIcon />}
      disabled={rerun.isPending}
      onClick={async () => {
        try {
          onStarted((await rerun.mutateAsync()).id);
        } catch (err) {
          notify.error(err);
        }
      }}
    >
      {t(rerunLabelKey(task.tpl_type ?? ''))}
    </Button>
  );
}

/**
 * What the user may do in the task's project. The dialog opens over any page, so the project of the current route
 * (if any) may be another one: then the role is fetched for the task's project. Nothing is allowed until known.
 */
function useTaskProjectCan(projectId: number) {
  const project = useOptionalProject();
  const here = project?.project.id === projectId;
  const role = useProjectRole(here ? 0 : projectId);
  if (here) return project.can;
  return makeCan(role.data?.permissions ?? 0);
}

/** The dialog's title: template › task, its status, Confirm or Stop while they apply (for those who may run
 * tasks), and Close. */
export function TaskLogTitle({
  projectId,
  taskId,
  task,
  templateName,
  busy,
  onAction,
  onClose,
  onRerun,
}: {
  projectId: number;
  taskId: number;
  task: Task | undefined;
  templateName: string | undefined;
  busy: boolean;
  onAction: (name: 'stop' | 'confirm', force?: boolean) => void;
  onClose: () => void;
  /** A re-run started: the new task's id. */
  onRerun: (taskId: number) => void;
}) {
  const { t } = useTranslation();
  const status = (task?.status ?? '') as TaskStatus;
  const templateLink = task ? `/project/${projectId}/templates/${task.template_id}` : '';
  const can = useTaskProjectCan(projectId);
  return (
    <DialogTitle
      id="task-log-title"
      sx={{ display: 'flex', alignItems: 'center', gap: 1, flexWrap: 'wrap', pr: 1 }}
    >
      <Breadcrumbs sx={{ flex: 1, minWidth: 0 }}>
        {task && (
          <Link component={RouterLink} to={templateLink} underline="hover" color="inherit" onClick={onClose}>
            {templateName || t('tasks.template', { id: task.template_id })}
          </Link>
        )}
        <Typography color="text.primary" sx={{ fontWeight: 700 }}>
          {t('tasks.task', { id: taskId })}
        </Typography>
      </Breadcrumbs>
      {task && <TaskStatusChip status={task.status} detail={task.status_detail} size="medium" />}
      {task?.status === 'waiting_confirmation' && (
        <Guarded permission="runProjectTasks" can={can}>
          <Button variant="contained" color="success" disabled={busy} onClick={() => onAction('confirm')}>
            {t('tasks.confirm')}
          </Button>
        </Guarded>
      )}
      {task && stoppableStatuses.includes(status) && (
        <Guarded permission="runProjectTasks" can={can}>
          <Button
            variant="outlined"
            color="error"
            disabled={busy}
            onClick={() => onAction('stop', status === 'stopping')}
          >
            {status === 'stopping' ? t('tasks.forceStop') : t('tasks.stop')}
          </Button>
        </Guarded>
      )}
      {task && isFinished(status) && <RerunButton projectId={projectId} task={task} onStarted={onRerun} />}
      <IconButton aria-label={t('common.close')} onClick={onClose}>
        <CloseIcon />
      </IconButton>
    </DialogTitle>
  );
}
