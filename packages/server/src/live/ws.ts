import type { FastifyInstance } from 'fastify';
import type { WebSocket } from 'ws';
import type { Deps } from '../deps';
import { findUserAdmin, memberProjects } from '../tasks/store';
import type { LiveMessage, TaskLogBatch } from './bus';

/** Bytes a socket may hold unsent before it is dropped (a slow client never slows the tasks). */
export const MAX_BUFFERED = 4 * 1024 * 1024;
const REFRESH_MS = 5000;
/** Messages written per corked round (two buffers each; IOV_MAX is 1024). */
const CORK_MESSAGES = 256;
const PING_MS = 30_000;

type LiveClient = {
  socket: WebSocket;
  userId: number;
  sessionId: number | null;
  admin: boolean;
  projects: Set<number>;
  refreshedAt: number;
  refreshing: Promise<void> | null;
};

/** Counters of a socket hub: open clients, clients ever registered, clients dropped for falling behind. */
export type LiveHub = { clients(): number; registered: number; dropped: number };
const hubs = new WeakMap<FastifyInstance, LiveHub>();
/** The socket hub of an app (tests read its counters). */
export const hubOf = (app: FastifyInstance) => hubs.get(app);

/**
 * GET /api/ws: live `update` and `log` messages for the projects the caller belongs to (admins: all).
 * Authentication is the /api onRequest hook (cookie or Bearer); memberships are cached per socket and refreshed
 * every few seconds or when a `membership` event names the user; a logout closes the session's sockets.
 */
export function liveRoutes(app: FastifyInstance, deps: Deps) {
  const clients = new Set<LiveClient>();
  const hub: LiveHub = { clients: () => clients.size, registered: 0, dropped: 0 };
  hubs.set(app, hub);

  function refresh(c: LiveClient): Promise<void> {
    c.refreshing ??= (async () => {
      try {
        const user = await findUserAdmin(deps.db, c.userId);
        if (!user) {
          c.socket.close(1008, 'User no longer exists');
          return;
        }
        c.admin = user.admin === 1;
        c.projects = await memberProjects(deps.db, c.userId);
        c.refreshedAt = Date.now();
      } catch (err) {
        deps.log.warn({ err }, 'refreshing socket memberships failed');
      } finally {
        c.refreshing = null;
      }
    })();
    return c.refreshing;
  }

  function drop(c: LiveClient) {
    clients.delete(c);
    hub.dropped += 1;
    c.socket.terminate();
  }

  /** The open sockets that may see a project's messages; drops the ones that fell too far behind. */
  function audience(projectId: number): LiveClient[] {
    const now = Date.now();
    const out: LiveClient[] = [];
    for (const c of clients) {
      if (!c.admin && !c.projects.has(projectId)) {
        // Possibly a project the user just joined; look again soon (never on every message).
        if (now - c.refreshedAt > 1000) void refresh(c);
        continue;
      }
      if (c.socket.readyState !== c.socket.OPEN) continue;
      if (c.socket.bufferedAmount > MAX_BUFFERED) {
        deps.log.info({ userId: c.userId }, 'dropping a live socket that does not keep up');
        drop(c);
        continue;
      }
      out.push(c);
    }
    return out;
  }

  const onLive = (message: LiveMessage) => {
    const to = audience(message.project_id);
    if (!to.length) return;
    const text = JSON.stringify(message);
    for (const c of to) c.socket.send(text);
  };

  // A batch of output lines: one `log` message per line (the peer's protocol), serialised once for every
  // client and written with the TCP socket corked, so every CORK_MESSAGES lines cost one write, not one each.
  // (Bounded: a writev of thousands of buffers stalls the socket — each message is two, over IOV_MAX.)
  const onLogs = (batch: TaskLogBatch) => {
    const to = audience(batch.project_id);
    if (!to.length) return;
    const head = `{"type":"log","project_id":${batch.project_id},"task_id":${batch.task_id},"output":`;
    const texts = batch.lines.map((l) => `${head}${JSON.stringify(l.output)},"time":"${l.time}"}`);
    for (const c of to) {
      const tcp = (c.socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
      for (let i = 0; i < texts.length; i += CORK_MESSAGES) {
        tcp?.cork();
        try {
          const end = Math.min(i + CORK_MESSAGES, texts.length);
          for (let j = i; j < end; j++) c.socket.send(texts[j]!);
        } finally {
          tcp?.uncork();
        }
      }
    }
  };

  const onLogout = ({ sessionId }: { sessionId: number }) => {
    for (const c of clients) if (c.sessionId === sessionId) c.socket.close(1000, 'Signed out');
  };
  const onMembership = ({ userId }: { userId: number }) => {
    for (const c of clients) if (c.userId === userId) void refresh(c);
  };
  const onSessionsExpired = ({ userId, keepSessionId }: { userId: number; keepSessionId: number | null }) => {
    for (const c of clients)
      if (c.userId === userId && c.sessionId !== null && c.sessionId !== keepSessionId)
        c.socket.close(1008, 'Session expired');
  };
  deps.bus.on('live', onLive);
  deps.bus.on('logs', onLogs);
  deps.bus.on('logout', onLogout);
  deps.bus.on('membership', onMembership);
  deps.bus.on('sessionsExpired', onSessionsExpired);

  const timer = setInterval(() => {
    const now = Date.now();
    for (const c of clients) if (now - c.refreshedAt >= REFRESH_MS) void refresh(c);
  }, 1000);
  timer.unref();
  const pinger = setInterval(() => {
    for (const c of clients) if (c.socket.readyState === c.socket.OPEN) c.socket.ping();
  }, PING_MS);
  pinger.unref();

  app.addHook('onClose', async () => {
    clearInterval(timer);
    clearInterval(pinger);
    deps.bus.off('live', onLive);
    deps.bus.off('logs', onLogs);
    deps.bus.off('logout', onLogout);
    deps.bus.off('membership', onMembership);
    deps.bus.off('sessionsExpired', onSessionsExpired);
    for (const c of clients) c.socket.close(1001, 'Server shutting down');
    clients.clear();
  });

  app.get('/api/ws', { websocket: true }, (socket, request) => {
    const user = request.user!;
    const client: LiveClient = {
      socket,
      userId: user.id,
      sessionId: request.sessionId,
      admin: user.admin === 1,
      projects: new Set(),
      refreshedAt: 0,
      refreshing: null,
    };
    // Messages are only read and discarded (the protocol is server → client).
    socket.on('message', () => {});
    socket.on('close', () => clients.delete(client));
    socket.on('error', () => clients.delete(client));
    void refresh(client).then(() => {
      if (socket.readyState !== socket.OPEN) return;
      clients.add(client);
      hub.registered += 1;
    });
  });
}
