import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { testDialects } from '../test-support/dialects';
import { openDb } from '.';

const postgres = testDialects().find((d) => d.name === 'postgres');

/** Runs only where PostgreSQL is configured (CI sets SIGNALBOX_TEST_PG_URL); it is a property of that driver. */
describe.runIf(postgres)('PostgreSQL pool', () => {
  it('survives the server ending its idle connections and answers the next query', async () => {
    const database = await postgres!.create('');
    const handle = openDb(database.url);
    try {
      const pid = async () =>
        (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(handle.db)).rows[0]!.pid;
      const before = await pid();
      // Another session ends ours, as a restart or an administrator would, while it sits idle in the pool.
      const admin = new pg.Client({ connectionString: process.env.SIGNALBOX_TEST_PG_URL });
      await admin.connect();
      await admin.query('select pg_terminate_backend($1)', [before]);
      await admin.end();
      await new Promise((r) => setTimeout(r, 200));
      // No unhandled 'error' (vitest fails the run on one), and the pool reconnects.
      const after = await pid();
      expect(after).not.toBe(before);
    } finally {
      await handle.destroy();
      await database.drop();
    }
  });
});
