import {
  LIVE_LOG_BATCHES,
  type LiveRelayMessage,
  liveShutdownClose,
  liveSocketQuery,
} from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import type { WebSocket } from 'ws';
import { currentUser } from '../../access/auth-hook';
import { isSessionLive } from '../../access/sessions.store';
import { hasScope, type TokenLimits } from '../../access/token-limits';
import { findLiveToken, findTokenUser, limitsOf } from '../../access/tokens.store';
import type { Deps } from '../../deps';
import type { BusEvents, LiveMessage, TaskLogBatch } from '../../live/bus';
import { redisBridgeOf } from '../../live/redis';
import { findUserAdmin, memberProjects } from '../team';

/** Largest message a console may send on its live socket. */
const MAX_CLIENT_MESSAGE = 64 * 1024;
/** Bytes a socket may hold unsent before it is dropped (a slow client never slows the tasks). */
export const MAX_BUFFERED = 4 * 1024 * 1024;
/**
 * Bytes unsent past which a socket that takes `logs` batches is sent no more lines until it has caught up: it reads
 * the positions it missed as a page (the console does over any gap) instead of being dropped.
 */
export const LAG_BYTES = 1024 * 1024;
const REFRESH_MS = 5000;
/** Messages written per corked round (two buffers each; IOV_MAX is 1024). */
const CORK_MESSAGES = 256;
const PING_MS = 30_000;

/** Longest timeout Node keeps (about 24.8 days); later token expiries are caught by the periodic check. */
const MAX_TIMER_MS = 2 ** 31 - 1;

type LiveClient = {
  socket: WebSocket;
  /** Takes output as one `logs` message per batch (and is skipped while behind) rather than a `log` per line. */
  batches: boolean;
  userId: number;
  /** The session cookie the socket was opened with, or null for an API token. */
  sessionId: number | null;
  /** The API token the socket was opened with, or null for a session cookie. */
  tokenId: string | null;
  /** When that token stops working (ms since the epoch), or null. */
  tokenExpires: number | null;
  expiryTimer: NodeJS.Timeout | null;
  admin: boolean;
  projects: Set<number>;
  /** Set once the first membership read is done; until then the socket gets nothing. */
  ready: boolean;
  /** Bumped by every access event, so a read that started before the change is read again. */
  generation: number;
  refreshedAt: number;
  refreshing: Promise<void> | null;
};

type Access = { gone: string } | { admin: boolean; projects: Set<number>; tokenExpires: number | null };

/**
 * The WebSocket plugin's preClose (in place of its own, which closes sockets without a reason): as the server
 * starts shutting down, every socket is told so (the console shows it) and no new one opens.
 */
export async function closeSocketsOnShutdown(this: FastifyInstance) {
  for (const socket of this.websocketServer.clients)
    socket.close(liveShutdownClose.code, liveShutdownClose.reason);
  // Stops the server taking sockets; it does not wait for the closing ones to answer.
  this.websocketServer.close();
}

/**
 * Counters of a socket hub: open clients, clients ever registered, clients dropped for falling behind, and output
 * lines not sent to a batch-taking client while it was behind.
 */
export type LiveHub = { clients(): number; registered: number; dropped: number; skippedLines: number };
const hubs = new WeakMap<FastifyInstance, LiveHub>();
/** The socket hub of an app (tests read its counters). */
export const hubOf = (app: FastifyInstance) => hubs.get(app);

/**
 * GET /api/ws: live `update` and `log` messages for the projects the caller belongs to (admins: all); with
 * `?logs=batches`, output as one `logs` message per stored batch (see LAG_BYTES for such a client falling behind).
 * Authentication is the /api onRequest hook (cookie or Bearer); memberships are cached per socket and refreshed
 * every few seconds, and at once on the bus events that change access. Events that take access away act before
 * the next message goes out: a deleted user's sockets, a signed-out or expired session's and a revoked or
 * expired token's close; a project the user left, or admin rights they lost, leave the socket's set at once.
 * Each refresh also checks that the user, session or token the socket was opened with still stands.
 */
export function liveRoutes(app: FastifyInstance, deps: Pick<Deps, 'db' | 'bus' | 'log' | 'metrics'>) {
  const clients = new Set<LiveClient>();
  const hub: LiveHub = {
    clients: () => [...clients].filter((c) => c.ready).length,
    registered: 0,
    dropped: 0,
    skippedLines: 0,
  };
  hubs.set(app, hub);
  deps.metrics.watchSockets(hub.clients);

  /** What the socket may see now, read from the database; `gone` when it may see nothing any more. */
  async function readAccess(c: LiveClient): Promise<Access> {
    const user = await findUserAdmin(deps.db, c.userId);
    if (!user) return { gone: 'User no longer exists' };
    let tokenExpires: number | null = null;
    let limits: TokenLimits | null = null;
    if (c.sessionId !== null && !(await isSessionLive(deps.db, c.sessionId)))
      return { gone: 'Session expired' };
    if (c.tokenId !== null) {
      const token = await findLiveToken(deps.db, c.tokenId);
      if (!token) return { gone: 'Token revoked' };
      tokenExpires = token.expires ? Date.parse(token.expires) : null;
      limits = limitsOf(token);
    }
    // A token sees what its owner sees, narrowed to its projects; without the admin scope, as no administrator.
    const admin = user.admin === 1 && hasScope(limits, 'admin');
    const only = limits?.projectIds;
    if (!only) return { admin, projects: await memberProjects(deps.db, c.userId), tokenExpires };
    const reached = admin ? new Set(only) : await memberProjects(deps.db, c.userId);
    return { admin: false, projects: new Set(only.filter((id) => reached.has(id))), tokenExpires };
  }

  function refresh(c: LiveClient): Promise<void> {
    c.refreshing ??= (async () => {
      try {
        for (;;) {
          const generation = c.generation;
          const access = await readAccess(c);
          // An access event arrived while reading: what was read may predate it.
          if (c.generation !== generation) continue;
          if ('gone' in access) {
            close(c, 1008, access.gone);
            return;
          }
          c.admin = access.admin;
          c.projects = access.projects;
          c.tokenExpires = access.tokenExpires;
          c.refreshedAt = Date.now();
          return;
        }
      } catch (err) {
        deps.log.warn({ err }, 'refreshing socket memberships failed');
      } finally {
        c.refreshing = null;
      }
    })();
    return c.refreshing;
  }

  function forget(c: LiveClient) {
    clients.delete(c);
    if (c.expiryTimer) clearTimeout(c.expiryTimer);
    c.expiryTimer = null;
  }

  /** Closes a socket and stops sending to it at once (close() alone waits for the peer's answer). */
  function close(c: LiveClient, code: number, reason: string) {
    forget(c);
    c.socket.close(code, reason);
  }

  function drop(c: LiveClient) {
    forget(c);
    hub.dropped += 1;
    c.socket.terminate();
  }

  const tokenExpired = (c: LiveClient, now: number) => c.tokenExpires !== null && c.tokenExpires <= now;

  /** The open sockets that may see a project's messages; drops the ones that fell too far behind. */
  function audience(projectId: number): LiveClient[] {
    const now = Date.now();
    const out: LiveClient[] = [];
    for (const c of clients) {
      if (!c.ready) continue;
      if (tokenExpired(c, now)) {
        close(c, 1008, 'Token expired');
        continue;
      }
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

  /**
   * A batch as one `logs` message: its lines' outputs, their times as runs (most lines of a batch share a few times),
   * and the first line's position when they follow one another (every batch of this server's; one relayed from
   * another instance might not, and is then sent without positions, which makes a client read the log instead).
   */
  const batchText = (batch: TaskLogBatch) => {
    const first = batch.lines[0]?.line;
    let ordered = Number.isInteger(first);
    const outputs: string[] = [];
    const times: string[] = [];
    const counts: number[] = [];
    for (const l of batch.lines) {
      if (l.line !== (first as number) + outputs.length) ordered = false;
      outputs.push(String(l.output));
      const time = String(l.time);
      if (times.at(-1) === time) counts[counts.length - 1] += 1;
      else {
        times.push(time);
        counts.push(1);
      }
    }
    const line = ordered ? `,"line":${first}` : '';
    return `{"type":"logs","project_id":${batch.project_id},"task_id":${batch.task_id}${line},"outputs":${JSON.stringify(outputs)},"times":${JSON.stringify(times)},"counts":${JSON.stringify(counts)}}`;
  };

  /**
   * A batch as the peer's protocol sends it, one `log` message per line, each with its position in the log: a client
   * takes the next one as it comes and reads a page only over a gap (without it, every live line would make every
   * viewer read the stored log again). A line relayed from another instance without a whole-number position is sent
   * without one rather than as a message that is not JSON.
   */
  const lineTexts = (batch: TaskLogBatch) => {
    const head = `{"type":"log","project_id":${batch.project_id},"task_id":${batch.task_id},"output":`;
    return batch.lines.map(
      (l) =>
        `${head}${JSON.stringify(l.output)},"time":"${l.time}"${Number.isInteger(l.line) ? `,"line":${l.line}` : ''}}`,
    );
  };

  // A batch of output lines, serialised once for all clients of each kind. A batch-taking client gets one message;
  // while it is behind it gets none (it reads the gap as a page). Others get a message per line, written with the
  // TCP socket corked, so every CORK_MESSAGES lines cost one write, not one each (bounded: a writev of thousands of
  // buffers stalls the socket — each message is two, over IOV_MAX).
  const onLogs = (batch: TaskLogBatch) => {
    const to = audience(batch.project_id);
    if (!to.length) return;
    let whole: Buffer | undefined;
    let texts: string[] | undefined;
    for (const c of to) {
      if (c.batches) {
        if (c.socket.bufferedAmount > LAG_BYTES) {
          hub.skippedLines += batch.lines.length;
          continue;
        }
        // Encoded once for every client (a text frame all the same).
        whole ??= Buffer.from(batchText(batch));
        c.socket.send(whole, { binary: false });
        continue;
      }
      texts ??= lineTexts(batch);
      const tcp = (c.socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
      for (let i = 0; i < texts.length; i += CORK_MESSAGES) {
        tcp?.cork();
        try {
          for (const text of texts.slice(i, i + CORK_MESSAGES)) c.socket.send(text);
        } finally {
          tcp?.uncork();
        }
      }
    }
  };

  // Access events (possibly relayed from another instance through Redis: their fields are checked).
  const ofUser = (userId: unknown) => [...clients].filter((c) => c.userId === userId);
  const onLogout = ({ sessionId }: { sessionId: number }) => {
    for (const c of clients) if (c.sessionId === sessionId) close(c, 1000, 'Signed out');
  };
  const onMembership = ({ userId }: { userId: number }) => {
    for (const c of ofUser(userId)) {
      c.generation += 1;
      void refresh(c);
    }
  };
  const onAccessRevoked = ({ userId, projectId }: BusEvents['accessRevoked'][0]) => {
    for (const c of ofUser(userId)) {
      c.generation += 1;
      if (projectId === null) c.admin = false;
      else c.projects.delete(projectId);
      void refresh(c);
    }
  };
  const onUserDeleted = ({ userId }: { userId: number }) => {
    for (const c of ofUser(userId)) close(c, 1008, 'User no longer exists');
  };
  const onSessionsExpired = ({ userId, keepSessionId, tokens }: BusEvents['sessionsExpired'][0]) => {
    for (const c of ofUser(userId)) {
      if (c.sessionId !== null && c.sessionId !== keepSessionId) close(c, 1008, 'Session expired');
      else if (c.tokenId !== null && tokens === true) close(c, 1008, 'Token revoked');
    }
  };
  const onTokensRevoked = ({ userId, tokenIds }: BusEvents['tokensRevoked'][0]) => {
    const ids = new Set<unknown>(Array.isArray(tokenIds) ? tokenIds : []);
    for (const c of ofUser(userId))
      if (c.tokenId !== null && ids.has(c.tokenId)) close(c, 1008, 'Token revoked');
  };
  const onWorkflowRun = (message: BusEvents['workflowRun'][0]) => {
    if (typeof message?.project_id !== 'number') return;
    const to = audience(message.project_id);
    if (!to.length) return;
    const text = JSON.stringify({
      type: 'workflow_run',
      project_id: message.project_id,
      workflow_id: message.workflow_id,
      run_id: message.run_id,
      status: message.status,
    });
    for (const c of to) c.socket.send(text);
  };
  const listeners = {
    live: onLive,
    workflowRun: onWorkflowRun,
    logs: onLogs,
    logout: onLogout,
    membership: onMembership,
    accessRevoked: onAccessRevoked,
    userDeleted: onUserDeleted,
    sessionsExpired: onSessionsExpired,
    tokensRevoked: onTokensRevoked,
  } as const;
  for (const [event, listener] of Object.entries(listeners))
    deps.bus.on(event as keyof typeof listeners, listener as never);

  const timer = setInterval(() => {
    const now = Date.now();
    for (const c of clients) {
      if (tokenExpired(c, now)) close(c, 1008, 'Token expired');
      else if (c.ready && now - c.refreshedAt >= REFRESH_MS) void refresh(c);
    }
  }, 1000);
  timer.unref();
  const pinger = setInterval(() => {
    for (const c of clients) if (c.socket.readyState === c.socket.OPEN) c.socket.ping();
  }, PING_MS);
  pinger.unref();

  // Viewers are told when this instance loses the other instances' events (Redis down), and when they are back.
  const bridge = redisBridgeOf(deps.bus);
  const relayText = (connected: boolean) =>
    JSON.stringify({ type: 'relay', connected } satisfies LiveRelayMessage);
  const stopRelayWatch = bridge?.onChange((connected) => {
    const text = relayText(connected);
    for (const c of clients) if (c.ready && c.socket.readyState === c.socket.OPEN) c.socket.send(text);
  });

  app.addHook('onClose', async () => {
    stopRelayWatch?.();
    clearInterval(timer);
    clearInterval(pinger);
    for (const [event, listener] of Object.entries(listeners))
      deps.bus.off(event as keyof typeof listeners, listener as never);
    for (const c of clients) close(c, liveShutdownClose.code, liveShutdownClose.reason);
  });

  app.get<{ Querystring: { logs?: string } }>(
    '/api/ws',
    { websocket: true, config: { tokenScope: 'read' }, schema: { querystring: liveSocketQuery } },
    (socket, request) => {
      const user = currentUser(request);
      const client: LiveClient = {
        socket,
        batches: request.query.logs === LIVE_LOG_BATCHES,
        userId: user.id,
        sessionId: request.sessionId,
        tokenId: null,
        tokenExpires: null,
        expiryTimer: null,
        admin: false,
        projects: new Set(),
        ready: false,
        generation: 0,
        refreshedAt: 0,
        refreshing: null,
      };
      // Listed before its first read, so access events arriving meanwhile already reach it.
      clients.add(client);
      // Messages are only read and discarded (the protocol is server → client); the server's WebSocket cap is the
      // runners' (app.ts), a console sends nothing near this.
      socket.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
        const size = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
        if (size > MAX_CLIENT_MESSAGE) close(client, 1009, 'Message too big');
      });
      socket.on('close', () => forget(client));
      socket.on('error', () => forget(client));
      void (async () => {
        const bearer = /^bearer\s+(.+)$/i.exec(request.headers.authorization ?? '');
        if (request.sessionId === null && bearer) {
          const token = await findTokenUser(deps.db, bearer[1] ?? '');
          if (!token || token.user_id !== user.id) return close(client, 1008, 'Token revoked');
          client.tokenId = token.id;
        }
        await refresh(client);
        if (socket.readyState !== socket.OPEN || !clients.has(client)) return;
        if (client.tokenExpires !== null && client.tokenExpires - Date.now() < MAX_TIMER_MS) {
          client.expiryTimer = setTimeout(
            () => close(client, 1008, 'Token expired'),
            Math.max(0, client.tokenExpires - Date.now()),
          );
          client.expiryTimer.unref();
        }
        client.ready = true;
        hub.registered += 1;
        if (bridge && !bridge.ready()) socket.send(relayText(false));
      })().catch((err) => {
        deps.log.warn({ err }, 'opening a live socket failed');
        close(client, 1011, 'Internal error');
      });
    },
  );
}
