import type { Db } from '../../src/db';
import { now } from '../../src/db/values';
import { sha256 } from '../../src/lib/crypto';

let seq = 0;

/** A registered runner row, as the registration route stores it (its public key looks like a secret on purpose). */
export async function insertRunner(
  db: Db,
  values: { project_id: number | null; name?: string; tags?: string[]; online?: boolean },
): Promise<number> {
  seq += 1;
  const created = now();
  const name = values.name ?? `runner-${seq}`;
  await db
    .insertInto('remote_runner')
    .values({
      project_id: values.project_id,
      name,
      tags: JSON.stringify(values.tags ?? []),
      token_hash: sha256(`runner-token-${seq}-${Math.random()}`),
      public_key: '-----BEGIN PUBLIC KEY-----\nsecret-looking\n-----END PUBLIC KEY-----',
      max_parallel_tasks: 2,
      active: 1,
      version: '1.2.3',
      webhook: '',
      created,
      touched: values.online ? created : null,
      started_at: values.online ? created : null,
      instance_id: values.online ? 'instance-1' : null,
    })
    .execute();
  const row = await db
    .selectFrom('remote_runner')
    .select('id')
    .where('created', '=', created)
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.id;
}
