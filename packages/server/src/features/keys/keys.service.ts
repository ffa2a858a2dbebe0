import { type AccessKey, type KeyInput, type KeyType, keySecretProblem } from '@signalbox/contracts';
import { recordProjectEvent } from '../../audit/audit.store';
import type { Db } from '../../db';
import type { Deps } from '../../deps';
import type { SecretBox } from '../../lib/crypto';
import { badRequest, notFound } from '../../lib/errors';
import { assertBodyIds } from '../refs/body-ids';
import { assertUnused, findRefs } from '../refs/refs.store';
import type { UserRow } from '../users/users.store';
import {
  deleteKeyRow,
  findKeyRow,
  findNoneKeyRow,
  insertKeyRow,
  type KeyRow,
  listKeyRows,
  updateKeyRow,
} from './keys.store';

/** The decrypted secret of a key: for the task engine only, never for a response or a log line. */
export type DecryptedKey = {
  id: number;
  name: string;
  type: KeyType;
  login: string;
  password: string;
  passphrase: string;
  private_key: string;
};

type StoredSecret = { login?: string; password?: string; passphrase?: string; private_key?: string };

function openSecret(box: SecretBox, row: KeyRow): StoredSecret {
  if (!row.secret) return {};
  try {
    const value = JSON.parse(box.open(row.secret)) as unknown;
    return value && typeof value === 'object' ? (value as StoredSecret) : {};
  } catch {
    // A secret sealed under another key (or damaged) reads as empty; the text itself is never logged.
    return {};
  }
}

/** The secret JSON a key of its type stores; null for type none. */
function sealSecret(box: SecretBox, input: KeyInput): string | null {
  if (input.type === 'login_password') {
    const { login = '', password = '' } = input.login_password ?? {};
    return box.seal(JSON.stringify({ login, password }));
  }
  if (input.type === 'ssh') {
    const { login = '', passphrase = '', private_key = '' } = input.ssh ?? {};
    return box.seal(JSON.stringify({ login, passphrase, private_key }));
  }
  return null;
}

export function toAccessKey(box: SecretBox, row: KeyRow): AccessKey {
  const key: AccessKey = {
    id: row.id,
    name: row.name,
    type: row.type as KeyType,
    project_id: row.project_id,
  };
  if (row.type === 'login_password') key.login_password = { login: openSecret(box, row).login ?? '' };
  if (row.type === 'ssh') key.ssh = { login: openSecret(box, row).login ?? '' };
  return key;
}

export async function listKeys(
  deps: Pick<Deps, 'db' | 'box'>,
  projectId: number,
  sort: 'name' | 'type',
  order: 'asc' | 'desc',
) {
  return (await listKeyRows(deps.db, projectId, sort, order)).map((row) => toAccessKey(deps.box, row));
}

async function requireKey(db: Db, projectId: number, id: number) {
  const row = await findKeyRow(db, projectId, id);
  if (!row) throw notFound('Access key');
  return row;
}

export async function getKey(deps: Pick<Deps, 'db' | 'box'>, projectId: number, id: number) {
  return toAccessKey(deps.box, await requireKey(deps.db, projectId, id));
}

export async function keyRefs(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  await requireKey(deps.db, projectId, id);
  return findRefs(deps.db, projectId, 'key', id);
}

export async function createKey(
  deps: Pick<Deps, 'db' | 'dialect' | 'box'>,
  user: UserRow,
  projectId: number,
  input: KeyInput,
) {
  assertBodyIds(input, projectId);
  const id = await insertKeyRow(deps.db, deps.dialect, {
    project_id: projectId,
    name: input.name,
    type: input.type,
    secret: sealSecret(deps.box, input),
  });
  await recordProjectEvent(deps.db, user, projectId, 'key', id, `Access key ${input.name} created`);
  return getKey(deps, projectId, id);
}

/**
 * Updates name and type; the stored secret changes only with `override_secret`. A new type cannot keep the old
 * secret, so changing the type replaces the secret too (and needs the new type's secret).
 */
export async function updateKey(
  deps: Pick<Deps, 'db' | 'box'>,
  user: UserRow,
  projectId: number,
  id: number,
  input: KeyInput,
) {
  assertBodyIds(input, projectId, id);
  const row = await requireKey(deps.db, projectId, id);
  const replaceSecret = input.override_secret || row.type !== input.type;
  if (replaceSecret) {
    const problem = keySecretProblem(input);
    if (problem) throw badRequest(problem.message, { [problem.field]: problem.message });
  }
  await updateKeyRow(deps.db, projectId, id, {
    name: input.name,
    type: input.type,
    ...(replaceSecret ? { secret: sealSecret(deps.box, input) } : {}),
  });
  await recordProjectEvent(deps.db, user, projectId, 'key', id, `Access key ${input.name} updated`);
}

export async function deleteKey(deps: Pick<Deps, 'db'>, user: UserRow, projectId: number, id: number) {
  const row = await requireKey(deps.db, projectId, id);
  await assertUnused(deps.db, projectId, 'key', id);
  await deleteKeyRow(deps.db, projectId, id);
  await recordProjectEvent(deps.db, user, projectId, 'key', id, `Access key ${row.name} deleted`);
}

/**
 * The project's key of type none named 'None', created when the project has none (workspace inventories run
 * with it). Runs inside the caller's transaction when given one; the caller records events after commit.
 */
export async function ensureNoneKey(
  db: Db,
  deps: Pick<Deps, 'dialect'>,
  projectId: number,
): Promise<{ id: number; created: boolean }> {
  const existing = await findNoneKeyRow(db, projectId);
  if (existing) return { id: existing.id, created: false };
  const id = await insertKeyRow(db, deps.dialect, {
    project_id: projectId,
    name: 'None',
    type: 'none',
    secret: null,
  });
  return { id, created: true };
}

/**
 * A key-store key with its secret decrypted, for the task engine (repository checkout, inventory login, vault
 * passwords) and integrations. Throws 404 when the key is not in the project.
 */
export async function getDecryptedKey(
  deps: Pick<Deps, 'db' | 'box'>,
  projectId: number,
  keyId: number,
): Promise<DecryptedKey> {
  const row = await requireKey(deps.db, projectId, keyId);
  const secret = openSecret(deps.box, row);
  return {
    id: row.id,
    name: row.name,
    type: row.type as KeyType,
    login: secret.login ?? '',
    password: secret.password ?? '',
    passphrase: secret.passphrase ?? '',
    private_key: secret.private_key ?? '',
  };
}
