import { sql } from 'kysely';
import type { Db } from '../../db';

/** The cheapest statement that needs the database server to answer. */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
