import { createConnection } from 'mysql2/promise';
import pg from 'pg';

/**
 * Ends every server connection to the database `dbUrl` names, as an administrator or a failover would, except
 * the one issuing the command: `pg_terminate_backend` on PostgreSQL, `KILL` on MariaDB/MySQL. Resolves with
 * how many connections it ended.
 */
export async function killConnections(dbUrl: string): Promise<number> {
  const database = decodeURIComponent(new URL(dbUrl).pathname.slice(1));
  if (dbUrl.startsWith('postgres')) {
    const admin = new pg.Client({ connectionString: dbUrl });
    await admin.connect();
    try {
      const res = await admin.query<{ ended: boolean }>(
        'select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [database],
      );
      return res.rows.filter((r) => r.ended).length;
    } finally {
      await admin.end();
    }
  }
  const admin = await createConnection(dbUrl.replace(/^mariadb:/, 'mysql:'));
  try {
    const [rows] = await admin.query(
      'select id from information_schema.processlist where db = ? and id <> connection_id()',
      [database],
    );
    let ended = 0;
    for (const { id } of rows as { id: number }[]) {
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
