import type { EventView } from '@signalbox/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs } from 'kysely';
import type { Config } from '../config';
import type { Db, Dialect } from '../db';
import { parseSyslogAddress, syslogLine, syslogSender } from './syslog';
import { parseWebhookUrl, webhookSender } from './webhook';

/**
 * Forwarding of the audit log: every event written (audit.store.ts `recordEvent`, the one place events are
 * inserted) is also sent to an HTTP receiver (`SIGNALBOX_AUDIT_WEBHOOK_URL`, batches of JSON lines) and/or a
 * syslog receiver (`SIGNALBOX_AUDIT_SYSLOG`, RFC 5424). Writing an event only appends it to memory: delivery
 * runs in the background, so a slow or dead receiver never slows a request. Each receiver has its own queue of at
 * most `maxQueue` events; while a receiver fails, its batch is tried again after 1 s, 2 s, 4 s … up to a minute
 * (kept at the head of the queue, so order holds), and events arriving at a full queue are dropped, counted in
 * a log line and in `signalbox_audit_events_dropped_total`. Delivery is at least once: a receiver that took a
 * batch but answered too late gets it again, and finds the repeat by the events' ids.
 */

/** An event as forwarded: the fields of the API's event list (ids, names, what happened, when). */
export type ForwardedEvent = EventView;

/** An event as recordEvent stored it (names are looked up before it is sent). */
export type StoredEvent = Pick<
  EventView,
  | 'id'
  | 'project_id'
  | 'user_id'
  | 'object_id'
  | 'object_type'
  | 'description'
  | 'kind'
  | 'params'
  | 'created'
>;

export type SinkName = 'webhook' | 'syslog';

export type ForwardOptions = {
  /** Events each receiver's queue holds at most; more are dropped (and counted) while it is full. */
  maxQueue: number;
  /** Events per webhook POST / syslog write at most. */
  batchSize: number;
  /** Wait before the first retry of a failed batch; doubled for each further failure. */
  retryMs: number;
  /** The longest wait between retries. */
  maxRetryMs: number;
  /** Time one delivery (an HTTP request, a TCP connect or write) may take. */
  timeoutMs: number;
  /** At shutdown, time given to deliver what is queued before it is given up (and counted in a log line). */
  closeTimeoutMs: number;
  /** Least time between two log lines about dropped events or failures of one receiver. */
  logEveryMs: number;
};

export const defaultForwardOptions: ForwardOptions = {
  maxQueue: 10_000,
  batchSize: 200,
  retryMs: 1000,
  maxRetryMs: 60_000,
  timeoutMs: 10_000,
  closeTimeoutMs: 3000,
  logEveryMs: 60_000,
};

/** Events waiting for their names to be looked up, at most (a database far slower than the events come). */
const MAX_PENDING = 10_000;

type Log = Pick<FastifyBaseLogger, 'info' | 'warn'>;

/** Counters the forwarder reports to (the app's Prometheus metrics). */
export type ForwardMetrics = {
  forwarded(sink: SinkName, count: number): void;
  dropped(sink: SinkName, count: number): void;
};

/** A receiver: takes a batch of events or throws. */
type Sender = { send(events: ForwardedEvent[]): Promise<void>; close(): void };

/** Why a delivery failed, in words that never carry a URL, token or other secret. */
function failureReason(err: unknown): string {
  const e = err as { name?: string; code?: string; cause?: { code?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timed out';
  return String(e?.cause?.code ?? e?.code ?? 'request failed');
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** One receiver's bounded queue and its delivery loop. */
class SinkQueue {
  private readonly queue: ForwardedEvent[] = [];
  private droppedSinceLog = 0;
  private lastDropLog = 0;
  private failures = 0;
  private lastFailureLog = 0;
  private wake: (() => void) | null = null;
  private readonly stopping = new AbortController();
  private readonly loop: Promise<void>;
  /** Events dropped because the queue was full, since start. */
  dropped = 0;
  /** Events delivered, since start. */
  delivered = 0;

  constructor(
    readonly name: SinkName,
    private readonly sender: Sender,
    private readonly options: ForwardOptions,
    private readonly log: Log,
    private readonly metrics?: ForwardMetrics,
  ) {
    this.loop = this.run();
  }

  get length() {
    return this.queue.length;
  }

  push(events: ForwardedEvent[]) {
    const room = Math.max(0, this.options.maxQueue - this.queue.length);
    this.queue.push(...events.slice(0, room));
    const dropped = events.length - Math.min(room, events.length);
    if (dropped > 0) this.countDropped(dropped);
    this.wake?.();
  }

  countDropped(count: number) {
    this.dropped += count;
    this.droppedSinceLog += count;
    this.metrics?.dropped(this.name, count);
    const now = Date.now();
    if (now - this.lastDropLog < this.options.logEveryMs) return;
    this.log.warn(
      {
        sink: this.name,
        dropped: this.droppedSinceLog,
        droppedTotal: this.dropped,
        queued: this.queue.length,
      },
      'audit forwarding queue is full: events dropped',
    );
    this.lastDropLog = now;
    this.droppedSinceLog = 0;
  }

  private async run() {
    const { signal } = this.stopping;
    while (!signal.aborted) {
      if (this.queue.length === 0) {
        // Until an event comes or the forwarder stops (the listener goes with the wait: waits are many).
        await new Promise<void>((resolve) => {
          const done = () => {
            signal.removeEventListener('abort', done);
            this.wake = null;
            resolve();
          };
          this.wake = done;
          signal.addEventListener('abort', done, { once: true });
        });
        continue;
      }
      const batch = this.queue.slice(0, this.options.batchSize);
      try {
        await this.sender.send(batch);
      } catch (err) {
        if (signal.aborted) break;
        this.failures += 1;
        const now = Date.now();
        if (this.failures === 1 || now - this.lastFailureLog >= this.options.logEveryMs) {
          this.log.warn(
            {
              sink: this.name,
              reason: failureReason(err),
              attempts: this.failures,
              queued: this.queue.length,
            },
            'audit forwarding failed; retrying',
          );
          this.lastFailureLog = now;
        }
        const wait = Math.min(this.options.maxRetryMs, this.options.retryMs * 2 ** (this.failures - 1));
        await sleep(wait, signal);
        continue;
      }
      this.queue.splice(0, batch.length);
      this.delivered += batch.length;
      this.metrics?.forwarded(this.name, batch.length);
      if (this.failures > 0) {
        this.log.info({ sink: this.name, failedAttempts: this.failures }, 'audit forwarding delivers again');
        this.failures = 0;
      }
    }
  }

  /** Waits until the queue is empty or the deadline passes. */
  async drain(deadline: number) {
    while (this.queue.length > 0 && Date.now() < deadline && !this.stopping.signal.aborted)
      await new Promise((resolve) => setTimeout(resolve, 20));
  }

  async close() {
    this.stopping.abort();
    this.sender.close();
    await this.loop;
    if (this.queue.length > 0 || this.droppedSinceLog > 0)
      this.log.warn(
        {
          sink: this.name,
          undelivered: this.queue.length,
          dropped: this.droppedSinceLog,
          droppedTotal: this.dropped,
        },
        'audit events not forwarded at shutdown',
      );
  }
}

/** Forwards every event recordEvent stores to the configured receivers. */
export class AuditForwarder {
  private readonly pending: StoredEvent[] = [];
  private enriching: Promise<void> | null = null;
  private closed = false;
  readonly sinks: SinkQueue[];

  constructor(
    private readonly db: Db,
    readonly dialect: Dialect,
    senders: Partial<Record<SinkName, Sender>>,
    private readonly options: ForwardOptions,
    private readonly log: Log,
    metrics?: ForwardMetrics,
  ) {
    this.sinks = Object.entries(senders).map(
      ([name, sender]) => new SinkQueue(name as SinkName, sender, options, log, metrics),
    );
  }

  /** Takes one stored event (never waits, never throws): its names are looked up and it is queued for sending. */
  enqueue(event: StoredEvent) {
    if (this.closed) return;
    // The database names events slower than they come: they count as dropped by every receiver.
    if (this.pending.length >= MAX_PENDING) {
      for (const sink of this.sinks) sink.countDropped(1);
      return;
    }
    this.pending.push(event);
    this.startEnriching();
  }

  private startEnriching() {
    this.enriching ??= this.enrich().finally(() => {
      this.enriching = null;
      // Events that came after the loop's last look.
      if (this.pending.length > 0) this.startEnriching();
    });
  }

  /** Adds the user's and project's names (one query each per batch) and hands the events to every receiver. */
  private async enrich() {
    // Let the request that wrote the event finish first.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, 500);
      const userIds = [...new Set(batch.flatMap((e) => (e.user_id === null ? [] : [e.user_id])))];
      const projectIds = [...new Set(batch.flatMap((e) => (e.project_id === null ? [] : [e.project_id])))];
      const users = new Map<number, { username: string; name: string }>();
      const projects = new Map<number, string>();
      try {
        if (userIds.length)
          for (const u of await this.db
            .selectFrom('user')
            .select(['id', 'username', 'name'])
            .where('id', 'in', userIds)
            .execute())
            users.set(u.id, u);
        if (projectIds.length)
          for (const p of await this.db
            .selectFrom('project')
            .select(['id', 'name'])
            .where('id', 'in', projectIds)
            .execute())
            projects.set(p.id, p.name);
      } catch (err) {
        // The events go without names rather than not at all; their ids still say who and where.
        this.log.warn({ reason: failureReason(err) }, 'audit forwarding could not look up names');
      }
      const events: ForwardedEvent[] = batch.map((e) => {
        const user = e.user_id === null ? undefined : users.get(e.user_id);
        return {
          id: e.id,
          project_id: e.project_id,
          user_id: e.user_id,
          object_id: e.object_id,
          object_type: e.object_type,
          description: e.description,
          kind: e.kind,
          params: e.params,
          created: e.created,
          username: user?.username ?? null,
          user_name: user?.name ?? null,
          project_name: e.project_id === null ? null : (projects.get(e.project_id) ?? null),
        };
      });
      for (const sink of this.sinks) sink.push(events);
    }
  }

  /** Events waiting in the receivers' queues, by receiver (the queue gauge). */
  queued(): Partial<Record<SinkName, number>> {
    return Object.fromEntries(this.sinks.map((s) => [s.name, s.length]));
  }

  /** Stops taking events; gives what is queued until the deadline to be delivered; then stops the receivers. */
  async close() {
    this.closed = true;
    const deadline = Date.now() + this.options.closeTimeoutMs;
    while (this.enriching) await this.enriching;
    await Promise.all(this.sinks.map((s) => s.drain(deadline)));
    await Promise.all(this.sinks.map((s) => s.close()));
  }
}

/**
 * The forwarder the configuration asks for, or null when no receiver is configured. The settings were checked
 * when the configuration was loaded.
 */
export function createAuditForwarder(
  config: Pick<Config, 'auditWebhookUrl' | 'auditWebhookSecret' | 'auditSyslog'>,
  deps: { db: Db; dialect: Dialect; log: Log; metrics?: ForwardMetrics },
  overrides: Partial<ForwardOptions> = {},
): AuditForwarder | null {
  const options = { ...defaultForwardOptions, ...overrides };
  const senders: Partial<Record<SinkName, Sender>> = {};
  if (config.auditWebhookUrl) {
    const http = webhookSender(
      parseWebhookUrl(config.auditWebhookUrl),
      config.auditWebhookSecret,
      options.timeoutMs,
    );
    senders.webhook = {
      send: (events) => http.send(events.map((e) => JSON.stringify(e))),
      close: () => http.close(),
    };
  }
  if (config.auditSyslog) {
    const syslog = syslogSender(parseSyslogAddress(config.auditSyslog), options.timeoutMs);
    senders.syslog = {
      send: (events) => syslog.send(events.map((e) => syslogLine(e.created, JSON.stringify(e)))),
      close: () => syslog.close(),
    };
  }
  if (!senders.webhook && !senders.syslog) return null;
  return new AuditForwarder(deps.db, deps.dialect, senders, options, deps.log, deps.metrics);
}

/** Carries the forwarder on a database handle, so recordEvent finds it on any handle or transaction made from it. */
class AuditForwardingPlugin implements KyselyPlugin {
  constructor(readonly forwarder: AuditForwarder) {}
  transformQuery(args: PluginTransformQueryArgs) {
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs) {
    return args.result;
  }
}

/** The database handle whose events are forwarded (transactions begun on it included). */
export const withAuditForwarding = (db: Db, forwarder: AuditForwarder): Db =>
  db.withPlugin(new AuditForwardingPlugin(forwarder));

/**
 * The forwarder of a handle made by withAuditForwarding (or a transaction begun on one); null otherwise. Kysely
 * keeps a handle's plugins in its executor, which transactions inherit.
 */
export function forwarderOf(db: Db): AuditForwarder | null {
  for (const plugin of db.getExecutor().plugins)
    if (plugin instanceof AuditForwardingPlugin) return plugin.forwarder;
  return null;
}
