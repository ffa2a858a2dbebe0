import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import { deleteRows, findRow } from '../../db/rows';
import type { IntegrationAliasTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';

export type AliasRow = Selectable<IntegrationAliasTable>;

/** Aliases: the path segments of /api/integrations/{alias}; integrationId null = the project-level aliases. */
export function listAliases(db: Db, projectId: number, integrationId: number | null) {
  let q = db.selectFrom('integration_alias').selectAll().where('project_id', '=', projectId);
  q =
    integrationId == null
      ? q.where('integration_id', 'is', null)
      : q.where('integration_id', '=', integrationId);
  return q.orderBy('id').execute();
}

export function findAliasById(db: Db, projectId: number, id: number) {
  return findRow(db, 'integration_alias', { id, project_id: projectId });
}

export async function findAliasByValue(db: Db, alias: string) {
  const row = await db
    .selectFrom('integration_alias')
    .selectAll()
    .where('alias', '=', alias)
    .executeTakeFirst();
  // MySQL compares case-insensitively and ignores trailing spaces; the alias must match exactly.
  return row && row.alias === alias ? row : undefined;
}

export function insertAlias(
  db: Db,
  dialect: Dialect,
  projectId: number,
  integrationId: number | null,
  alias: string,
) {
  return insertReturningId(db, dialect, 'integration_alias', {
    project_id: projectId,
    integration_id: integrationId,
    alias,
  });
}

export function deleteAlias(db: Db, projectId: number, id: number) {
  return deleteRows(db, 'integration_alias', { id, project_id: projectId });
}
