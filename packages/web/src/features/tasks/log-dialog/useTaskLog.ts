import { batchLineTimes } from '@signalbox/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { VirtuosoHandle } from 'react-virtuoso';
import { useLiveConnection, useLiveMessages } from '../../../api/live';
import { taskKeys } from '../api';
import { LogStore } from '../log-store';
import { applyTaskUpdate } from './task-updates';

/** How long after a person's wheel, touch, key or press a view leaving the bottom counts as their doing. */
const USER_SCROLL_MS = 1500;

/**
 * A task's log: the stored pages loaded and kept in step, live lines and status from the socket (or, without it,
 * polled while the task runs), and whether the view follows the tail.
 */
export function useTaskLog({
  projectId,
  taskId,
  running,
  taskLoaded,
}: {
  projectId: number;
  taskId: number;
  running: boolean;
  taskLoaded: boolean;
}) {
  const client = useQueryClient();
  const [count, setCount] = useState(0);
  const [, setTick] = useState(0);
  const [follow, setFollow] = useState(true);
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
    store.open();
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
    if (m.type === 'logs') {
      store.addLiveLines(m.line, m.outputs, batchLineTimes(m));
    } else if (m.type === 'log') {
      store.addLive(m.line, m.output, m.time);
    } else if (m.type === 'update') {
      void applyTaskUpdate(client, projectId, taskId, m);
      scheduleSync();
    }
  });
  const connected = useLiveConnection();
  // Whenever the socket (re)connects, the task and its log are read again: what changed before it was open (the
  // dialog opened on a page still connecting, or while it was down) came in no message.
  const wasConnected = useRef(connected);
  useEffect(() => {
    const opened = connected && !wasConnected.current;
    wasConnected.current = connected;
    if (!opened) return;
    void store.sync();
    void client.invalidateQueries({ queryKey: taskKeys.task(projectId, taskId) });
  }, [connected, store, client, projectId, taskId]);

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

  // A running task opens at its tail.
  const didInitialScroll = useRef(false);
  useEffect(() => {
    if (didInitialScroll.current || !store.loaded || !taskLoaded) return;
    didInitialScroll.current = true;
    if (running && count > 0) {
      listRef.current?.scrollToIndex({ index: 'LAST', align: 'end' });
      setFollow(true);
    }
  }, [store.loaded, taskLoaded, running, count]);

  /** Follows the tail again, scrolled to the last line. */
  const followTail = useCallback(() => {
    setFollow(true);
    listRef.current?.scrollToIndex({ index: 'LAST', align: 'end' });
  }, []);

  /** Stops following and centres line `index` (a search match). */
  const revealLine = useCallback((index: number) => {
    setFollow(false);
    listRef.current?.scrollToIndex({ index, align: 'center' });
  }, []);

  /** When a person last moved the view (wheel, touch, keys, scroll bar). */
  const userScrolledAt = useRef(0);
  const onUserScroll = useCallback(() => {
    userScrolledAt.current = Date.now();
  }, []);

  /**
   * The view reached or left the bottom: at the bottom of a running task it follows again; leaving it stops
   * following only when a person scrolled — lines arriving faster than the view scrolls (a busy machine, a burst
   * of output) leave it short of the bottom for a moment, and the next line brings it back.
   */
  const onAtBottom = useCallback(
    (atBottom: boolean) => {
      if (atBottom) {
        if (running) setFollow(true);
      } else if (Date.now() - userScrolledAt.current < USER_SCROLL_MS) setFollow(false);
    },
    [running],
  );

  return { store, count, connected, listRef, follow, followTail, revealLine, onAtBottom, onUserScroll };
}
