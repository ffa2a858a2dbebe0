import { createConnection } from 'mysql2/promise';
import pg from 'pg';

export type KillOptions = {
  /**
   * Wait (up to this many ms) until the application holds one of the connections checked out of its pool —
   * inside a transaction on PostgreSQL (a statement on its own gives its client back before the socket closes),
   * running a statement on MariaDB — and end them all at that moment.
   */
  whileHeldMs?: number;
};

/**
 * Ends every server connection to the database `dbUrl` names, as an administrator or a failover would, except
 * the one issuing the command: `pg_terminate_backend` on PostgreSQL, `KILL` on MariaDB/MySQL. Resolves with
 * how many connections it ended.
 */
export async function killConnections(dbUrl: string, options: KillOptions = {}): Promise<number> {
  const database = decodeURIComponent(new URL(dbUrl).pathname.slice(1));
  const deadline = Date.now() + (options.whileHeldMs ?? 0);
  if (dbUrl.startsWith('postgres')) {
    const admin = new pg.Client({ connectionString: dbUrl });
    await admin.connect();
    try {
      for (;;) {
        // One statement: the check and the kill see the same moment.
        const res = await admin.query<{ ended: boolean }>(
          `select pg_terminate_backend(pid) as ended from pg_stat_activity
            where datname = $1 and pid <> pg_backend_pid()
              and ($2 or exists (select 1 from pg_stat_activity
                                  where datname = $1 and pid <> pg_backend_pid()
                                    and (state = 'idle in transaction' or (state = 'active' and xact_start < query_start))))`,
          [database, Date.now() >= deadline],
        );
        if (res.rows.length) return res.rows.filter((r) => r.ended).length;
      }
    } finally {
      await admin.end();
    }
  }
  const admin = await createConnection(dbUrl.replace(/^mariadb:/, 'mysql:'));
  try {
    let rows: { id: number; command: string }[];
    for (;;) {
      const [list] = await admin.query(
        'select id, command from information_schema.processlist where db = ? and id <> connection_id()',
        [database],
      );
      rows = list as { id: number; command: string }[];
      if (Date.now() >= deadline || rows.some((r) => r.command !== 'Sleep')) break;
    }
    let ended = 0;
    for (const { id } of rows) {
      try {
        await admin.query(`KILL ${Number(id)}`);
        ended += 1;
      } catch {
        // It ended on its own in the meantime.
      }
    }
    return ended;
  } finally {
    await admin.end();
  }
}
