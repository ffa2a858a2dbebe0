import type { Db } from '../db';
import { toCount } from '../db/values';

/** The instances sharing the database (task_runner: heartbeat and holder) and the queue lease they claim under. */

/** The process that holds an instance id: its host name and pid. */
export type RunnerOwner = { host: string; pid: number };

/** Records an instance's heartbeat and the process holding it (inserting its row on the first one). */
export async function beatRunner(db: Db, id: string, time: string, holder: RunnerOwner) {
  const values = { heartbeat: time, host: holder.host.slice(0, 255), pid: holder.pid };
  const res = await db.updateTable('task_runner').set(values).where('id', '=', id).executeTakeFirst();
  if (toCount(res.numUpdatedRows) > 0) return;
  try {
    await db
      .insertInto('task_runner')
      .values({ id, ...values })
      .execute();
  } catch {
    // Inserted meanwhile by a concurrent start of the same instance id: set it once more.
    await db.updateTable('task_runner').set(values).where('id', '=', id).execute();
  }
}

export function findRunner(db: Db, id: string) {
  return db
    .selectFrom('task_runner')
    .select(['heartbeat', 'host', 'pid'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function removeRunner(db: Db, id: string) {
  await db.deleteFrom('task_runner').where('id', '=', id).execute();
}

/** Instances whose last heartbeat is at or after `since`. */
export async function liveRunners(db: Db, since: string): Promise<Set<string>> {
  const rows = await db.selectFrom('task_runner').select('id').where('heartbeat', '>=', since).execute();
  return new Set(rows.map((r) => r.id));
}

export async function removeStaleRunners(db: Db, before: string) {
  await db.deleteFrom('task_runner').where('heartbeat', '<', before).execute();
}

/** Takes (or extends) the queue lease unless another instance holds an unexpired one. */
export async function takeQueueLease(db: Db, holder: string, time: string, expires: string) {
  const res = await db
    .updateTable('task_queue_lock')
    .set({ holder, expires })
    .where('id', '=', 1)
    .where((eb) => eb.or([eb('holder', 'is', null), eb('holder', '=', holder), eb('expires', '<', time)]))
    .executeTakeFirst();
  return toCount(res.numUpdatedRows) === 1;
}

export async function releaseQueueLease(db: Db, holder: string) {
  await db
    .updateTable('task_queue_lock')
    .set({ holder: null, expires: '' })
    .where('id', '=', 1)
    .where('holder', '=', holder)
    .execute();
}
