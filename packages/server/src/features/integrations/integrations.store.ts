import type { Integration, IntegrationAuthMethod, IntegrationInput } from '@signalbox/contracts';
import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import { deleteRows, findRow, updateRows } from '../../db/rows';
import type { IntegrationTable } from '../../db/tables';
import { fromBool, insertReturningId, toBool } from '../../db/values';
import { defaultParamsText, storedDefaultParams } from '../../tasks/run/default-params';

export type IntegrationRow = Selectable<IntegrationTable>;

export function toIntegration(row: IntegrationRow): Integration {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    template_id: row.template_id,
    workflow_id: row.workflow_id ?? null,
    auth_method: row.auth_method as IntegrationAuthMethod,
    auth_header: row.auth_header,
    auth_secret_id: row.auth_secret_id,
    searchable: toBool(row.searchable),
    task_params: storedDefaultParams(row.task_params),
  };
}

const integrationValues = (input: IntegrationInput) => ({
  name: input.name,
  template_id: input.workflow_id ? 0 : input.template_id,
  workflow_id: input.workflow_id ?? null,
  auth_method: input.auth_method,
  auth_header: input.auth_header,
  auth_secret_id: input.auth_secret_id,
  searchable: fromBool(input.searchable),
  task_params: defaultParamsText(input.task_params),
});

export function listIntegrations(db: Db, projectId: number) {
  return db
    .selectFrom('integration')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('name')
    .orderBy('id')
    .execute();
}

export function findIntegration(db: Db, projectId: number, id: number) {
  return findRow(db, 'integration', { id, project_id: projectId });
}

export function insertIntegration(db: Db, dialect: Dialect, projectId: number, input: IntegrationInput) {
  return insertReturningId(db, dialect, 'integration', {
    project_id: projectId,
    ...integrationValues(input),
  });
}

export function updateIntegration(db: Db, projectId: number, id: number, input: IntegrationInput) {
  return updateRows(db, 'integration', { id, project_id: projectId }, integrationValues(input));
}

/**
 * Removes an integration with its aliases, matchers, extracted values and accepted delivery ids; its past tasks
 * keep running history. `trx` is the caller's transaction (which records the event too).
 */
export async function deleteIntegration(trx: Db, projectId: number, id: number) {
  await deleteRows(trx, 'integration_delivery', { integration_id: id });
  await deleteRows(trx, 'integration_matcher', { integration_id: id });
  await deleteRows(trx, 'integration_extract_value', { integration_id: id });
  await deleteRows(trx, 'integration_alias', { project_id: projectId, integration_id: id });
  await trx
    .updateTable('task')
    .set({ integration_id: null })
    .where('project_id', '=', projectId)
    .where('integration_id', '=', id)
    .execute();
  await deleteRows(trx, 'integration', { id, project_id: projectId });
}
