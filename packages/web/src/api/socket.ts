import { LIVE_LOG_BATCHES, type LiveSocketMessage, liveShutdownClose } from '@signalbox/contracts';
import { apiUrl } from './client';

type Listener = (message: Exclude<LiveSocketMessage, { type: 'relay' }>) => void;
type RelayListener = (connected: boolean) => void;
type StateListener = (connected: boolean, reconnected: boolean) => void;

/** The wait before the first reconnect after an unexpected close. */
export const RECONNECT_DELAY_MS = 2000;
/** The longest wait between reconnects while the server stays away. */
export const RECONNECT_MAX_MS = 30_000;

/**
 * The wait before reconnect attempt `attempt` (0: the first after a close): 2 s, doubling with each failed attempt
 * up to 20 s, each lengthened by up to half at random (so never more than 30 s) — so the consoles of a restarted server do not all come
 * back in the same instant, nor keep knocking every 2 s while it is away.
 */
export function reconnectDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min((RECONNECT_MAX_MS * 2) / 3, RECONNECT_DELAY_MS * 2 ** Math.min(attempt, 16));
  return Math.round(base * (1 + random() / 2));
}

/**
 * One socket to /api/ws for the whole app. It reconnects after an unexpected close (see reconnectDelay) and tells
 * its state listeners, so views can resynchronise what they missed and show that live updates are off.
 */
export class LiveSocket {
  private ws: WebSocket | null = null;
  private listeners = new Set<Listener>();
  private stateListeners = new Set<StateListener>();
  private relayListeners = new Set<RelayListener>();
  /**
   * Whether the server still hears the other server instances (Redis); false while it says it does not. Reset at
   * every open: the server says so again if it is still cut off.
   */
  relayConnected = true;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Reconnect attempts since the socket was last open. */
  private attempts = 0;
  private closedOnPurpose = false;
  private everConnected = false;
  connected = false;
  /**
   * The server closed the socket saying it is shutting down; true until a socket opens again (the reconnects
   * failing meanwhile are the server being away, not a lost connection).
   */
  serverShutDown = false;

  start() {
    this.closedOnPurpose = false;
    if (this.ws) return;
    // Output comes as one message per stored batch; a gap left while the console fell behind is read as a page.
    const url = new URL(apiUrl(`/ws?logs=${LIVE_LOG_BATCHES}`), window.location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => {
      this.attempts = 0;
      this.serverShutDown = false;
      this.setRelay(true);
      const reconnected = this.everConnected;
      this.everConnected = true;
      this.setConnected(true, reconnected);
    };
    ws.onmessage = (event) => {
      let message: LiveSocketMessage;
      try {
        message = JSON.parse(String(event.data));
      } catch {
        return;
      }
      if (message.type === 'relay') return this.setRelay(message.connected === true);
      for (const listener of this.listeners) listener(message);
    };
    ws.onclose = (event) => {
      if (event.code === liveShutdownClose.code && event.reason === liveShutdownClose.reason)
        this.serverShutDown = true;
      this.ws = null;
      this.setConnected(false, false);
      if (this.closedOnPurpose) return;
      this.timer = setTimeout(() => this.reconnect(), reconnectDelay(this.attempts));
      this.attempts += 1;
    };
    ws.onerror = () => ws.close();
  }

  private reconnect() {
    this.timer = null;
    if (!this.closedOnPurpose) this.start();
  }

  stop() {
    this.closedOnPurpose = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.ws?.close();
    this.ws = null;
  }

  /** Whether the socket has ever been open in this session (never: /api/ws is unreachable, e.g. a proxy). */
  get hasConnected() {
    return this.everConnected;
  }

  private setConnected(connected: boolean, reconnected: boolean) {
    this.connected = connected;
    for (const listener of this.stateListeners) listener(connected, reconnected);
  }

  private setRelay(connected: boolean) {
    if (this.relayConnected === connected) return;
    this.relayConnected = connected;
    for (const listener of this.relayListeners) listener(connected);
  }

  /** Calls `listener` each time the server loses or regains the other server instances' events. */
  onRelay(listener: RelayListener) {
    this.relayListeners.add(listener);
    return () => {
      this.relayListeners.delete(listener);
    };
  }

  subscribe(listener: Listener) {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  onState(listener: StateListener) {
    this.stateListeners.add(listener);
    return () => {
      this.stateListeners.delete(listener);
    };
  }

  /**
   * Calls `listener` whenever events may have been missed and views should read again what they show: after the
   * socket reconnects, and when the server regains the other instances' events (Redis is back: what those
   * instances sent meanwhile never arrived, and is read back from the database).
   */
  onResync(listener: () => void) {
    const offState = this.onState((_connected, reconnected) => {
      if (reconnected) listener();
    });
    const offRelay = this.onRelay((connected) => {
      if (connected) listener();
    });
    return () => {
      offState();
      offRelay();
    };
  }
}

export const liveSocket = new LiveSocket();
