import {
  coded,
  type Inventory,
  type InventoryInput,
  type InventoryType,
  isWorkspaceInventory,
} from '@signalbox/contracts';
import type { UserRow } from '../../access/principals.store';
import { assertInProject, assertUnused, findRefs } from '../../access/refs.store';
import { namedKind, recordNamedEvent, recordProjectEvent } from '../../audit/audit.store';
import type { Db } from '../../db';
import { transaction } from '../../db/transaction';
import type { Deps } from '../../deps';
import { assertBodyIds } from '../../http/body-ids';
import { fieldError, notFound } from '../../lib/errors';
import { assertNameFree } from '../../lib/unique-names';
import { ensureNoneKey } from '../keys';
import {
  deleteInventoryRow,
  findInventoryRow,
  type InventoryRow,
  type InventoryValues,
  insertInventoryRow,
  listInventoryRows,
  updateInventoryRow,
} from './inventory.store';

export function toInventory(row: InventoryRow): Inventory {
  return {
    id: row.id,
    name: row.name,
    project_id: row.project_id,
    type: row.type as InventoryType,
    inventory: row.inventory,
    ssh_key_id: row.ssh_key_id,
    become_key_id: row.become_key_id,
    repository_id: row.repository_id,
    runner_tag: row.runner_tag ?? null,
  };
}

export async function listInventories(
  deps: Pick<Deps, 'db'>,
  projectId: number,
  sort: 'name' | 'type',
  order: 'asc' | 'desc',
) {
  return (await listInventoryRows(deps.db, projectId, sort, order)).map(toInventory);
}

async function requireInventory(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  const row = await findInventoryRow(deps.db, projectId, id);
  if (!row) throw notFound('inventory');
  return row;
}

export async function getInventory(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  return toInventory(await requireInventory(deps, projectId, id));
}

export async function inventoryRefs(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  await requireInventory(deps, projectId, id);
  return findRefs(deps.db, projectId, 'inventory', id);
}

async function assertYaml(text: string) {
  const invalid = fieldError('inventory', coded('inventory_not_yaml'));
  // Loaded on first use: an idle server holds no YAML parser.
  const { parseAllDocuments } = await import('yaml');
  try {
    const docs = parseAllDocuments(text);
    const list = Array.isArray(docs) ? docs : [docs];
    if (list.some((doc) => doc.errors.length > 0)) throw invalid;
  } catch {
    throw invalid;
  }
}

/** Checks content and references; everything is checked before anything is written. */
async function checkInput(deps: Pick<Deps, 'db'>, projectId: number, input: InventoryInput) {
  if (input.type === 'static-yaml') await assertYaml(input.inventory);
  const workspace = isWorkspaceInventory(input.type);
  if (!workspace)
    await assertInProject(deps.db, 'access_key', input.ssh_key_id, projectId, 'key', 'ssh_key_id');
  await assertInProject(deps.db, 'access_key', input.become_key_id, projectId, 'key', 'become_key_id');
  await assertInProject(deps.db, 'repository', input.repository_id, projectId, 'repository', 'repository_id');
}

/**
 * Writes the inventory; a workspace inventory runs with the project's None key, created here when the project
 * has none. The write, the key creation and their events share one transaction.
 */
async function save(
  deps: Pick<Deps, 'db' | 'dialect'>,
  user: UserRow,
  projectId: number,
  input: InventoryInput,
  id?: number,
) {
  await assertNameFree(deps.db, 'inventory', projectId, input.name, id);
  const verb = id === undefined ? 'created' : 'updated';
  return transaction(deps.db, async (trx) => {
    let sshKeyId = input.ssh_key_id;
    let noneKey: { id: number; created: boolean } | null = null;
    if (isWorkspaceInventory(input.type)) {
      noneKey = await ensureNoneKey(trx, deps, projectId);
      sshKeyId = noneKey.id;
    }
    const values: InventoryValues = {
      name: input.name,
      type: input.type,
      inventory: input.inventory,
      ssh_key_id: sshKeyId,
      become_key_id: input.become_key_id,
      repository_id: input.repository_id,
      runner_tag: input.runner_tag,
    };
    if (id === undefined) id = await insertInventoryRow(trx, deps.dialect, projectId, values);
    else await updateInventoryRow(trx, projectId, id, values);
    const saved = { id, name: input.name, createdNoneKey: noneKey?.created ? noneKey.id : null };
    await recordSave(trx, user, projectId, saved, verb);
    return id;
  });
}

async function recordNoneKey(db: Db, user: UserRow, projectId: number, keyId: number | null) {
  if (keyId === null) return;
  await recordProjectEvent(db, user, projectId, 'key', keyId, 'Access key None created');
}

/** The audit events of a saved inventory: the None key it created (if any), then the inventory itself. */
async function recordSave(
  db: Db,
  user: UserRow,
  projectId: number,
  saved: { id: number; name: string; createdNoneKey: number | null },
  verb: 'created' | 'updated',
) {
  await recordNoneKey(db, user, projectId, saved.createdNoneKey);
  await recordProjectEvent(
    db,
    user,
    projectId,
    'inventory',
    saved.id,
    `Inventory ${saved.name} ${verb}`,
    namedKind('inventory', verb, saved.name),
  );
}

export async function createInventory(
  deps: Pick<Deps, 'db' | 'dialect'>,
  user: UserRow,
  projectId: number,
  input: InventoryInput,
) {
  assertBodyIds(input, projectId);
  await checkInput(deps, projectId, input);
  const id = await save(deps, user, projectId, input);
  return getInventory(deps, projectId, id);
}

export async function updateInventory(
  deps: Pick<Deps, 'db' | 'dialect'>,
  user: UserRow,
  projectId: number,
  id: number,
  input: InventoryInput,
) {
  assertBodyIds(input, projectId, id);
  await requireInventory(deps, projectId, id);
  await checkInput(deps, projectId, input);
  await save(deps, user, projectId, input, id);
}

export async function deleteInventory(deps: Pick<Deps, 'db'>, user: UserRow, projectId: number, id: number) {
  const row = await requireInventory(deps, projectId, id);
  await assertUnused(deps.db, projectId, 'inventory', id);
  await transaction(deps.db, async (trx) => {
    await deleteInventoryRow(trx, projectId, id);
    await recordNamedEvent(trx, user, projectId, {
      type: 'inventory',
      label: 'Inventory',
      id,
      name: row.name,
      action: 'deleted',
    });
  });
}
