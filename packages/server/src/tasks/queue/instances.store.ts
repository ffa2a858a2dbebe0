import type { Db } from '../../db';
import type { Dialect } from '../../db/dialect';
import { databaseNow, toCount } from '../../db/values';

/** Where the instances' shared state lives; its server's clock is the one time they all agree on. */
export type SharedDb = { db: Db; dialect: Dialect };

const databaseIso = async ({ db, dialect }: SharedDb, offsetMs = 0) =>
  new Date((await databaseNow(db, dialect)) + offsetMs).toISOString();

/** The instances sharing the database (task_runner: heartbeat and holder) and the queue lease they claim under. */

/** The process that holds an instance id: its host name and pid. */
export type RunnerOwner = { host: string; pid: number };

/**
 * Records an instance's heartbeat, at the database's time (so a skewed clock of this machine never makes it look
 * dead or alive to the others), and the process holding it (inserting its row on the first one).
 */
export async function beatRunner(shared: SharedDb, id: string, holder: RunnerOwner) {
  const { db } = shared;
  const values = { heartbeat: await databaseIso(shared), host: holder.host.slice(0, 255), pid: holder.pid };
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

/** Instances whose last heartbeat is at most `staleMs` old by the database's clock. */
export async function liveRunners(shared: SharedDb, staleMs: number): Promise<Set<string>> {
  const since = await databaseIso(shared, -staleMs);
  const rows = await shared.db
    .selectFrom('task_runner')
    .select('id')
    .where('heartbeat', '>=', since)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Removes the rows of instances whose last heartbeat is more than `staleMs` old by the database's clock. */
export async function removeStaleRunners(shared: SharedDb, staleMs: number) {
  const before = await databaseIso(shared, -staleMs);
  await shared.db.deleteFrom('task_runner').where('heartbeat', '<', before).execute();
}

/** How long ago, by the database's clock, this heartbeat was written. */
export async function heartbeatAge(shared: SharedDb, heartbeat: string) {
  return (await databaseNow(shared.db, shared.dialect)) - Date.parse(heartbeat);
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
