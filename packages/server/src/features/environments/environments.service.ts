import type {
  Environment,
  EnvironmentInput,
  EnvironmentSecret,
  EnvironmentSecretInput,
  EnvironmentSecretType,
} from '@signalbox/contracts';
import { coded } from '@signalbox/contracts';
import type { UserRow } from '../../access/principals.store';
import { assertUnused, findRefs } from '../../access/refs.store';
import { recordNamedEvent } from '../../audit/audit.store';
import type { Db } from '../../db';
import { transaction } from '../../db/transaction';
import type { Deps } from '../../deps';
import { assertBodyIds } from '../../http/body-ids';
import { badRequest, found, notFound } from '../../lib/errors';
import { assertNameFree } from '../../lib/unique-names';
import {
  deleteEnvironmentRows,
  deleteSecretRow,
  type EnvironmentRow,
  findEnvironmentRow,
  insertEnvironmentRow,
  insertSecretRow,
  listEnvironmentRows,
  listSecretRows,
  listSecretRowsOfEnvironment,
  type SecretRow,
  updateEnvironmentRow,
  updateSecretRow,
} from './environments.store';

const ownerOf = (type: EnvironmentSecretType) => (type === 'var' ? 'variable' : 'environment');
const typeOf = (owner: string): EnvironmentSecretType => (owner === 'variable' ? 'var' : 'env');

const toSecret = (row: SecretRow): EnvironmentSecret => ({
  id: row.id,
  name: row.name,
  type: typeOf(row.owner),
});

export function toEnvironment(row: EnvironmentRow, secrets: SecretRow[]): Environment {
  return {
    id: row.id,
    name: row.name,
    project_id: row.project_id,
    json: row.json,
    env: row.env,
    secrets: secrets.filter((s) => s.environment_id === row.id).map(toSecret),
  };
}

export async function listEnvironments(deps: Pick<Deps, 'db'>, projectId: number, order: 'asc' | 'desc') {
  const rows = await listEnvironmentRows(deps.db, projectId, order);
  const secrets = await listSecretRows(deps.db, projectId);
  return rows.map((row) => toEnvironment(row, secrets));
}

async function requireEnvironment(db: Db, projectId: number, id: number) {
  const row = await findEnvironmentRow(db, projectId, id);
  if (!row) throw notFound('environment');
  return row;
}

export async function getEnvironment(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  const row = await requireEnvironment(deps.db, projectId, id);
  return toEnvironment(row, await listSecretRows(deps.db, projectId, [id]));
}

export async function environmentRefs(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  await requireEnvironment(deps.db, projectId, id);
  return findRefs(deps.db, projectId, 'environment', id);
}

/** Update and delete operations must name secrets of this very environment; checked before anything is written. */
function assertOwnSecrets(ops: EnvironmentSecretInput[], existing: SecretRow[]) {
  const own = new Set(existing.map((s) => s.id));
  for (const op of ops) {
    if (op.operation !== 'create' && (op.id == null || !own.has(op.id)))
      throw badRequest(coded('secret_not_in_environment', { id: String(op.id) }), {
        secrets: coded('secret_unknown'),
      });
  }
}

async function applySecrets(
  trx: Db,
  deps: Pick<Deps, 'dialect' | 'box'>,
  projectId: number,
  environmentId: number,
  ops: EnvironmentSecretInput[],
) {
  for (const op of ops) {
    if (op.operation === 'create') {
      await insertSecretRow(trx, deps.dialect, {
        project_id: projectId,
        environment_id: environmentId,
        name: op.name,
        owner: ownerOf(op.type),
        secret: deps.box.seal(op.secret),
      });
    } else if (op.operation === 'update') {
      // An empty value keeps the stored one: the form never sees the value it would have to send back.
      await updateSecretRow(trx, environmentId, found(op.id, 'secret'), {
        name: op.name,
        owner: ownerOf(op.type),
        ...(op.secret !== '' ? { secret: deps.box.seal(op.secret) } : {}),
      });
    } else {
      await deleteSecretRow(trx, environmentId, found(op.id, 'secret'));
    }
  }
  // Two secrets of one name and kind would both reach the task, and which one wins is nobody's choice.
  const seen = new Set<string>();
  for (const secret of await listSecretRowsOfEnvironment(trx, environmentId)) {
    const key = `${secret.owner}\n${secret.name}`;
    if (seen.has(key))
      throw badRequest(coded('secret_name_repeated', { name: secret.name, type: typeOf(secret.owner) }), {
        secrets: coded('secret_names_unique'),
      });
    seen.add(key);
  }
}

const values = (input: EnvironmentInput) => ({ name: input.name, json: input.json, env: input.env });

export async function createEnvironment(
  deps: Pick<Deps, 'db' | 'dialect' | 'box'>,
  user: UserRow,
  projectId: number,
  input: EnvironmentInput,
) {
  assertBodyIds(input, projectId);
  assertOwnSecrets(input.secrets, []);
  await assertNameFree(deps.db, 'environment', projectId, input.name);
  const id = await transaction(deps.db, async (trx) => {
    const id = await insertEnvironmentRow(trx, deps.dialect, projectId, values(input));
    await applySecrets(trx, deps, projectId, id, input.secrets);
    await recordNamedEvent(trx, user, projectId, {
      type: 'environment',
      label: 'Environment',
      id,
      name: input.name,
      action: 'created',
    });
    return id;
  });
  return getEnvironment(deps, projectId, id);
}

export async function updateEnvironment(
  deps: Pick<Deps, 'db' | 'dialect' | 'box'>,
  user: UserRow,
  projectId: number,
  id: number,
  input: EnvironmentInput,
) {
  assertBodyIds(input, projectId, id);
  await requireEnvironment(deps.db, projectId, id);
  assertOwnSecrets(input.secrets, await listSecretRows(deps.db, projectId, [id]));
  await assertNameFree(deps.db, 'environment', projectId, input.name, id);
  await transaction(deps.db, async (trx) => {
    await updateEnvironmentRow(trx, projectId, id, values(input));
    await applySecrets(trx, deps, projectId, id, input.secrets);
    await recordNamedEvent(trx, user, projectId, {
      type: 'environment',
      label: 'Environment',
      id,
      name: input.name,
      action: 'updated',
    });
  });
}

export async function deleteEnvironment(
  deps: Pick<Deps, 'db'>,
  user: UserRow,
  projectId: number,
  id: number,
) {
  const row = await requireEnvironment(deps.db, projectId, id);
  await assertUnused(deps.db, projectId, 'environment', id);
  await transaction(deps.db, async (trx) => {
    await deleteEnvironmentRows(trx, projectId, id);
    await recordNamedEvent(trx, user, projectId, {
      type: 'environment',
      label: 'Environment',
      id,
      name: row.name,
      action: 'deleted',
    });
  });
}

export type EnvironmentSecretValue = { type: EnvironmentSecretType; name: string; value: string };

/**
 * The decrypted secrets of an environment, for the task engine only: `var` secrets join the extra variables,
 * `env` secrets the process environment. A secret that cannot be opened reads as empty.
 */
export async function getEnvironmentSecrets(
  deps: Pick<Deps, 'db' | 'box'>,
  environmentId: number,
): Promise<EnvironmentSecretValue[]> {
  const rows = await listSecretRowsOfEnvironment(deps.db, environmentId);
  return rows.map((row) => {
    let value = '';
    try {
      value = row.secret ? deps.box.open(row.secret) : '';
    } catch {
      value = '';
    }
    return { type: typeOf(row.owner), name: row.name, value };
  });
}
