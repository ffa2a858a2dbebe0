import CloseIcon from '@mui/icons-material/Close';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import ReplayIcon from '@mui/icons-material/Replay';
import { Box, Breadcrumbs, Button, DialogTitle, IconButton, Link, Typography } from '@mui/material';
import { isFinished, stoppableStatuses, type TaskPlan, type TaskStatus } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useSearchParams } from 'react-router';
import { useProjectRole } from '../../../api/session';
import { Guarded } from '../../../components/access';
import { FormError } from '../../../components/forms';
import { makeCan, useOptionalProject } from '../../../components/project-context';
import { useNotify } from '../../../components/snackbar';
import { RunTaskDialog } from '../../tasks-run';
import { rerunLabelKey, useTemplate } from '../../templates';
import { type Task, useApplyPlan } from '../api';
import { ApprovalActions } from '../approval-actions';
import { McpChip } from '../McpChip';
import { applicable } from '../plan/PlanSummary';
import { TaskStatusChip } from '../TaskStatusChip';

/**
 * Re-Run (Re-Build, Re-Deploy by the template's type) of a finished task: opens the run dialog filled in from the
 * task (its commit or the branch head to choose); the new task then shows. Hidden where the project says the user
 * may not run tasks.
 */
function RerunButton({ projectId, task }: { projectId: number; task: Task }) {
  const { t } = useTranslation();
  const project = useOptionalProject();
  const [open, setOpen] = useState(false);
  const template = useTemplate(projectId, task.template_id, open);
  if (project && project.project.id === projectId && !project.can('runProjectTasks')) return null;
  return (
    <>
      <Button
        variant="outlined"
        startIcon={<ReplayIcon />}
        disabled={open && !template.data}
        onClick={() => setOpen(true)}
      >
        {t(rerunLabelKey(task.tpl_type ?? ''))}
      </Button>
      {open && template.error && <FormError error={template.error} />}
      {open && template.data && (
        <RunTaskDialog template={template.data} rerunOf={task} onClose={() => setOpen(false)} />
      )}
    </>
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

/**
 * Apply this plan: on a plan-only task whose stored plan may still be applied, approves it (the digest shown) and
 * starts the task that applies exactly that file; the new task then shows.
 */
function ApplyPlanButton({ projectId, task, plan }: { projectId: number; task: Task; plan: TaskPlan }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const [params, setParams] = useSearchParams();
  const apply = useApplyPlan(projectId, task.id);
  const file = plan.plan_file;
  if (task.status !== 'success' || !applicable(file)) return null;
  const onClick = async () => {
    try {
      const created = await apply.mutateAsync(file.digest);
      notify.success(t('plan.applyStarted', { id: created.id }));
      const next = new URLSearchParams(params);
      next.set('t', String(created.id));
      setParams(next);
    } catch (err) {
      notify.error(err);
    }
  };
  return (
    <Button
      variant="contained"
      color="warning"
      startIcon={<PlayArrowIcon />}
      disabled={apply.isPending}
      onClick={() => void onClick()}
      data-apply-plan
    >
      {t('plan.apply')}
    </Button>
  );
}

/** The dialog's title: template › task, its status, Confirm or Stop while they apply (for those who may run
 * tasks), and Close. */
export function TaskLogTitle({
  projectId,
  taskId,
  task,
  templateName,
  busy,
  plan,
  onAction,
  onClose,
}: {
  projectId: number;
  taskId: number;
  task: Task | undefined;
  templateName: string | undefined;
  busy: boolean;
  /** The task's plan (Terraform, OpenTofu, Terragrunt), when it has one. */
  plan: TaskPlan | null;
  onAction: (name: 'stop' | 'confirm', force?: boolean) => void;
  onClose: () => void;
  /** A re-run started: the new task's id. */
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
      {/* On a phone the title and the close button share the first row, the chips and actions the next. */}
      <Breadcrumbs sx={{ flex: { xs: '1 1 calc(100% - 56px)', sm: 1 }, minWidth: 0, order: 0 }}>
        {task && (
          <Link component={RouterLink} to={templateLink} underline="hover" color="inherit" onClick={onClose}>
            {templateName || t('tasks.template', { id: task.template_id })}
          </Link>
        )}
        <Typography color="text.primary" sx={{ fontWeight: 700 }}>
          {t('tasks.task', { id: taskId })}
        </Typography>
      </Breadcrumbs>
      <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, flexWrap: 'wrap', order: { xs: 2, sm: 1 } }}>
        {task && <McpChip source={task.source} />}
        {task && <TaskStatusChip status={task.status} detail={task.status_detail} size="medium" />}
        {task?.status === 'waiting_approval' && (
          <Guarded permission="runProjectTasks" can={can}>
            <ApprovalActions projectId={projectId} taskId={taskId} />
          </Guarded>
        )}
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
        {task && plan && (
          <Guarded permission="runProjectTasks" can={can}>
            <ApplyPlanButton projectId={projectId} task={task} plan={plan} />
          </Guarded>
        )}
        {task && isFinished(status) && <RerunButton projectId={projectId} task={task} />}
      </Box>
      <IconButton aria-label={t('common.close')} onClick={onClose} sx={{ order: { xs: 1, sm: 2 } }}>
        <CloseIcon />
      </IconButton>
    </DialogTitle>
  );
}
