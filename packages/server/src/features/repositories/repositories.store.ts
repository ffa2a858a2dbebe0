import { type Selectable, sql } from 'kysely';
import type { Db, Dialect } from '../../db';
import { deleteRows, findRow, updateRows } from '../../db/rows';
import type { RepositoryTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';

export type RepositoryRow = Selectable<RepositoryTable>;
export type RepositorySort = 'name' | 'git_url' | 'ssh_key';
type RepositoryValues = { name: string; git_url: string; git_branch: string; ssh_key_id: number | null };

export function listRepositoryRows(db: Db, projectId: number, sort: RepositorySort, order: 'asc' | 'desc') {
  const column =
    sort === 'ssh_key'
      ? sql.ref('access_key.name')
      : sql.ref(`repository.${sort === 'git_url' ? 'git_url' : 'name'}`);
  return db
    .selectFrom('repository')
    .leftJoin('access_key', 'access_key.id', 'repository.ssh_key_id')
    .selectAll('repository')
    .where('repository.project_id', '=', projectId)
    .orderBy(sql`lower(${column})`, order)
    .orderBy('repository.name', order)
    .orderBy('repository.id')
    .execute();
}

export function findRepositoryRow(db: Db, projectId: number, id: number) {
  return findRow(db, 'repository', { id, project_id: projectId });
}

export function insertRepositoryRow(db: Db, dialect: Dialect, projectId: number, values: RepositoryValues) {
  return insertReturningId(db, dialect, 'repository', { project_id: projectId, ...values });
}

export function updateRepositoryRow(db: Db, projectId: number, id: number, values: RepositoryValues) {
  return updateRows(db, 'repository', { id, project_id: projectId }, values);
}

export function deleteRepositoryRow(db: Db, projectId: number, id: number) {
  return deleteRows(db, 'repository', { id, project_id: projectId });
}
