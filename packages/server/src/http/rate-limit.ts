import { createRequire } from 'node:module';
import rateLimit, {
  type FastifyRateLimitStore,
  type FastifyRateLimitStoreCtor,
  normalizeIP,
  type RateLimitPluginOptions,
} from '@fastify/rate-limit';
import { coded } from '@signalbox/contracts';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config';
import { AppError } from '../lib/errors';

/** The window the limits are counted over: the settings are requests per minute. */
const WINDOW_MS = 60_000;
/** Clients whose counts one instance holds in memory (the least recently seen are forgotten first). */
const LOCAL_CLIENTS = 10_000;
/** How long a request waits for Redis to count it before it is counted on this instance instead. */
const REDIS_TIMEOUT_MS = 500;

/**
 * Routes never limited:
 * - probes and metrics: load balancers and Prometheus poll them from one address, and a 429 there would read as
 *   an outage;
 * - the runner protocol (registration, unregistration, socket): runners are not users, a fleet often shares one
 *   NAT address and reconnects all at once after a server restart, and a refused socket only delays its tasks.
 *   Wrong registration tokens are throttled like wrong passwords (features/auth/sign-in-throttle.ts), and an
 *   established socket's messages never pass through HTTP hooks.
 */
const EXEMPT_ROUTES = new Set([
  '/api/ping',
  '/api/health/live',
  '/api/health/ready',
  '/api/metrics',
  '/api/internal/runners',
  '/api/internal/runners/ws',
]);

/** Whether a request is never counted: an exempt route, or the web console's files (no database, cacheable). */
function isExempt(request: FastifyRequest): boolean {
  const url = request.routeOptions.url;
  return url === undefined || !url.startsWith('/api/') || EXEMPT_ROUTES.has(url);
}

/**
 * Whom a request is counted against: the signed-in user (session or API token), else the client's address as
 * Fastify computed it under SIGNALBOX_TRUST_PROXY (an IPv6 address by its /64, which one host commonly holds).
 */
function clientKey(request: FastifyRequest): string {
  return request.user ? `user:${request.user.id}` : `addr:${normalizeIP(request.ip, 64)}`;
}

/** The plugin's own stores, as its index.js builds them (the package version is pinned with `~` for this). */
type StoreClass = new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  ...more: unknown[]
) => FastifyRateLimitStore;
const load = createRequire(import.meta.url);
const pluginStore = (name: 'LocalStore' | 'RedisStore') =>
  load(`@fastify/rate-limit/store/${name}.js`) as StoreClass;

/**
 * Counts in Redis (one key per client and window, so every instance counts together), and on this instance
 * while Redis is unreachable, slow or failing: a request is never refused because Redis is down, nor held longer
 * than REDIS_TIMEOUT_MS. One warning is logged per outage and one line when Redis counts again.
 */
function sharedStore(
  redis: Redis,
  shared: FastifyRateLimitStore,
  local: FastifyRateLimitStore,
  log: FastifyBaseLogger,
): FastifyRateLimitStore {
  let outage = false;
  const down = (why: string) => {
    if (outage) return;
    outage = true;
    log.warn(
      { reason: why },
      'Redis unreachable: request limits are counted on this instance until it answers',
    );
  };
  const store: FastifyRateLimitStore = {
    incr(key, callback, timeWindow, max) {
      if (redis.status !== 'ready') {
        down(`connection ${redis.status}`);
        return local.incr(key, callback, timeWindow, max);
      }
      shared.incr(
        key,
        (err, result) => {
          if (err || !result) {
            down(err?.message ?? 'no answer');
            return local.incr(key, callback, timeWindow, max);
          }
          if (outage) {
            outage = false;
            log.info('Redis answers again: request limits are counted across instances');
          }
          callback(null, result);
        },
        timeWindow,
        max,
      );
    },
    // Routes never set limits of their own here; a child counts with its parent.
    child: () => store,
  };
  return store;
}

const connections = new WeakMap<FastifyInstance, Redis>();
/** Whether the limiter of `app` counts in Redis right now (tests wait for it); undefined when it has no Redis. */
export const rateLimitSharedReady = (app: FastifyInstance) => {
  const redis = connections.get(app);
  return redis && redis.status === 'ready';
};

export type RateLimitOptions = {
  /** Where the counters are shared when SIGNALBOX_REDIS_URL is set: the deployment's Redis prefix. */
  redisPrefix?: string;
};

/**
 * The request limiter (SIGNALBOX_RATE_LIMIT, SIGNALBOX_RATE_LIMIT_ANONYMOUS): every /api route registered after
 * this counts each request against its client for a minute, and a client over its limit gets 429
 * `too_many_requests` with Retry-After. It runs after the sign-in check (a route hook runs after the app's), so a
 * signed-in user is counted as themself whatever address they come from; requests the sign-in check refuses
 * (401) end at one indexed lookup before it. With Redis the counts are shared by every instance under
 * `signalbox:<prefix>:ratelimit:`, on a connection of the limiter's own (the live-event bridge's are pub/sub).
 */
export async function registerRateLimit(
  app: FastifyInstance,
  config: Pick<Config, 'rateLimit' | 'rateLimitAnonymous' | 'redisUrl'>,
  options: RateLimitOptions = {},
): Promise<void> {
  if (config.rateLimit === 0) return;
  const perUser = config.rateLimit;
  const perAddress = config.rateLimitAnonymous;

  let store: FastifyRateLimitStoreCtor | undefined;
  if (config.redisUrl) {
    const { Redis } = await import('ioredis');
    const [LocalStore, RedisStore] = [pluginStore('LocalStore'), pluginStore('RedisStore')];
    const redis = new Redis(config.redisUrl, {
      // A count that cannot be made now is made on this instance, never queued or retried late.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_TIMEOUT_MS,
      connectionName: 'signalbox-ratelimit',
    });
    connections.set(app, redis);
    // Reported by the store when a count falls back (one warning per outage); ioredis reconnects by itself.
    redis.on('error', () => {});
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
    const nameSpace = `signalbox:${options.redisPrefix ?? 'default'}:ratelimit:`;
    const counters = sharedStore(
      redis,
      new RedisStore(false, false, redis, nameSpace),
      new LocalStore(false, false, LOCAL_CLIENTS),
      app.log,
    );
    store = function SharedCounters() {
      return counters;
    } as unknown as FastifyRateLimitStoreCtor;
  }

  const limits: RateLimitPluginOptions = {
    global: true,
    hook: 'onRequest',
    timeWindow: WINDOW_MS,
    cache: LOCAL_CLIENTS,
    store,
    keyGenerator: clientKey,
    max: (request) => (request.user ? perUser : perAddress),
    allowList: (request) => isExempt(request) || (!request.user && perAddress === 0),
    errorResponseBuilder: (_request, context) =>
      new AppError(429, coded('too_many_requests', { seconds: Math.max(1, Math.ceil(context.ttl / 1000)) })),
  };
  await app.register(rateLimit, limits);
}
