import { Alert } from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { liveSocket } from '../api/socket';

/** How long the live socket may be down before the banner shows (a normal reconnect takes about 2 s). */
export const LIVE_BANNER_DELAY_MS = 8000;
/** How long the server may be cut off from the other instances before the banner says so (a Redis restart). */
export const RELAY_BANNER_DELAY_MS = 2000;

/**
 * Says so on every page when live updates stop (user-asks #25: behind a proxy that does not forward
 * WebSocket upgrades, statuses and logs silently froze). A socket that never connected gets the proxy hint; one
 * that dropped says it is reconnecting; one the server closed because it is shutting down says so at once. Gone as
 * soon as the socket is back. A server that lost Redis (the other server instances' events) says so too: tasks other
 * instances run would otherwise look frozen.
 */
export function LiveStatusBanner() {
  const { t } = useTranslation();
  const [down, setDown] = useState<'never' | 'lost' | 'shutdown' | null>(null);
  const [relayDown, setRelayDown] = useState(false);

  // The server is up but hears no other server instance (Redis down): their tasks look frozen here.
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const apply = (connected: boolean) => {
      if (timer) clearTimeout(timer);
      timer = null;
      if (connected) return setRelayDown(false);
      timer = setTimeout(() => setRelayDown(true), RELAY_BANNER_DELAY_MS);
    };
    if (!liveSocket.relayConnected) apply(false);
    const off = liveSocket.onRelay(apply);
    return () => {
      off();
      if (timer) clearTimeout(timer);
    };
  }, []);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const arm = () => {
      timer ??= setTimeout(() => {
        timer = null;
        setDown(liveSocket.serverShutDown ? 'shutdown' : liveSocket.hasConnected ? 'lost' : 'never');
      }, LIVE_BANNER_DELAY_MS);
    };
    if (!liveSocket.connected) arm();
    const off = liveSocket.onState((connected) => {
      // The server said it is shutting down: no need to wait and see whether a reconnect follows.
      if (!connected && liveSocket.serverShutDown) return setDown('shutdown');
      if (!connected) return arm();
      if (timer) clearTimeout(timer);
      timer = null;
      setDown(null);
    });
    return () => {
      off();
      if (timer) clearTimeout(timer);
    };
  }, []);

  if (!down && relayDown)
    return (
      <Alert severity="warning" role="status" sx={{ borderRadius: 0 }}>
        {t('app.liveRelayDown')}
      </Alert>
    );
  if (!down) return null;
  return (
    <Alert severity="warning" role="status" sx={{ borderRadius: 0 }}>
      {t(
        down === 'never'
          ? 'app.liveUnavailable'
          : down === 'shutdown'
            ? 'app.liveServerShutdown'
            : 'app.liveDisconnected',
      )}
    </Alert>
  );
}
