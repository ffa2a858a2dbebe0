import CloseIcon from '@mui/icons-material/Close';
import DownloadIcon from '@mui/icons-material/Download';
import KeyboardArrowDownIcon from '@mui/icons-material/KeyboardArrowDown';
import KeyboardArrowUpIcon from '@mui/icons-material/KeyboardArrowUp';
import SearchIcon from '@mui/icons-material/Search';
import VerticalAlignBottomIcon from '@mui/icons-material/VerticalAlignBottom';
import {
  Alert,
  Box,
  Breadcrumbs,
  Button,
  Chip,
  Dialog,
  DialogContent,
  DialogTitle,
  IconButton,
  InputAdornment,
  Link,
  Stack,
  TextField,
  Tooltip,
  Typography,
  useMediaQuery,
} from '@mui/material';
import { isFinished, stoppableStatuses, type TaskStatus } from '@signalbox/contracts';
import { skipToken, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useSearchParams } from 'react-router';
import type { VirtuosoHandle } from 'react-virtuoso';
import { api, apiUrl } from '../../api/client';
import { useLiveConnection, useLiveMessages } from '../../api/live';
import { formatDateTime, formatDuration } from '../../app/format';
import { FormError } from '../../app/forms';
import { readPref } from '../../app/prefs';
import { useNotify } from '../../app/snackbar';
import { errorText } from '../../i18n/messages';
import { type Task, taskKeys, useTask, useTaskAction, useTaskHistory } from './api';
import { LogView } from './LogView';
import { findMatches, LogStore } from './log-store';
import { TaskStatusChip } from './TaskStatusChip';

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
  const client = useQueryClient();
  const [params, setParams] = useSearchParams();
  const fullScreen = !useMediaQuery('(min-width:960px)', { noSsr: true });
  const projectId = routeProjectId ?? Number(readPref('projectId'));
  const task = useTask(projectId, taskId);
  const action = useTaskAction(projectId, taskId);
  const status = (task.data?.status ?? '') as TaskStatus;
  const running = !!task.data && !isFinished(status);
  const now = useNow(running);

  const [count, setCount] = useState(0);
  const [, setTick] = useState(0);
  const [follow, setFollow] = useState(true);
  const [query, setQuery] = useState('');
  const [appliedQuery, setAppliedQuery] = useState('');
  const [matchIndex, setMatchIndex] = useState(0);
  const listRef = useRef<VirtuosoHandle | null>(null);
  const syncTimer = useRef<ReturnType<typeof setTimeout> | null>(null);

  const store = useMemo(() => {
    let frame = 0;
    const s = new LogStore(projectId, taskId, () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        setCount(s.count);
        setTick((n) => n + 1);
      });
    });
    return s;
  }, [projectId, taskId]);

  useEffect(() => {
    void store.sync();
    return () => {
      store.close();
      if (syncTimer.current) clearTimeout(syncTimer.current);
    };
  }, [store]);

  const scheduleSync = useCallback(() => {
    if (syncTimer.current) return;
    syncTimer.current = setTimeout(() => {
      syncTimer.current = null;
      void store.sync();
    }, 1000);
  }, [store]);

  useLiveMessages((m) => {
    if (m.task_id !== taskId) return;
    if (m.type === 'log') {
      store.addLive(m.output);
      scheduleSync();
    } else if (m.type === 'update') {
      client.setQueryData<Task>(taskKeys.task(projectId, taskId), (old) =>
        old
          ? { ...old, status: m.status, start: m.start, end: m.end, version: m.version ?? old.version }
          : old,
      );
      // And fetch it again: a fetch already in flight (after Stop/Confirm) could otherwise land after this
      // update with an older status and leave it on screen. The row is saved before the update is sent.
      void client.invalidateQueries({ queryKey: taskKeys.task(projectId, taskId) });
      scheduleSync();
    }
  });
  const connected = useLiveConnection(() => {
    void store.sync();
    void client.invalidateQueries({ queryKey: taskKeys.task(projectId, taskId) });
  });

  // Without the socket (a proxy that does not pass WebSockets, or while reconnecting) a running task's log
  // and status are polled, so the view never silently stops.
  useEffect(() => {
    if (connected || !running) return;
    const id = setInterval(() => {
      void store.sync();
      void client.invalidateQueries({ queryKey: taskKeys.task(projectId, taskId) });
    }, 2000);
    return () => clearInterval(id);
  }, [connected, running, store, client, projectId, taskId]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: recount when lines arrive
  const matches = useMemo(
    () => (appliedQuery ? findMatches(store, appliedQuery) : []),
    [store, appliedQuery, count],
  );
  useEffect(() => {
    const id = setTimeout(() => {
      setAppliedQuery(query);
      setMatchIndex(0);
    }, 250);
    return () => clearTimeout(id);
  }, [query]);
  useEffect(() => {
    if (matches.length === 0) return;
    const index = matches[Math.min(matchIndex, matches.length - 1)];
    setFollow(false);
    listRef.current?.scrollToIndex({ index, align: 'center' });
  }, [matches, matchIndex]);

  // A running task opens at its tail.
  const didInitialScroll = useRef(false);
  useEffect(() => {
    if (didInitialScroll.current || !store.loaded || !task.data) return;
    didInitialScroll.current = true;
    if (running && count > 0) {
      listRef.current?.scrollToIndex({ index: 'LAST', align: 'end' });
      setFollow(true);
    }
  }, [store.loaded, task.data, running, count]);

  const close = () => {
    const next = new URLSearchParams(params);
    next.delete('t');
    setParams(next);
  };

  const act = async (name: 'stop' | 'confirm', force?: boolean) => {
    try {
      await action.mutateAsync({ action: name, force });
    } catch (err) {
      notify.error(err);
    }
  };

  const data = task.data;
  // GET tasks/{id} carries ids only; the template's name and the user's name come from what the page knows.
  const templateId = data?.tpl_alias ? null : data?.template_id;
  const template = useQuery({
    queryKey: ['project', projectId, 'template', data?.template_id],
    queryFn: templateId
      ? () => api<{ name: string }>(`/project/${projectId}/templates/${templateId}`)
      : skipToken,
    retry: false,
  });
  const history = useTaskHistory(projectId);
  const fromHistory = history.data?.find((x) => x.id === taskId);
  const templateName = data?.tpl_alias || fromHistory?.tpl_alias || template.data?.name;
  const userName = data?.user_name ?? fromHistory?.user_name;
  const templateLink = data ? `/project/${projectId}/templates/${data.template_id}` : '';
  const currentMatch = matches.length ? matches[Math.min(matchIndex, matches.length - 1)] : -1;

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
      <DialogTitle
        id="task-log-title"
        sx={{ display: 'flex', alignItems: 'center', gap: 1, flexWrap: 'wrap', pr: 1 }}
      >
        <Breadcrumbs sx={{ flex: 1, minWidth: 0 }}>
          {data && (
            <Link component={RouterLink} to={templateLink} underline="hover" color="inherit" onClick={close}>
              {templateName || t('tasks.template', { id: data.template_id })}
            </Link>
          )}
          <Typography color="text.primary" sx={{ fontWeight: 700 }}>
            {t('tasks.task', { id: taskId })}
          </Typography>
        </Breadcrumbs>
        {data && <TaskStatusChip status={data.status} size="medium" />}
        {data?.status === 'waiting_confirmation' && (
          <Button
            variant="contained"
            color="success"
            disabled={action.isPending}
            onClick={() => void act('confirm')}
          >
            {t('tasks.confirm')}
          </Button>
        )}
        {data && stoppableStatuses.includes(status) && (
          <Button
            variant="outlined"
            color="error"
            disabled={action.isPending}
            onClick={() => void act('stop', status === 'stopping')}
          >
            {status === 'stopping' ? t('tasks.forceStop') : t('tasks.stop')}
          </Button>
        )}
        <IconButton aria-label={t('common.close')} onClick={close}>
          <CloseIcon />
        </IconButton>
      </DialogTitle>
      <DialogContent dividers sx={{ display: 'flex', flexDirection: 'column', gap: 1.5, pb: 2 }}>
        {task.error && <FormError error={task.error} />}
        {data && (
          <Box
            sx={{
              display: 'grid',
              gridTemplateColumns: { xs: 'repeat(2, minmax(0, 1fr))', md: 'repeat(6, minmax(0, 1fr))' },
              gap: 1.5,
            }}
          >
            <Detail
              label={t('tasks.user')}
              value={userName ?? (data.integration_id ? t('history.integration') : '—')}
            />
            <Detail label={t('tasks.started')} value={formatDateTime(data.start ?? data.created)} />
            <Detail label={t('tasks.ended')} value={data.end ? formatDateTime(data.end) : '—'} />
            <Detail label={t('tasks.duration')} value={formatDuration(data.start, data.end, now)} />
            <Detail
              label={t('tasks.commit')}
              value={
                data.commit_hash
                  ? `${data.commit_hash.slice(0, 10)} ${data.commit_message ?? ''}`.trim()
                  : '—'
              }
            />
            <Detail label={t('tasks.version')} value={data.version ?? '—'} />
            {data.message && (
              <Box sx={{ gridColumn: '1 / -1' }}>
                <Detail label={t('tasks.message')} value={data.message} />
              </Box>
            )}
          </Box>
        )}
        {running && !connected && (
          <Alert severity="warning" sx={{ py: 0 }}>
            {t('app.liveDisconnected')}
          </Alert>
        )}
        {!!store.error && (
          <Alert severity="error" sx={{ py: 0 }}>
            {errorText(store.error, t)}
          </Alert>
        )}
        <Stack direction="row" spacing={1} sx={{ alignItems: 'center', flexWrap: 'wrap', rowGap: 1 }}>
          <TextField
            size="small"
            placeholder={t('tasks.search')}
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && matches.length) {
                e.preventDefault();
                setMatchIndex((i) =>
                  e.shiftKey ? (i - 1 + matches.length) % matches.length : (i + 1) % matches.length,
                );
              }
            }}
            slotProps={{
              htmlInput: { 'aria-label': t('tasks.search') },
              input: {
                startAdornment: (
                  <InputAdornment position="start">
                    <SearchIcon fontSize="small" />
                  </InputAdornment>
                ),
              },
            }}
            sx={{ width: { xs: '100%', sm: 280 } }}
          />
          {appliedQuery && (
            <>
              <Typography variant="body2" color="text.secondary" aria-live="polite">
                {matches.length
                  ? t('tasks.matchOf', {
                      current: Math.min(matchIndex, matches.length - 1) + 1,
                      total: matches.length,
                    })
                  : t('tasks.noMatches')}
              </Typography>
              <IconButton
                size="small"
                aria-label={t('tasks.previousMatch')}
                disabled={!matches.length}
                onClick={() => setMatchIndex((i) => (i - 1 + matches.length) % matches.length)}
              >
                <KeyboardArrowUpIcon />
              </IconButton>
              <IconButton
                size="small"
                aria-label={t('tasks.nextMatch')}
                disabled={!matches.length}
                onClick={() => setMatchIndex((i) => (i + 1) % matches.length)}
              >
                <KeyboardArrowDownIcon />
              </IconButton>
            </>
          )}
          <Box sx={{ flex: 1 }} />
          <Chip size="small" variant="outlined" label={t('tasks.lines', { count })} />
          <Tooltip title={t('tasks.follow')}>
            <IconButton
              aria-label={t('tasks.follow')}
              aria-pressed={follow}
              color={follow ? 'primary' : 'default'}
              onClick={() => {
                setFollow(true);
                listRef.current?.scrollToIndex({ index: 'LAST', align: 'end' });
              }}
            >
              <VerticalAlignBottomIcon />
            </IconButton>
          </Tooltip>
          <Button
            component="a"
            href={apiUrl(`/project/${projectId}/tasks/${taskId}/raw_output`)}
            download={`task-${taskId}.log`}
            startIcon={<DownloadIcon />}
          >
            {t('tasks.download')}
          </Button>
        </Stack>
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
            follow={follow && running}
            query={appliedQuery}
            currentMatch={currentMatch}
            listRef={listRef}
            label={t('tasks.log')}
            onAtBottom={(atBottom) => {
              if (atBottom && running) setFollow(true);
              else if (!atBottom) setFollow(false);
            }}
          />
        )}
      </DialogContent>
    </Dialog>
  );
}
