import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { type BusEvent, type BusEvents, busEvents, type EventBus } from './bus';

/**
 * The pub/sub channel live events travel on: every instance of one deployment uses the same, and deployments
 * sharing a Redis each their own — named by SIGNALBOX_REDIS_PREFIX, else by the deployment id of the database.
 * Tests may set `liveChannel.name` to pin one name for every app of a run.
 */
export const liveChannel = { name: '' };
export const liveChannelOf = (prefix: string) => liveChannel.name || `signalbox:${prefix}:live`;

/** Bytes the publisher may hold unsent (Redis stalled but not yet seen as down) before events are skipped. */
const MAX_UNSENT = 16 * 1024 * 1024;
/** Publishes awaiting Redis' reply before events are skipped. */
const MAX_PENDING = 10_000;

export type RedisBridge = {
  readonly instanceId: string;
  readonly channel: string;
  /** Both connections are up and the channel subscribed: events flow both ways. */
  ready(): boolean;
  /** Local events not sent to Redis because it was unreachable or stalled (local listeners still got them). */
  skipped(): number;
  /** Calls `listener` with ready() each time it changes; returns the unsubscribe. */
  onChange(listener: (ready: boolean) => void): () => void;
  close(): Promise<void>;
};

const bridges = new WeakMap<EventBus, RedisBridge>();
/** The Redis bridge attached to a bus, if any (tests read its state). */
export const redisBridgeOf = (bus: EventBus) => bridges.get(bus);

/** Where the URL points, without credentials (for log lines). */
function target(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return 'redis';
  }
}

/**
 * SIGNALBOX_REDIS_URL: every event emitted on this instance's bus is also published on the Redis channel (one
 * message per event, so a batch of output lines is one message), and events other instances publish are emitted
 * on the local bus (never published again; this instance's own messages are skipped unparsed). Publishing never
 * waits and never throws: while Redis is unreachable events stay local, one warning is logged per outage, and
 * ioredis reconnects in the background. ioredis is loaded here: a server without Redis never needs it.
 */
export async function connectRedisBridge(
  bus: EventBus,
  url: string,
  log: FastifyBaseLogger,
  options: { channel: string },
): Promise<RedisBridge> {
  const { Redis } = await import('ioredis');
  const instanceId = randomUUID();
  const { channel } = options;
  const where = target(url);
  // Envelope {"i":instance,"e":event,"p":payload}, written in that order so our own echo is known by its prefix.
  const own = `{"i":${JSON.stringify(instanceId)},`;
  const known = new Set<string>(busEvents);

  const common = {
    // Nothing queues while disconnected: an event that cannot go now is skipped, never sent late.
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    lazyConnect: false,
  } as const;
  const pub = new Redis(url, { ...common, connectionName: `signalbox-pub-${instanceId.slice(0, 8)}` });
  const sub = new Redis(url, {
    ...common,
    // Subscribed again on every 'ready' below (also covers a first subscribe that never got through).
    autoResubscribe: false,
    connectionName: `signalbox-sub-${instanceId.slice(0, 8)}`,
  });

  let closing = false;
  let subscribed = false;
  let outage = false;
  let connected = false;
  let skipped = 0;

  const changeListeners = new Set<(ready: boolean) => void>();
  const changed = (ready: boolean) => {
    for (const listener of changeListeners) listener(ready);
  };
  const down = (why: string, err?: Error) => {
    if (closing || outage) return;
    outage = true;
    changed(false);
    log.warn(
      { redis: where, err: err?.message },
      `Redis ${why}: live events stay on this instance until it reconnects`,
    );
  };
  const up = () => {
    if (closing || pub.status !== 'ready' || !subscribed) return;
    if (!connected)
      log.info({ redis: where, channel }, 'Redis connected: live events fan out across instances');
    else if (outage)
      log.info({ redis: where }, 'Redis reconnected: live events fan out across instances again');
    const wasReady = connected && !outage;
    connected = true;
    outage = false;
    if (!wasReady) changed(true);
  };

  for (const conn of [pub, sub]) {
    conn.on('error', (err: Error) => down('unreachable', err));
    conn.on('close', () => {
      if (conn === sub) subscribed = false;
      down('connection lost');
    });
  }
  pub.on('ready', up);
  sub.on('ready', () => {
    sub.subscribe(channel).then(
      () => {
        subscribed = true;
        up();
      },
      (err: Error) => down('subscribe failed', err),
    );
  });
  sub.on('message', (from: string, message: string) => {
    if (from !== channel || message.startsWith(own)) return;
    let envelope: { i?: unknown; e?: unknown; p?: unknown };
    try {
      envelope = JSON.parse(message);
    } catch {
      log.debug({ redis: where }, 'ignoring a malformed live event from Redis');
      return;
    }
    const { e, p } = envelope;
    if (typeof e !== 'string' || !known.has(e) || typeof p !== 'object' || p === null) return;
    try {
      bus.emitRelayed(e as BusEvent, p as never);
    } catch (err) {
      log.warn({ err, event: e }, 'a live event listener failed');
    }
  });

  const send = <K extends BusEvent>(event: K, payload: BusEvents[K][0]) => {
    if (closing) return;
    if (
      pub.status !== 'ready' ||
      (pub.stream?.writableLength ?? 0) > MAX_UNSENT ||
      pub.commandQueue.length > MAX_PENDING
    ) {
      skipped += 1;
      return;
    }
    let text: string;
    try {
      text = `${own}"e":"${event}","p":${JSON.stringify(payload)}}`;
    } catch (err) {
      log.warn({ err, event }, 'a live event could not be serialised for Redis');
      return;
    }
    pub.publish(channel, text).catch(() => {
      // The connection dropped with this publish in flight; the 'error'/'close' handlers report the outage.
      skipped += 1;
    });
  };
  bus.attach({ forward: send });

  const bridge: RedisBridge = {
    instanceId,
    channel,
    ready: () => pub.status === 'ready' && subscribed,
    skipped: () => skipped,
    onChange(listener) {
      changeListeners.add(listener);
      return () => changeListeners.delete(listener);
    },
    async close() {
      if (closing) return;
      closing = true;
      bus.attach(null);
      bridges.delete(bus);
      sub.disconnect();
      if (pub.status === 'ready') {
        // QUIT lets the publishes already written reach Redis; never wait long for it.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          pub.quit().catch(() => {}),
          new Promise((resolve) => {
            timer = setTimeout(resolve, 1000);
          }),
        ]);
        clearTimeout(timer);
      }
      pub.disconnect();
    },
  };
  bridges.set(bus, bridge);
  return bridge;
}
