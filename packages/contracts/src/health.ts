// The answers of the health probes (/api/health/live, /api/health/ready), for load balancers and orchestrators.
import { z } from 'zod';

/** GET /api/health/live: the process answers. */
export const livenessReportSchema = z.strictObject({ status: z.literal('ok') });
export type LivenessReport = z.infer<typeof livenessReportSchema>;

/** One readiness check. */
export const healthCheckSchema = z.strictObject({
  ok: z.boolean(),
  error: z
    .string()
    .optional()
    .describe('What is wrong, in a few words (never a connection string or secret); only when not ok'),
});
export type HealthCheck = z.infer<typeof healthCheckSchema>;

/** GET /api/health/ready: 200 when every check is ok, 503 otherwise. */
export const readinessReportSchema = z.strictObject({
  status: z.enum(['ready', 'not_ready']),
  checks: z.strictObject({
    database: healthCheckSchema,
    migrations: healthCheckSchema.extend({
      pending: z
        .array(z.string())
        .optional()
        .describe('The migrations this server knows that the database has not run'),
    }),
    engine: healthCheckSchema,
    redis: healthCheckSchema.optional().describe('Only when Redis is configured'),
  }),
});
export type ReadinessReport = z.infer<typeof readinessReportSchema>;
