import { createHash } from 'node:crypto';
import {
  coded,
  type LockInfo,
  lockInfoInput,
  type StateDetail,
  type StateDiff,
  type StateLock,
  type StateSummary,
  type StateVersion,
} from '@signalbox/contracts';
import type { UserRow } from '../../access/principals.store';
import { recordProjectEvent } from '../../audit/audit.store';
import type { Db } from '../../db';
import { transaction } from '../../db/transaction';
import { parseJsonObject } from '../../db/values';
import type { Deps } from '../../deps';
import { AppError, badRequest, notFound } from '../../lib/errors';
import { diffStates } from './state-diff';
import { openState, parseStateDocument, sealState, withSerial } from './state-document';
import {
  addVersion,
  deleteState,
  findOrCreateState,
  findState,
  findVersion,
  listStates,
  listVersions,
  releaseLock,
  type StateActor,
  type StateRow,
  takeLock,
} from './states.store';

type StateDeps = Pick<Deps, 'db' | 'dialect' | 'box' | 'config'>;

/** Terraform's LockInfo of the state's holder, as stored (with its ID always the lock's). */
function holderInfo(state: StateRow): LockInfo {
  const stored = parseJsonObject(state.lock_info);
  const info: Record<string, string> = {};
  for (const key of ['ID', 'Operation', 'Info', 'Who', 'Version', 'Created', 'Path'])
    if (typeof stored[key] === 'string') info[key] = stored[key] as string;
  return { ...info, ID: state.lock_id ?? '' } as LockInfo;
}

/**
 * The refusal of a locked state: 423 with the holder's LockInfo in the body beside the error, which is what
 * Terraform's http backend reads to say who holds the lock.
 */
function lockedError(state: StateRow) {
  const info = holderInfo(state);
  const who = info.Who || (state.locked_by_task_id ? `task ${state.locked_by_task_id}` : 'another client');
  return new AppError(423, coded('state_locked', { name: state.name, who, id: info.ID }), undefined, {
    ...info,
  });
}

/** The state Terraform reads: its current version's bytes, or null when none was written yet. */
export async function readState(deps: StateDeps, projectId: number, name: string) {
  const state = await findState(deps.db, projectId, name);
  if (!state?.current_version_id) return null;
  const version = await findVersion(deps.db, state.id, state.current_version_id);
  if (!version) return null;
  const bytes = openState(deps.box, version.secret);
  return { bytes, md5: createHash('md5').update(bytes).digest('base64') };
}

/**
 * Stores a state Terraform POSTed as the new current version. A locked state takes a write only with its lock's
 * ID (`?ID=`); a write naming a lock the state no longer has is refused too (the lock was forced open meanwhile,
 * and another run may have written since).
 */
export async function writeState(
  deps: StateDeps,
  projectId: number,
  name: string,
  lockId: string | undefined,
  body: Buffer,
  actor: StateActor,
) {
  const doc = parseStateDocument(body);
  const sealed = sealState(deps.box, doc.bytes);
  // Made first, outside the write's transaction: two first writes at once must not fail one transaction on the
  // unique name.
  const made = await findOrCreateState(deps.db, deps.dialect, projectId, name);
  const refusal = (state: StateRow) =>
    state.lock_id === null && lockId
      ? new AppError(409, coded('state_lock_lost', { id: lockId.slice(0, 200) }))
      : lockedError(state);
  await transaction(deps.db, async (trx) => {
    const state = (await findState(trx, projectId, name)) ?? made;
    if (state.lock_id !== (lockId ?? null)) throw refusal(state);
    const added = await addVersion(
      trx,
      deps.dialect,
      {
        stateId: state.id,
        projectId,
        serial: doc.serial,
        lineage: doc.lineage,
        size: doc.bytes.length,
        sealed,
        actor,
        source: 'write',
        lockId: lockId ?? null,
      },
      deps.config.terraformStateVersions,
    );
    if (added === null) throw refusal((await findState(trx, projectId, name)) ?? state);
  });
}

/** Terraform's LockInfo from a LOCK/UNLOCK body (JSON with at least an ID). */
function lockInfoOf(body: Buffer | undefined): LockInfo {
  let parsed: unknown;
  try {
    parsed = JSON.parse((body ?? Buffer.alloc(0)).toString('utf8'));
  } catch {
    throw badRequest(coded('state_lock_info_invalid'));
  }
  const result = lockInfoInput.safeParse(parsed);
  if (!result.success) throw badRequest(coded('state_lock_info_invalid'));
  return result.data;
}

/** LOCK: takes the state's lock for Terraform (the state is made when it has never been written). */
export async function lockState(
  deps: StateDeps,
  projectId: number,
  name: string,
  body: Buffer | undefined,
  actor: StateActor,
) {
  const info = lockInfoOf(body);
  const state = await findOrCreateState(deps.db, deps.dialect, projectId, name);
  if (await takeLock(deps.db, state.id, { id: info.ID, info: JSON.stringify(info), actor })) return;
  const now = await findState(deps.db, projectId, name);
  // The same lock asked again (a retried request) is granted; any other holder is a conflict.
  if (now && now.lock_id === info.ID) return;
  if (!now || now.lock_id === null) {
    // Unlocked between the two reads: one more try.
    if (now && (await takeLock(deps.db, now.id, { id: info.ID, info: JSON.stringify(info), actor }))) return;
  }
  const holder = await findState(deps.db, projectId, name);
  if (!holder) throw notFound('terraform_state');
  throw lockedError(holder);
}

/**
 * UNLOCK: releases the lock whose ID the body (Terraform's LockInfo) or `?ID=` names. Another lock's ID is refused
 * with 423 and the holder's info; a state that is not locked is unlocked already.
 */
export async function unlockState(
  deps: StateDeps,
  projectId: number,
  name: string,
  body: Buffer | undefined,
  queryId: string | undefined,
) {
  const id = body?.length ? lockInfoOf(body).ID : queryId;
  if (!id) throw badRequest(coded('state_lock_info_invalid'));
  const state = await findState(deps.db, projectId, name);
  if (!state || state.lock_id === null) return;
  if (await releaseLock(deps.db, state.id, id)) return;
  const now = await findState(deps.db, projectId, name);
  if (now?.lock_id && now.lock_id !== id) throw lockedError(now);
}

async function requireState(deps: Pick<Deps, 'db'>, projectId: number, name: string) {
  const state = await findState(deps.db, projectId, name);
  if (!state) throw notFound('terraform_state');
  return state;
}

/** DELETE: removes a state and every version of it (managers; refused while it is locked). */
export async function deleteStateOf(deps: StateDeps, user: UserRow, projectId: number, name: string) {
  const state = await requireState(deps, projectId, name);
  if (state.lock_id !== null) throw lockedError(state);
  await transaction(deps.db, async (trx) => {
    await deleteState(trx, state.id);
    await recordProjectEvent(
      trx,
      user,
      projectId,
      'terraform_state',
      state.id,
      `Terraform state ${name} deleted`,
      {
        kind: 'terraform_state.deleted',
        params: { name },
      },
    );
  });
}

/** A manager's force-unlock (the lock of a run that died, say): audited with whom the lock was of. */
export async function forceUnlock(deps: StateDeps, user: UserRow, projectId: number, name: string) {
  const state = await requireState(deps, projectId, name);
  if (state.lock_id === null) return;
  const info = holderInfo(state);
  await transaction(deps.db, async (trx) => {
    if (!(await releaseLock(trx, state.id, state.lock_id))) return;
    const who = info.Who || (state.locked_by_task_id ? `task ${state.locked_by_task_id}` : '');
    await recordProjectEvent(
      trx,
      user,
      projectId,
      'terraform_state',
      state.id,
      `Terraform state ${name} force-unlocked (lock ${info.ID}${who ? ` of ${who}` : ''})`,
      { kind: 'terraform_state.force_unlocked', params: { name, lock: info.ID, who } },
    );
  });
}

/**
 * Rolls a state back to one of its versions: that version's state becomes the newest version, with the next
 * serial (so Terraform takes it as newer than what it last wrote). Refused while the state is locked: a run is
 * using it.
 */
export async function rollbackState(
  deps: StateDeps,
  user: UserRow,
  projectId: number,
  name: string,
  versionId: number,
) {
  const state = await requireState(deps, projectId, name);
  const version = await findVersion(deps.db, state.id, versionId);
  if (!version) throw notFound('state_version');
  if (state.lock_id !== null) throw lockedError(state);
  if (state.current_version_id === version.id)
    throw badRequest(coded('state_rollback_current', { id: version.id }));
  const current = state.current_version_id
    ? await findVersion(deps.db, state.id, state.current_version_id)
    : null;
  const serial = Math.max(current?.serial ?? 0, version.serial) + 1;
  const bytes = withSerial(openState(deps.box, version.secret), serial);
  const sealed = sealState(deps.box, bytes);
  await transaction(deps.db, async (trx) => {
    const now = await findState(trx, projectId, name);
    if (!now) throw notFound('terraform_state');
    if (now.lock_id !== null) throw lockedError(now);
    const added = await addVersion(
      trx,
      deps.dialect,
      {
        stateId: state.id,
        projectId,
        serial,
        lineage: version.lineage,
        size: bytes.length,
        sealed,
        actor: { userId: user.id, taskId: null },
        source: 'rollback',
        rolledBackFrom: version.id,
        lockId: null,
      },
      deps.config.terraformStateVersions,
    );
    if (added === null) throw lockedError((await findState(trx, projectId, name)) ?? now);
    await recordProjectEvent(
      trx,
      user,
      projectId,
      'terraform_state',
      state.id,
      `Terraform state ${name} rolled back to version ${version.id} (serial ${version.serial})`,
      { kind: 'terraform_state.rolled_back', params: { name, version: version.id, serial: version.serial } },
    );
  });
}

function lockView(row: {
  lock_id: string | null;
  lock_info: string | null;
  locked_at: string | null;
  locked_by_user_id: number | null;
  locked_by_task_id: number | null;
  locked_by_user_name?: string | null;
}): StateLock | null {
  if (row.lock_id === null) return null;
  const info = parseJsonObject(row.lock_info);
  const text = (key: string) => (typeof info[key] === 'string' ? (info[key] as string) : '');
  return {
    id: row.lock_id,
    operation: text('Operation'),
    who: text('Who'),
    info: text('Info'),
    version: text('Version'),
    created: text('Created'),
    locked_at: row.locked_at ?? '',
    user_id: row.locked_by_user_id,
    user_name: row.locked_by_user_name ?? null,
    task_id: row.locked_by_task_id,
  };
}

export async function listStateSummaries(deps: Pick<Deps, 'db'>, projectId: number): Promise<StateSummary[]> {
  return (await listStates(deps.db, projectId)).map((s) => ({
    name: s.name,
    size: s.size ?? 0,
    serial: s.serial ?? null,
    lineage: s.lineage ?? null,
    updated: s.updated ?? null,
    user_id: s.user_id ?? null,
    user_name: s.user_name ?? null,
    task_id: s.task_id ?? null,
    versions: s.versions,
    lock: lockView(s),
  }));
}

export async function stateDetail(
  deps: Pick<Deps, 'db'>,
  projectId: number,
  name: string,
): Promise<StateDetail> {
  const summary = (await listStateSummaries(deps, projectId)).find((s) => s.name === name);
  const state = await findState(deps.db, projectId, name);
  if (!summary || !state) throw notFound('terraform_state');
  const versions: StateVersion[] = (await listVersions(deps.db, state.id)).map((v) => ({
    id: v.id,
    serial: v.serial,
    lineage: v.lineage,
    size: v.size,
    created: v.created,
    user_id: v.user_id,
    user_name: v.user_name ?? null,
    task_id: v.task_id,
    source: v.source === 'rollback' ? 'rollback' : 'write',
    rolled_back_from: v.rolled_back_from,
    current: v.id === state.current_version_id,
  }));
  return { state: summary, versions };
}

export async function diffVersions(
  deps: StateDeps,
  projectId: number,
  name: string,
  fromId: number,
  toId: number,
): Promise<StateDiff> {
  const state = await requireState(deps, projectId, name);
  if (fromId === toId) throw badRequest(coded('state_diff_same'));
  const [from, to] = await Promise.all([
    findVersion(deps.db, state.id, fromId),
    findVersion(deps.db, state.id, toId),
  ]);
  if (!from || !to) throw notFound('state_version');
  const read = (sealed: string) => JSON.parse(openState(deps.box, sealed).toString('utf8')) as unknown;
  return diffStates(
    { id: from.id, serial: from.serial, state: read(from.secret) },
    { id: to.id, serial: to.serial, state: read(to.secret) },
  );
}

/**
 * Writes a backup's states into a restored project (`trx`, the restore's transaction): each must open under this
 * server's secret key (it is re-sealed under the current one) and be a Terraform state; `refuse(index)` says which
 * one does not.
 */
export async function importStates(
  trx: Db,
  deps: Pick<Deps, 'dialect' | 'box' | 'config'>,
  projectId: number,
  userId: number,
  states: { name: string; sealed: string }[],
  refuse: (index: number, reason: 'key' | 'state') => Error,
) {
  for (const [i, s] of states.entries()) {
    let bytes: Buffer;
    try {
      bytes = openState(deps.box, s.sealed);
    } catch {
      throw refuse(i, 'key');
    }
    let doc: ReturnType<typeof parseStateDocument>;
    try {
      doc = parseStateDocument(bytes);
    } catch {
      throw refuse(i, 'state');
    }
    const state = await findOrCreateState(trx, deps.dialect, projectId, s.name);
    await addVersion(
      trx,
      deps.dialect,
      {
        stateId: state.id,
        projectId,
        serial: doc.serial,
        lineage: doc.lineage,
        size: bytes.length,
        sealed: sealState(deps.box, bytes),
        actor: { userId, taskId: null },
        source: 'write',
        lockId: null,
      },
      deps.config.terraformStateVersions,
    );
  }
}
