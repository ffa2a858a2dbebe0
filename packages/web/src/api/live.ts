import type { LiveMessage, TaskLogBatchMessage, WorkflowRunUpdateMessage } from '@signalbox/contracts';
import { useEffect, useRef, useState } from 'react';
import { liveSocket } from './socket';

/** Calls `listener` for every live message of a task (updates, output) while the component is mounted. */
export function useLiveMessages(listener: (message: LiveMessage | TaskLogBatchMessage) => void) {
  const ref = useRef(listener);
  ref.current = listener;
  useEffect(
    () =>
      liveSocket.subscribe((m) => {
        if (m.type !== 'workflow_run') ref.current(m);
      }),
    [],
  );
}

/** Calls `listener` for every change of a workflow run (of any project the user sees) while mounted. */
export function useWorkflowRunMessages(listener: (message: WorkflowRunUpdateMessage) => void) {
  const ref = useRef(listener);
  ref.current = listener;
  useEffect(
    () =>
      liveSocket.subscribe((m) => {
        if (m.type === 'workflow_run') ref.current(m);
      }),
    [],
  );
}

/**
 * Whether the socket is connected; `onReconnect` runs after a reconnect, and when the server regains the other
 * instances' events, so views can resync what they missed.
 */
export function useLiveConnection(onReconnect?: () => void) {
  const [connected, setConnected] = useState(liveSocket.connected);
  const ref = useRef(onReconnect);
  ref.current = onReconnect;
  useEffect(() => liveSocket.onState((isConnected) => setConnected(isConnected)), []);
  useEffect(() => liveSocket.onResync(() => ref.current?.()), []);
  return connected;
}
