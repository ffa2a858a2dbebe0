import type { ReadinessReport } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { behindRelay } from '../../../test/support/db-relay';
import { type TestDialect, testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { waitFor } from '../../../test/support/task-fixtures';
import { DB_CHECK_TIMEOUT_MS } from './health.service';

/**
 * The database server becomes unreachable (a TCP relay in front of it stops passing connections, as a server
 * that went away): readiness turns 503 within its check timeout while liveness stays 200, and readiness is 200
 * again once the database is back.
 */
function outageOn(name: TestDialect['name']) {
  const base = testDialects().find((d) => d.name === name);
  describe.runIf(base)(`health probes while ${name} is away`, () => {
    let h: Harness;
    let relay: Awaited<ReturnType<typeof behindRelay>>;
    beforeAll(async () => {
      relay = await behindRelay(base!);
      h = await createHarness(relay.dialect);
    });
    afterAll(async () => {
      relay?.outage.up();
      await h?.close();
      await relay?.close();
    });

    /** One readiness probe, which must answer within the database check's timeout (plus scheduling slack). */
    async function probe() {
      const began = Date.now();
      const res = await h.anonymous().get('/api/health/ready');
      expect(Date.now() - began).toBeLessThan(DB_CHECK_TIMEOUT_MS + 1500);
      expect(res.body).not.toContain(h.config.dbUrl);
      return { status: res.statusCode, body: res.json() as ReadinessReport };
    }
    const probeUntil = (status: number, what: string) =>
      waitFor(
        async () => {
          const answer = await probe();
          return answer.status === status ? answer : undefined;
        },
        20_000,
        what,
      );

    it('turns 503 while the database is unreachable and 200 when it is back', async () => {
      expect((await probe()).status).toBe(200);

      relay.outage.down();
      const away = await probeUntil(503, 'readiness to fail');
      expect(away.body.status).toBe('not_ready');
      expect(away.body.checks.database.ok).toBe(false);
      expect(away.body.checks.database.error).toMatch(/^(unreachable|no answer within)/);
      expect(away.body.checks.engine).toEqual({ ok: true });
      expect((await h.anonymous().get('/api/health/live')).statusCode).toBe(200);

      relay.outage.up();
      const back = await probeUntil(200, 'readiness to come back');
      expect(back.body.status).toBe('ready');
    });
  });
}

// Only where the servers are configured (CI sets SIGNALBOX_TEST_PG_URL and SIGNALBOX_TEST_MYSQL_URL).
outageOn('postgres');
outageOn('mysql');
