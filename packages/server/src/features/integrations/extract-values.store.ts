import type {
  BodyDataType,
  IntegrationExtractValue,
  IntegrationExtractValueInput,
  ValueSource,
  VariableType,
} from '@signalbox/contracts';
import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import { deleteRows, findRow, listRows, updateRows } from '../../db/rows';
import type { IntegrationExtractValueTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';

/** What an extracted value stores of its input (the ids come from the path). */
type ExtractValueValues = Omit<IntegrationExtractValueInput, 'integration_id' | 'id'>;

export type ExtractValueRow = Selectable<IntegrationExtractValueTable>;

export function toExtractValue(row: ExtractValueRow): IntegrationExtractValue {
  return {
    id: row.id,
    integration_id: row.integration_id,
    name: row.name,
    value_source: row.value_source as ValueSource,
    body_data_type: row.body_data_type as BodyDataType,
    key: row.key,
    variable: row.variable,
    variable_type: (row.variable_type || 'environment') as VariableType,
  };
}

export function listExtractValues(db: Db, integrationId: number) {
  return listRows(db, 'integration_extract_value', { integration_id: integrationId });
}

export function findExtractValue(db: Db, integrationId: number, id: number) {
  return findRow(db, 'integration_extract_value', { id, integration_id: integrationId });
}

const extractValues = (input: ExtractValueValues) => ({
  name: input.name,
  value_source: input.value_source,
  body_data_type: input.body_data_type,
  key: input.key,
  variable: input.variable,
  variable_type: input.variable_type,
});

export function insertExtractValue(
  db: Db,
  dialect: Dialect,
  integrationId: number,
  input: ExtractValueValues,
) {
  return insertReturningId(db, dialect, 'integration_extract_value', {
    integration_id: integrationId,
    ...extractValues(input),
  });
}

export function updateExtractValue(db: Db, integrationId: number, id: number, input: ExtractValueValues) {
  return updateRows(
    db,
    'integration_extract_value',
    { id, integration_id: integrationId },
    extractValues(input),
  );
}

export function deleteExtractValue(db: Db, integrationId: number, id: number) {
  return deleteRows(db, 'integration_extract_value', { id, integration_id: integrationId });
}
