import CloseIcon from '@mui/icons-material/Close';
import { Breadcrumbs, Button, DialogTitle, IconButton, Link, Typography } from '@mui/material';
import { stoppableStatuses, type TaskStatus } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import type { Task } from '../api';
import { TaskStatusChip } from '../TaskStatusChip';

/** The dialog's title: template › task, its status, Confirm or Stop while they apply, and Close. */
export function TaskLogTitle({
  projectId,
  taskId,
  task,
  templateName,
  busy,
  onAction,
  onClose,
}: {
  projectId: number;
  taskId: number;
  task: Task | undefined;
  templateName: string | undefined;
  busy: boolean;
  onAction: (name: 'stop' | 'confirm', force?: boolean) => void;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const status = (task?.status ?? '') as TaskStatus;
  const templateLink = task ? `/project/${projectId}/templates/${task.template_id}` : '';
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
      {task && <TaskStatusChip status={task.status} size="medium" />}
      {task?.status === 'waiting_confirmation' && (
        <Button variant="contained" color="success" disabled={busy} onClick={() => onAction('confirm')}>
          {t('tasks.confirm')}
        </Button>
      )}
      {task && stoppableStatuses.includes(status) && (
        <Button
          variant="outlined"
          color="error"
          disabled={busy}
          onClick={() => onAction('stop', status === 'stopping')}
        >
          {status === 'stopping' ? t('tasks.forceStop') : t('tasks.stop')}
        </Button>
      )}
      <IconButton aria-label={t('common.close')} onClick={onClose}>
        <CloseIcon />
      </IconButton>
    </DialogTitle>
  );
}
