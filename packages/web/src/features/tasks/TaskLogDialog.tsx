import { Alert, Box, Dialog, DialogContent, useMediaQuery } from '@mui/material';
import { isFinished, type TaskStatus } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { FormError } from '../../components/forms';
import { useNotify } from '../../components/snackbar';
import { errorText } from '../../i18n/messages';
import { readPref, writePref } from '../../lib/prefs';
import { useTaskAction } from './api';
import { LogView } from './LogView';
import { TaskDetails } from './log-dialog/TaskDetails';
import { TaskLogTitle } from './log-dialog/TaskLogTitle';
import { TaskLogToolbar } from './log-dialog/TaskLogToolbar';
import { useTask } from './log-dialog/task-updates';
import { useLogSearch } from './log-dialog/useLogSearch';
import { useTaskLog } from './log-dialog/useTaskLog';
import { useTaskNames } from './log-dialog/useTaskNames';
import { stripAnsi } from './log-store';
import { TaskPlan, useTaskPlanOf } from './plan/PlanSummary';

/** The task log dialog opened by ?t={taskId} over any page. */
export default function TaskLogDialog({
  taskId,
  projectId: routeProjectId,
}: {
  taskId: number;
  projectId: number | null;
}) {
  const { t } = useTranslation();
  const notify = useNotify();
  const [params, setParams] = useSearchParams();
  const fullScreen = !useMediaQuery('(min-width:960px)', { noSsr: true });
  const projectId = routeProjectId ?? Number(readPref('projectId'));
  const task = useTask(projectId, taskId);
  const action = useTaskAction(projectId, taskId);
  const data = task.data;
  const plan = useTaskPlanOf(projectId, data);
  const running = !!data && !isFinished((data.status ?? '') as TaskStatus);
  const log = useTaskLog({ projectId, taskId, running, taskLoaded: !!data });
  const { store, count } = log;
  const search = useLogSearch(store, count, log.revealLine);
  const [showTime, setShowTime] = useState(() => readPref('logTimes') === '1');
  const toggleTime = (show: boolean) => {
    setShowTime(show);
    writePref('logTimes', show ? '1' : null);
  };
  const firstError = store.firstError;
  const failed = data?.status === 'error';
  const { templateName, userName } = useTaskNames(projectId, taskId, data);

  const close = () => {
    const next = new URLSearchParams(params);
    next.delete('t');
    setParams(next);
  };

  const act = async (name: 'stop' | 'confirm', force?: boolean) => {
    try {
      // A confirmation names the plan the user read: the server refuses it when the plan is another.
      await action.mutateAsync({ action: name, force, digest: plan.data?.plan_file?.digest });
    } catch (err) {
      notify.error(err);
    }
  };

  return (
    <Dialog
      open
      onClose={close}
      fullScreen={fullScreen}
      maxWidth="lg"
      fullWidth
      aria-labelledby="task-log-title"
      slotProps={{ paper: { sx: { height: fullScreen ? '100%' : '90vh' } } }}
    >
      <TaskLogTitle
        projectId={projectId}
        taskId={taskId}
        task={data}
        templateName={templateName}
        busy={action.isPending}
        plan={plan.data ?? null}
        onAction={(name, force) => void act(name, force)}
        onClose={close}
      />
      <DialogContent dividers sx={{ display: 'flex', flexDirection: 'column', gap: 1.5, pb: 2 }}>
        {task.error && <FormError error={task.error} />}
        {data && <TaskDetails task={data} userName={userName} running={running} />}
        {data && <TaskPlan projectId={projectId} task={data} />}
        {running && !log.connected && (
          <Alert severity="warning" sx={{ py: 0 }}>
            {t('app.liveDisconnected')}
          </Alert>
        )}
        {!!store.error && (
          <Alert severity="error" sx={{ py: 0 }}>
            {errorText(store.error, t)}
          </Alert>
        )}
        {failed && store.loaded && (
          <Alert severity="error" sx={{ py: 0, '& .MuiAlert-message': { minWidth: 0 } }} data-failure-summary>
            {firstError >= 0 ? (
              <>
                {t('taskLog.failedAt', { line: firstError + 1 })}{' '}
                <Box
                  component="code"
                  sx={{ fontFamily: 'monospace', overflowWrap: 'anywhere', fontWeight: 600 }}
                >
                  {stripAnsi(store.line(firstError))}
                </Box>
              </>
            ) : (
              t('taskLog.failedNoLine')
            )}
          </Alert>
        )}
        <TaskLogToolbar
          projectId={projectId}
          taskId={taskId}
          search={search}
          count={count}
          follow={log.follow}
          onFollow={log.followTail}
          showTime={showTime}
          onShowTime={toggleTime}
          hasError={firstError >= 0}
          onFirstError={() => log.revealLine(firstError)}
        />
        {store.loaded && count === 0 && !store.error ? (
          <Box
            sx={{
              flex: 1,
              bgcolor: '#0d1117',
              color: '#8b949e',
              borderRadius: 1,
              p: 2,
              fontFamily: 'monospace',
            }}
          >
            {running ? t('tasks.waitingForOutput') : t('tasks.noOutput')}
          </Box>
        ) : (
          <LogView
            store={store}
            count={count}
            follow={log.follow && running}
            query={search.appliedQuery}
            currentMatch={search.currentMatch}
            listRef={log.listRef}
            label={t('tasks.log')}
            onAtBottom={log.onAtBottom}
            onUserScroll={log.onUserScroll}
            showTime={showTime}
          />
        )}
      </DialogContent>
    </Dialog>
  );
}
