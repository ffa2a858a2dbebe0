/** The answers of the health probes (/api/health/live, /api/health/ready), for load balancers and orchestrators. */

/** GET /api/health/live: the process answers. */
export type LivenessReport = { status: 'ok' };

/** One readiness check: `error` says in a few words what is wrong (never a connection string or secret). */
export type HealthCheck = { ok: boolean; error?: string };

/** GET /api/health/ready: 200 when every check is ok, 503 otherwise. `redis` only when Redis is configured. */
export type ReadinessReport = {
  status: 'ready' | 'not_ready';
  checks: {
    database: HealthCheck;
    /** `pending`: the migrations this server knows that the database has not run. */
    migrations: HealthCheck & { pending?: string[] };
    engine: HealthCheck;
    redis?: HealthCheck;
  };
};
