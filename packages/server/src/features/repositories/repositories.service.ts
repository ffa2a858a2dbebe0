import type { Repository, RepositoryInput } from '@signalbox/contracts';
import type { UserRow } from '../../access/principals.store';
import { assertInProject, assertUnused, findRefs } from '../../access/refs.store';
import { recordNamedEvent } from '../../audit/audit.store';
import { transaction } from '../../db/transaction';
import type { Deps } from '../../deps';
import { assertBodyIds } from '../../http/body-ids';
import { notFound } from '../../lib/errors';
import { assertNameFree } from '../../lib/unique-names';
import { forgetRepositoryFiles } from '../../tasks/run/repository-caches';
import {
  deleteRepositoryRow,
  findRepositoryRow,
  insertRepositoryRow,
  listRepositoryRows,
  type RepositoryRow,
  type RepositorySort,
  updateRepositoryRow,
} from './repositories.store';

export function toRepository(row: RepositoryRow): Repository {
  return {
    id: row.id,
    name: row.name,
    project_id: row.project_id,
    git_url: row.git_url,
    git_branch: row.git_branch,
    ssh_key_id: row.ssh_key_id,
  };
}

export async function listRepositories(
  deps: Pick<Deps, 'db'>,
  projectId: number,
  sort: RepositorySort,
  order: 'asc' | 'desc',
) {
  return (await listRepositoryRows(deps.db, projectId, sort, order)).map(toRepository);
}

async function requireRepository(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  const row = await findRepositoryRow(deps.db, projectId, id);
  if (!row) throw notFound('repository');
  return row;
}

export async function getRepository(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  return toRepository(await requireRepository(deps, projectId, id));
}

export async function repositoryRefs(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  await requireRepository(deps, projectId, id);
  return findRefs(deps.db, projectId, 'repository', id);
}

const values = (input: RepositoryInput) => ({
  name: input.name,
  git_url: input.git_url,
  git_branch: input.git_branch,
  ssh_key_id: input.ssh_key_id,
});

export async function createRepository(
  deps: Pick<Deps, 'db' | 'dialect'>,
  user: UserRow,
  projectId: number,
  input: RepositoryInput,
) {
  assertBodyIds(input, projectId);
  await assertInProject(deps.db, 'access_key', input.ssh_key_id, projectId, 'key', 'ssh_key_id');
  await assertNameFree(deps.db, 'repository', projectId, input.name);
  const id = await transaction(deps.db, async (trx) => {
    const id = await insertRepositoryRow(trx, deps.dialect, projectId, values(input));
    await recordNamedEvent(trx, user, projectId, {
      type: 'repository',
      label: 'Repository',
      id,
      name: input.name,
      action: 'created',
    });
    return id;
  });
  return getRepository(deps, projectId, id);
}

export async function updateRepository(
  deps: Pick<Deps, 'db'>,
  user: UserRow,
  projectId: number,
  id: number,
  input: RepositoryInput,
) {
  assertBodyIds(input, projectId, id);
  await requireRepository(deps, projectId, id);
  await assertInProject(deps.db, 'access_key', input.ssh_key_id, projectId, 'key', 'ssh_key_id');
  await assertNameFree(deps.db, 'repository', projectId, input.name, id);
  await transaction(deps.db, async (trx) => {
    await updateRepositoryRow(trx, projectId, id, values(input));
    await recordNamedEvent(trx, user, projectId, {
      type: 'repository',
      label: 'Repository',
      id,
      name: input.name,
      action: 'updated',
    });
  });
}

export async function deleteRepository(
  deps: Pick<Deps, 'db' | 'config' | 'log'>,
  user: UserRow,
  projectId: number,
  id: number,
) {
  const row = await requireRepository(deps, projectId, id);
  await assertUnused(deps.db, projectId, 'repository', id);
  await transaction(deps.db, async (trx) => {
    await deleteRepositoryRow(trx, projectId, id);
    await recordNamedEvent(trx, user, projectId, {
      type: 'repository',
      label: 'Repository',
      id,
      name: row.name,
      action: 'deleted',
    });
  });
  // Its cache and kept working copies once the row is gone for good (a failed delete keeps them).
  await forgetRepositoryFiles(deps);
}
