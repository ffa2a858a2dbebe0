import {
  type AccessKey,
  type Coded,
  coded,
  type KeyInput,
  type KeySourceType,
  type KeyType,
  keySecretProblem,
  keySourceTypes,
} from '@signalbox/contracts';
import type { UserRow } from '../../access/principals.store';
import { assertUnused, findRefs } from '../../access/refs.store';
import { recordNamedEvent } from '../../audit/audit.store';
import type { Db } from '../../db';
import { transaction } from '../../db/transaction';
import type { Deps } from '../../deps';
import { assertBodyIds } from '../../http/body-ids';
import type { SecretBox } from '../../lib/crypto';
import { fieldError, forbidden, notFound } from '../../lib/errors';
import { checkKeySource, keySecretOf, openStoredSecret } from '../../lib/key-sources';
import { assertNameFree } from '../../lib/unique-names';
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

/** Why a project member who is not an administrator cannot save a key reading its secret from the server. */
export const KEY_SOURCE_ADMIN_ONLY = coded('key_source_admin_only');

const loginOf = (box: SecretBox, row: KeyRow) => {
  const login = openStoredSecret(box, row.secret).login;
  return typeof login === 'string' ? login : '';
};

/**
 * The secret JSON a key of its type stores; null for type none. A key reading its secret from the server stores
 * only its login (and an ssh key's passphrase): the password or private key comes from the source.
 */
function sealSecret(box: SecretBox, input: KeyInput): string | null {
  const sourced = !!input.source_storage_type;
  if (input.type === 'login_password') {
    const { login = '', password = '' } = input.login_password ?? {};
    return box.seal(JSON.stringify(sourced ? { login } : { login, password }));
  }
  if (input.type === 'ssh') {
    const { login = '', passphrase = '', private_key = '' } = input.ssh ?? {};
    return box.seal(JSON.stringify(sourced ? { login, passphrase } : { login, passphrase, private_key }));
  }
  return null;
}

const sourceTypeOf = (row: KeyRow): KeySourceType | null =>
  keySourceTypes.find((t) => t === row.source_storage_type) ?? null;

/**
 * Whether a key has the secret its type needs (a password, a private key): read from the server, or stored and
 * not empty. A key restored from a backup (which carries no secrets) has none until one is entered.
 */
function hasSecret(box: SecretBox, row: KeyRow) {
  if (row.type !== 'login_password' && row.type !== 'ssh') return false;
  if (sourceTypeOf(row)) return true;
  const stored = openStoredSecret(box, row.secret);
  const secret = row.type === 'ssh' ? stored.private_key : stored.password;
  return typeof secret === 'string' && secret.trim() !== '';
}

export function toAccessKey(box: SecretBox, row: KeyRow): AccessKey {
  const key: AccessKey = {
    id: row.id,
    name: row.name,
    type: row.type as KeyType,
    project_id: row.project_id,
    has_secret: hasSecret(box, row),
  };
  if (row.type === 'login_password') key.login_password = { login: loginOf(box, row) };
  if (row.type === 'ssh') key.ssh = { login: loginOf(box, row) };
  const source = sourceTypeOf(row);
  if (source) {
    key.source_storage_type = source;
    key.source_storage_key = row.source_storage_key ?? '';
  }
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
  if (!row) throw notFound('key');
  return row;
}

export async function getKey(deps: Pick<Deps, 'db' | 'box'>, projectId: number, id: number) {
  return toAccessKey(deps.box, await requireKey(deps.db, projectId, id));
}

export async function keyRefs(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  await requireKey(deps.db, projectId, id);
  return findRefs(deps.db, projectId, 'key', id);
}

/**
 * The source columns a key's input sets, checked: only an administrator may name one, and only a variable or
 * file the server allows (see key-sources.ts).
 */
async function sourceColumns(deps: Pick<Deps, 'config'>, user: UserRow, input: KeyInput) {
  const type = input.source_storage_type;
  if (!type) return { source_storage_type: null, source_storage_key: null };
  if (!user.admin) throw forbidden(KEY_SOURCE_ADMIN_ONLY);
  if (input.type === 'none') throw fieldError('source_storage_type', coded('key_none_has_no_secret'));
  return {
    source_storage_type: type,
    source_storage_key: await checkKeySource(deps.config, type, input.source_storage_key),
  };
}

export async function createKey(
  deps: Pick<Deps, 'db' | 'dialect' | 'box' | 'config'>,
  user: UserRow,
  projectId: number,
  input: KeyInput,
) {
  assertBodyIds(input, projectId);
  await assertNameFree(deps.db, 'key', projectId, input.name);
  const source = await sourceColumns(deps, user, input);
  const secret = sealSecret(deps.box, input);
  const id = await transaction(deps.db, async (trx) => {
    const id = await insertKeyRow(trx, deps.dialect, {
      project_id: projectId,
      name: input.name,
      type: input.type,
      secret,
      ...source,
    });
    await recordNamedEvent(trx, user, projectId, {
      type: 'key',
      label: 'Access key',
      id,
      name: input.name,
      action: 'created',
    });
    return id;
  });
  return getKey(deps, projectId, id);
}

/**
 * Updates name and type; the stored secret changes only with `override_secret`. A new type cannot keep the old
 * secret, so changing the type replaces the secret too (and needs the new type's secret); so does moving the
 * secret to or from the server (a stored password does not stay behind a key that now reads it elsewhere). A
 * key reading its secret from the server can be changed by administrators only.
 */
export async function updateKey(
  deps: Pick<Deps, 'db' | 'box' | 'config'>,
  user: UserRow,
  projectId: number,
  id: number,
  input: KeyInput,
) {
  assertBodyIds(input, projectId, id);
  const row = await requireKey(deps.db, projectId, id);
  if (row.source_storage_type && !user.admin) throw forbidden(KEY_SOURCE_ADMIN_ONLY);
  await assertNameFree(deps.db, 'key', projectId, input.name, id);
  const source = await sourceColumns(deps, user, input);
  const replaceSecret =
    input.override_secret ||
    row.type !== input.type ||
    (row.source_storage_type ?? null) !== source.source_storage_type;
  if (replaceSecret) {
    const problem = keySecretProblem(input);
    if (problem) throw fieldError(problem.field, { code: problem.code } as Coded);
  }
  await transaction(deps.db, async (trx) => {
    await updateKeyRow(trx, projectId, id, {
      name: input.name,
      type: input.type,
      ...source,
      ...(replaceSecret ? { secret: sealSecret(deps.box, input) } : {}),
    });
    await recordNamedEvent(trx, user, projectId, {
      type: 'key',
      label: 'Access key',
      id,
      name: input.name,
      action: 'updated',
    });
  });
}

export async function deleteKey(deps: Pick<Deps, 'db'>, user: UserRow, projectId: number, id: number) {
  const row = await requireKey(deps.db, projectId, id);
  await assertUnused(deps.db, projectId, 'key', id);
  await transaction(deps.db, async (trx) => {
    await deleteKeyRow(trx, projectId, id);
    await recordNamedEvent(trx, user, projectId, {
      type: 'key',
      label: 'Access key',
      id,
      name: row.name,
      action: 'deleted',
    });
  });
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
    source_storage_type: null,
    source_storage_key: null,
  });
  return { id, created: true };
}

/**
 * A key-store key with its secret decrypted (or read from the server), for the task engine (repository checkout,
 * inventory login, vault passwords) and integrations. Throws 404 when the key is not in the project, and
 * KeySourceError when its source cannot be read.
 */
export async function getDecryptedKey(
  deps: Pick<Deps, 'db' | 'box' | 'config'>,
  projectId: number,
  keyId: number,
): Promise<DecryptedKey> {
  const row = await requireKey(deps.db, projectId, keyId);
  const secret = await keySecretOf(deps, row);
  return { id: row.id, name: row.name, type: row.type as KeyType, ...secret };
}
