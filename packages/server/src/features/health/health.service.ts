import type { HealthCheck, ReadinessReport } from '@signalbox/contracts';
import { pendingMigrations } from '../../db';
import type { Deps } from '../../deps';
import { redisBridgeOf } from '../../live/redis';
import { pingDatabase } from './health.store';

/** How long a database check may take before the database counts as not answering. */
export const DB_CHECK_TIMEOUT_MS = 2000;

class TimedOut extends Error {}

/** `work` within `ms`, or TimedOut (the work itself is left to finish or fail on its own). */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut()), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * Why a database check failed, in words safe to show anyone: no answer in time, or unreachable with the driver's
 * error code (ECONNREFUSED, a SQLSTATE); never the driver's message, which may name the host, user or database.
 */
function databaseError(err: unknown): string {
  if (err instanceof TimedOut) return `no answer within ${DB_CHECK_TIMEOUT_MS} ms`;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? `unreachable (${code})` : 'unreachable';
}

const failed = (error: string): HealthCheck => ({ ok: false, error });

async function checkDatabase(deps: Pick<Deps, 'db'>): Promise<HealthCheck> {
  try {
    await within(DB_CHECK_TIMEOUT_MS, pingDatabase(deps.db));
    return { ok: true };
  } catch (err) {
    return failed(databaseError(err));
  }
}

async function checkMigrations(
  deps: Pick<Deps, 'db' | 'dialect'>,
): Promise<ReadinessReport['checks']['migrations']> {
  try {
    const pending = await within(DB_CHECK_TIMEOUT_MS, pendingMigrations(deps));
    if (!pending.length) return { ok: true };
    return { ok: false, error: `${pending.length} pending`, pending };
  } catch (err) {
    return failed(`not readable: ${databaseError(err)}`);
  }
}

function checkEngine(deps: Pick<Deps, 'tasks'>): HealthCheck {
  return deps.tasks.isRunning() ? { ok: true } : failed('not running (not started yet, or shutting down)');
}

function checkRedis(deps: Pick<Deps, 'bus'>): HealthCheck {
  return redisBridgeOf(deps.bus)?.ready() ? { ok: true } : failed('not connected');
}

/** Whether this instance can serve: its database answers and is migrated, its task engine runs, Redis is up. */
export async function readiness(deps: Pick<Deps, 'config' | 'db' | 'dialect' | 'tasks' | 'bus'>) {
  const [database, migrations] = await Promise.all([checkDatabase(deps), checkMigrations(deps)]);
  const checks: ReadinessReport['checks'] = { database, migrations, engine: checkEngine(deps) };
  if (deps.config.redisUrl) checks.redis = checkRedis(deps);
  const ready = Object.values(checks).every((c) => c.ok);
  return { status: ready ? 'ready' : 'not_ready', checks } satisfies ReadinessReport;
}
