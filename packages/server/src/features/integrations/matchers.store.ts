import type {
  BodyDataType,
  IntegrationMatcher,
  IntegrationMatcherInput,
  MatchMethod,
  MatchType,
} from '@signalbox/contracts';
import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import { deleteRows, findRow, listRows, updateRows } from '../../db/rows';
import type { IntegrationMatcherTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';

/** What a matcher stores of its input (the ids come from the path). */
type MatcherValues = Omit<IntegrationMatcherInput, 'integration_id' | 'id'>;

export type MatcherRow = Selectable<IntegrationMatcherTable>;

export function toMatcher(row: MatcherRow): IntegrationMatcher {
  return {
    id: row.id,
    integration_id: row.integration_id,
    name: row.name,
    match_type: row.match_type as MatchType,
    body_data_type: row.body_data_type as BodyDataType,
    key: row.key,
    method: row.method as MatchMethod,
    value: row.value,
  };
}

export function listMatchers(db: Db, integrationId: number) {
  return listRows(db, 'integration_matcher', { integration_id: integrationId });
}

export function findMatcher(db: Db, integrationId: number, id: number) {
  return findRow(db, 'integration_matcher', { id, integration_id: integrationId });
}

const matcherValues = (input: MatcherValues) => ({
  name: input.name,
  match_type: input.match_type,
  body_data_type: input.body_data_type,
  key: input.key,
  method: input.method,
  value: input.value,
});

export function insertMatcher(db: Db, dialect: Dialect, integrationId: number, input: MatcherValues) {
  return insertReturningId(db, dialect, 'integration_matcher', {
    integration_id: integrationId,
    ...matcherValues(input),
  });
}

export function updateMatcher(db: Db, integrationId: number, id: number, input: MatcherValues) {
  return updateRows(db, 'integration_matcher', { id, integration_id: integrationId }, matcherValues(input));
}

export function deleteMatcher(db: Db, integrationId: number, id: number) {
  return deleteRows(db, 'integration_matcher', { id, integration_id: integrationId });
}
