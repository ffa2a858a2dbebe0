import type { LiveMessage } from '@signalbox/contracts';
import { useEffect, useRef, useState } from 'react';
import { liveSocket } from './socket';

/** Calls `listener` for every live message while the component is mounted. */
export function useLiveMessages(listener: (message: LiveMessage) => void) {
  const ref = useRef(listener);
  ref.current = listener;
  useEffect(() => liveSocket.subscribe((m) => ref.current(m)), []);
}

/** Whether the socket is connected; `onReconnect` runs after a reconnect so views can resync. */
export function useLiveConnection(onReconnect?: () => void) {
  const [connected, setConnected] = useState(liveSocket.connected);
  const ref = useRef(onReconnect);
  ref.current = onReconnect;
  useEffect(
    () =>
      liveSocket.onState((isConnected, reconnected) => {
        setConnected(isConnected);
        if (reconnected) ref.current?.();
      }),
    [],
  );
  return connected;
}
