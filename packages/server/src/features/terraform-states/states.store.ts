import type { Selectable } from 'kysely';
import type { Db } from '../../db';
import type { Dialect } from '../../db/dialect';
import type { TerraformStateTable } from '../../db/tables';
import { insertReturningId, isUniqueViolation, now, toCount } from '../../db/values';

export type StateRow = Selectable<TerraformStateTable>;

/** Who acts on a state: a user (session or API token), or a running task (and the user who started it). */
export type StateActor = { userId: number | null; taskId: number | null };

export const findState = (db: Db, projectId: number, name: string) =>
  db
    .selectFrom('terraform_state')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('name', '=', name)
    .executeTakeFirst();

/** The state of that name, made (empty, unlocked) when the project has none yet. */
export async function findOrCreateState(db: Db, dialect: Dialect, projectId: number, name: string) {
  const found = await findState(db, projectId, name);
  if (found) return found;
  try {
    await insertReturningId(db, dialect, 'terraform_state', { project_id: projectId, name, created: now() });
  } catch (err) {
    // Made at the same moment by another request: that one is the state.
    if (!isUniqueViolation(err)) throw err;
  }
  const made = await findState(db, projectId, name);
  if (!made) throw new Error('terraform state vanished after it was made');
  return made;
}

/** Takes the lock when the state is unlocked (one conditional update: two takers cannot both win). */
export async function takeLock(
  db: Db,
  stateId: number,
  lock: { id: string; info: string; actor: StateActor },
): Promise<boolean> {
  const res = await db
    .updateTable('terraform_state')
    .set({
      lock_id: lock.id,
      lock_info: lock.info,
      locked_at: now(),
      locked_by_user_id: lock.actor.userId,
      locked_by_task_id: lock.actor.taskId,
    })
    .where('id', '=', stateId)
    .where('lock_id', 'is', null)
    .executeTakeFirst();
  return toCount(res.numUpdatedRows) === 1;
}

/** Releases the lock when it is `lockId` (any lock when null: a manager's force-unlock). */
export async function releaseLock(db: Db, stateId: number, lockId: string | null): Promise<boolean> {
  let q = db
    .updateTable('terraform_state')
    .set({
      lock_id: null,
      lock_info: null,
      locked_at: null,
      locked_by_user_id: null,
      locked_by_task_id: null,
    })
    .where('id', '=', stateId)
    .where('lock_id', 'is not', null);
  if (lockId !== null) q = q.where('lock_id', '=', lockId);
  const res = await q.executeTakeFirst();
  return toCount(res.numUpdatedRows) === 1;
}

export type NewVersion = {
  stateId: number;
  projectId: number;
  serial: number;
  lineage: string;
  size: number;
  sealed: string;
  actor: StateActor;
  source: 'write' | 'rollback';
  rolledBackFrom?: number;
  /** The lock the writer holds; null: it writes an unlocked state. */
  lockId: string | null;
};

/**
 * Stores a version and makes it current, then drops the versions past the newest `keep` (the current one is the
 * newest). `trx` is the caller's transaction. Null when the state's lock is no longer `v.lockId`: the caller
 * refuses the write (and its transaction leaves nothing behind).
 */
export async function addVersion(trx: Db, dialect: Dialect, v: NewVersion, keep: number) {
  const id = await insertReturningId(trx, dialect, 'terraform_state_version', {
    state_id: v.stateId,
    project_id: v.projectId,
    serial: v.serial,
    lineage: v.lineage,
    size: v.size,
    secret: v.sealed,
    created: now(),
    user_id: v.actor.userId,
    task_id: v.actor.taskId,
    source: v.source,
    rolled_back_from: v.rolledBackFrom ?? null,
  });
  // Current only while the state's lock is still the one the writer holds (none: unlocked), checked in the same
  // statement that moves the state on, so a lock taken meanwhile wins.
  const res = await trx
    .updateTable('terraform_state')
    .set({ current_version_id: id })
    .where('id', '=', v.stateId)
    .where((eb) => (v.lockId ? eb('lock_id', '=', v.lockId) : eb('lock_id', 'is', null)))
    .executeTakeFirst();
  if (toCount(res.numUpdatedRows) !== 1) return null;
  const oldest = await trx
    .selectFrom('terraform_state_version')
    .select('id')
    .where('state_id', '=', v.stateId)
    .orderBy('id', 'desc')
    .limit(1)
    .offset(keep - 1)
    .executeTakeFirst();
  if (oldest)
    await trx
      .deleteFrom('terraform_state_version')
      .where('state_id', '=', v.stateId)
      .where('id', '<', oldest.id)
      .execute();
  return id;
}

export const findVersion = (db: Db, stateId: number, versionId: number) =>
  db
    .selectFrom('terraform_state_version')
    .selectAll()
    .where('state_id', '=', stateId)
    .where('id', '=', versionId)
    .executeTakeFirst();

export async function deleteState(trx: Db, stateId: number) {
  await trx.deleteFrom('terraform_state_version').where('state_id', '=', stateId).execute();
  await trx.deleteFrom('terraform_state').where('id', '=', stateId).execute();
}

const versionColumns = [
  'v.id',
  'v.state_id',
  'v.serial',
  'v.lineage',
  'v.size',
  'v.created',
  'v.user_id',
  'v.task_id',
  'v.source',
  'v.rolled_back_from',
  'u.name as user_name',
] as const;

/** A state's versions without their bodies, newest first. */
export const listVersions = (db: Db, stateId: number) =>
  db
    .selectFrom('terraform_state_version as v')
    .leftJoin('user as u', 'u.id', 'v.user_id')
    .select(versionColumns)
    .where('v.state_id', '=', stateId)
    .orderBy('v.id', 'desc')
    .execute();

/** Every state of a project (by name), with its current version's facts, lock holder's name and version count. */
export async function listStates(db: Db, projectId: number) {
  const states = await db
    .selectFrom('terraform_state as s')
    .leftJoin('terraform_state_version as v', 'v.id', 's.current_version_id')
    .leftJoin('user as u', 'u.id', 'v.user_id')
    .leftJoin('user as lu', 'lu.id', 's.locked_by_user_id')
    .select([
      's.id',
      's.name',
      's.lock_id',
      's.lock_info',
      's.locked_at',
      's.locked_by_user_id',
      's.locked_by_task_id',
      'v.size',
      'v.serial',
      'v.lineage',
      'v.created as updated',
      'v.user_id',
      'v.task_id',
      'u.name as user_name',
      'lu.name as locked_by_user_name',
    ])
    .where('s.project_id', '=', projectId)
    .orderBy('s.name')
    .execute();
  const counts = await db
    .selectFrom('terraform_state_version')
    .select(['state_id', (eb) => eb.fn.countAll().as('n')])
    .where('project_id', '=', projectId)
    .groupBy('state_id')
    .execute();
  const byState = new Map(counts.map((c) => [c.state_id, toCount(c.n)]));
  return states.map((s) => ({ ...s, versions: byState.get(s.id) ?? 0 }));
}

/** The current version of every state of a project (sealed as stored), by name: what a project backup holds. */
export const currentVersionsOf = (db: Db, projectId: number) =>
  db
    .selectFrom('terraform_state as s')
    .innerJoin('terraform_state_version as v', 'v.id', 's.current_version_id')
    .select(['s.name', 'v.serial', 'v.lineage', 'v.secret as sealed'])
    .where('s.project_id', '=', projectId)
    .orderBy('s.name')
    .execute();
