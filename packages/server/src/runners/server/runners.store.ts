import type { Selectable } from 'kysely';
import type { Db } from '../../db';
import type { RemoteRunnerTable } from '../../db/tables';
import { databaseNow, parseJson, toCount } from '../../db/values';
import type { SharedDb } from '../../tasks/queue/instances.store';

/** SQL on remote_runner and the remote side of task rows (remote.ts, the runner routes). */

export type RemoteRunnerRow = Selectable<RemoteRunnerTable>;

/** Statuses in which a task takes one of its runner's slots (`max_parallel_tasks`). */
export const slotStatuses = ['starting', 'running', 'waiting_confirmation', 'confirmed'];
/** Statuses of a task a runner still works on (a stopping task too). */
export const remoteActiveStatuses = [...slotStatuses, 'stopping'];

/** The database's clock as ISO text, moved by `offsetMs`. */
export const databaseIso = async ({ db, dialect }: SharedDb, offsetMs = 0) =>
  new Date((await databaseNow(db, dialect)) + offsetMs).toISOString();

export const tagsOf = (runner: Pick<RemoteRunnerRow, 'tags'>): string[] => {
  const tags = parseJson<unknown>(runner.tags, []);
  return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : [];
};

export const findRemoteRunnerByToken = (db: Db, tokenHash: string) =>
  db.selectFrom('remote_runner').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();

export const findRemoteRunner = (db: Db, id: number) =>
  db.selectFrom('remote_runner').selectAll().where('id', '=', id).executeTakeFirst();

/** Runners some instance holds a connection of (enabled or not). */
export const connectedRunners = (db: Db) =>
  db.selectFrom('remote_runner').selectAll().where('instance_id', 'is not', null).execute();

/**
 * Records a runner's hello: its process, protocol, sandbox and that this instance holds its connection. Its
 * offered capacity is not stored: `max_parallel_tasks` is the owner's setting.
 */
export async function greetRunner(
  shared: SharedDb,
  id: number,
  fields: {
    version: string;
    protocol: number;
    started_at: string;
    instance_id: string;
    sandbox: string | null;
    sandbox_reason: string | null;
  },
) {
  await shared.db
    .updateTable('remote_runner')
    .set({ ...fields, touched: await databaseIso(shared) })
    .where('id', '=', id)
    .execute();
}

/** Records what a runner of another protocol version said it is (it is refused and shows as incompatible). */
export async function recordIncompatibleRunner(
  db: Db,
  id: number,
  fields: { version: string; protocol: number },
) {
  await db.updateTable('remote_runner').set(fields).where('id', '=', id).execute();
}

/** Records a heartbeat; false when another instance holds the runner's connection now (this one was replaced). */
export async function touchRunner(shared: SharedDb, id: number, instanceId: string) {
  const res = await shared.db
    .updateTable('remote_runner')
    .set({ touched: await databaseIso(shared) })
    .where('id', '=', id)
    .where('instance_id', '=', instanceId)
    .executeTakeFirst();
  return toCount(res.numUpdatedRows) === 1;
}

/** The runner's connection here closed: it shows offline unless another instance took it meanwhile. */
export async function releaseRunner(db: Db, id: number, instanceId: string) {
  await db
    .updateTable('remote_runner')
    .set({ instance_id: null })
    .where('id', '=', id)
    .where('instance_id', '=', instanceId)
    .execute();
}

/** Connections held by instances that are gone (or by this instance's previous process) show offline. */
export async function releaseRunnersOf(db: Db, instanceIds: string[]) {
  if (!instanceIds.length) return;
  await db
    .updateTable('remote_runner')
    .set({ instance_id: null })
    .where('instance_id', 'in', instanceIds)
    .execute();
}

/** Instance ids runners are recorded as connected to. */
export const runnerInstances = async (db: Db) =>
  (
    await db
      .selectFrom('remote_runner')
      .select('instance_id')
      .distinct()
      .where('instance_id', 'is not', null)
      .execute()
  ).map((r) => r.instance_id as string);

/** Runners not heard from since `before` (database clock) that still have active tasks. */
export const silentRunners = (db: Db, before: string) =>
  db
    .selectFrom('remote_runner')
    .selectAll()
    .where((eb) => eb.or([eb('touched', '<', before), eb('touched', 'is', null)]))
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('task')
          .select('task.id')
          .whereRef('task.remote_runner_id', '=', 'remote_runner.id')
          .where('task.status', 'in', remoteActiveStatuses),
      ),
    )
    .execute();

/** Active tasks whose runner was deleted (in the console, or by another instance's unregistration). */
export const tasksOfDeletedRunners = (db: Db) =>
  db
    .selectFrom('task')
    .select(['id', 'project_id', 'status'])
    .where('remote_runner_id', 'is not', null)
    .where('status', 'in', remoteActiveStatuses)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('remote_runner')
            .select('remote_runner.id')
            .whereRef('remote_runner.id', '=', 'task.remote_runner_id'),
        ),
      ),
    )
    .execute();

/** A runner's active tasks. */
export const tasksOfRunner = (db: Db, runnerId: number) =>
  db
    .selectFrom('task')
    .select(['id', 'project_id', 'template_id', 'status', 'runner', 'runner_seq', 'start', 'created'])
    .where('remote_runner_id', '=', runnerId)
    .where('status', 'in', remoteActiveStatuses)
    .execute();

/** The tasks of a list with their status and runner (a hello's running tasks). */
export const remoteTasks = (db: Db, ids: number[]) =>
  ids.length
    ? db
        .selectFrom('task')
        .select([
          'id',
          'project_id',
          'template_id',
          'status',
          'runner',
          'remote_runner_id',
          'runner_seq',
          'start',
        ])
        .where('id', 'in', ids)
        .execute()
    : Promise.resolve([]);

/** A reconnected runner's task is held by this instance from now on. */
export async function adoptTask(db: Db, taskId: number, runnerId: number, instanceId: string) {
  const res = await db
    .updateTable('task')
    .set({ runner: instanceId })
    .where('id', '=', taskId)
    .where('remote_runner_id', '=', runnerId)
    .where('status', 'in', remoteActiveStatuses)
    .executeTakeFirst();
  return toCount(res.numUpdatedRows) === 1;
}

/** Runner tags of templates and inventories (the queue reads them for waiting tasks). */
export const templateTags = (db: Db, ids: number[]) =>
  ids.length
    ? db.selectFrom('template').select(['id', 'runner_tag', 'inventory_id']).where('id', 'in', ids).execute()
    : Promise.resolve([]);

export const inventoryTags = (db: Db, ids: number[]) =>
  ids.length
    ? db.selectFrom('inventory').select(['id', 'runner_tag']).where('id', 'in', ids).execute()
    : Promise.resolve([]);

/** A registration spends a one-time token: true for exactly one of concurrent registrations. */
export async function spendRegistrationToken(db: Db, id: number, usedAt: string, notExpiredAt: string) {
  const res = await db
    .updateTable('runner_registration_token')
    .set({ used_at: usedAt })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', notExpiredAt)
    .executeTakeFirst();
  return toCount(res.numUpdatedRows) === 1;
}

export const findRegistrationToken = (db: Db, tokenHash: string) =>
  db
    .selectFrom('runner_registration_token')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
