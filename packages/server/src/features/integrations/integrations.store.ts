import type {
  BodyDataType,
  Integration,
  IntegrationAuthMethod,
  IntegrationExtractValue,
  IntegrationExtractValueInput,
  IntegrationInput,
  IntegrationMatcher,
  IntegrationMatcherInput,
  IntegrationTaskParams,
  MatchMethod,
  MatchType,
  ValueSource,
  VariableType,
} from '@signalbox/contracts';
import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import type {
  IntegrationAliasTable,
  IntegrationExtractValueTable,
  IntegrationMatcherTable,
  IntegrationTable,
} from '../../db/tables';
import { fromBool, insertReturningId, parseJson, toBool, toCount } from '../../db/values';
import { isUniqueViolation } from '../users/users.store';

export type IntegrationRow = Selectable<IntegrationTable>;
export type AliasRow = Selectable<IntegrationAliasTable>;
export type MatcherRow = Selectable<IntegrationMatcherTable>;
export type ExtractValueRow = Selectable<IntegrationExtractValueTable>;

export function toIntegration(row: IntegrationRow): Integration {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    template_id: row.template_id,
    auth_method: row.auth_method as IntegrationAuthMethod,
    auth_header: row.auth_header,
    auth_secret_id: row.auth_secret_id,
    searchable: toBool(row.searchable),
    task_params: parseJson<IntegrationTaskParams>(row.task_params, {}),
  };
}

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

/** Stored task parameters: only what was given, so defaults stay out of the task. */
function taskParamsText(params: IntegrationInput['task_params']): string {
  if (!params) return '{}';
  const out: IntegrationTaskParams = {};
  if (params.environment.trim()) out.environment = params.environment;
  if (params.message) out.message = params.message;
  if (params.git_branch) out.git_branch = params.git_branch;
  if (params.inventory_id) out.inventory_id = params.inventory_id;
  if (params.arguments.trim()) out.arguments = params.arguments;
  if (Object.keys(params.params).length > 0) out.params = params.params;
  return JSON.stringify(out);
}

const integrationValues = (input: IntegrationInput) => ({
  name: input.name,
  template_id: input.template_id,
  auth_method: input.auth_method,
  auth_header: input.auth_header,
  auth_secret_id: input.auth_secret_id,
  searchable: fromBool(input.searchable),
  task_params: taskParamsText(input.task_params),
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
  return db
    .selectFrom('integration')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function insertIntegration(db: Db, dialect: Dialect, projectId: number, input: IntegrationInput) {
  return insertReturningId(db, dialect, 'integration', {
    project_id: projectId,
    ...integrationValues(input),
  });
}

export async function updateIntegration(db: Db, projectId: number, id: number, input: IntegrationInput) {
  await db
    .updateTable('integration')
    .set(integrationValues(input))
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .execute();
}

/**
 * Removes an integration with its aliases, matchers, extracted values and accepted delivery ids; its past tasks
 * keep running history.
 */
export async function deleteIntegration(db: Db, projectId: number, id: number) {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('integration_delivery').where('integration_id', '=', id).execute();
    await trx.deleteFrom('integration_matcher').where('integration_id', '=', id).execute();
    await trx.deleteFrom('integration_extract_value').where('integration_id', '=', id).execute();
    await trx
      .deleteFrom('integration_alias')
      .where('project_id', '=', projectId)
      .where('integration_id', '=', id)
      .execute();
    await trx
      .updateTable('task')
      .set({ integration_id: null })
      .where('project_id', '=', projectId)
      .where('integration_id', '=', id)
      .execute();
    await trx.deleteFrom('integration').where('project_id', '=', projectId).where('id', '=', id).execute();
  });
}

/** A key of the project's key store (not an environment secret) that can hold an auth secret. */
export function findStoreKey(db: Db, projectId: number, id: number) {
  return db
    .selectFrom('access_key')
    .select(['id', 'type', 'secret'])
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .where('owner', '=', '')
    .executeTakeFirst();
}

// Aliases. integrationId null = the project-level aliases.

export function listAliases(db: Db, projectId: number, integrationId: number | null) {
  let q = db.selectFrom('integration_alias').selectAll().where('project_id', '=', projectId);
  q =
    integrationId == null
      ? q.where('integration_id', 'is', null)
      : q.where('integration_id', '=', integrationId);
  return q.orderBy('id').execute();
}

export function findAliasById(db: Db, projectId: number, id: number) {
  return db
    .selectFrom('integration_alias')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
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

export async function deleteAlias(db: Db, projectId: number, id: number) {
  await db.deleteFrom('integration_alias').where('project_id', '=', projectId).where('id', '=', id).execute();
}

// Matchers.

export function listMatchers(db: Db, integrationId: number) {
  return db
    .selectFrom('integration_matcher')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .orderBy('id')
    .execute();
}

export function findMatcher(db: Db, integrationId: number, id: number) {
  return db
    .selectFrom('integration_matcher')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .where('id', '=', id)
    .executeTakeFirst();
}

const matcherValues = (input: IntegrationMatcherInput) => ({
  name: input.name,
  match_type: input.match_type,
  body_data_type: input.body_data_type,
  key: input.key,
  method: input.method,
  value: input.value,
});

export function insertMatcher(
  db: Db,
  dialect: Dialect,
  integrationId: number,
  input: IntegrationMatcherInput,
) {
  return insertReturningId(db, dialect, 'integration_matcher', {
    integration_id: integrationId,
    ...matcherValues(input),
  });
}

export async function updateMatcher(
  db: Db,
  integrationId: number,
  id: number,
  input: IntegrationMatcherInput,
) {
  await db
    .updateTable('integration_matcher')
    .set(matcherValues(input))
    .where('integration_id', '=', integrationId)
    .where('id', '=', id)
    .execute();
}

export async function deleteMatcher(db: Db, integrationId: number, id: number) {
  await db
    .deleteFrom('integration_matcher')
    .where('integration_id', '=', integrationId)
    .where('id', '=', id)
    .execute();
}

// Extracted values.

export function listExtractValues(db: Db, integrationId: number) {
  return db
    .selectFrom('integration_extract_value')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .orderBy('id')
    .execute();
}

export function findExtractValue(db: Db, integrationId: number, id: number) {
  return db
    .selectFrom('integration_extract_value')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .where('id', '=', id)
    .executeTakeFirst();
}

const extractValues = (input: IntegrationExtractValueInput) => ({
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
  input: IntegrationExtractValueInput,
) {
  return insertReturningId(db, dialect, 'integration_extract_value', {
    integration_id: integrationId,
    ...extractValues(input),
  });
}

export async function updateExtractValue(
  db: Db,
  integrationId: number,
  id: number,
  input: IntegrationExtractValueInput,
) {
  await db
    .updateTable('integration_extract_value')
    .set(extractValues(input))
    .where('integration_id', '=', integrationId)
    .where('id', '=', id)
    .execute();
}

export async function deleteExtractValue(db: Db, integrationId: number, id: number) {
  await db
    .deleteFrom('integration_extract_value')
    .where('integration_id', '=', integrationId)
    .where('id', '=', id)
    .execute();
}

// Accepted delivery ids (redelivery de-duplication).

/** Rows older than the window removed per accepted delivery, so pruning never grows into one long statement. */
const PRUNE_BATCH = 100;

/**
 * Records that the integration accepted a delivery id; false when it already did after `since`. The insert
 * comes first and the unique key decides, so of two concurrent deliveries of one id only one gets true. A row
 * from before `since` is taken over by a conditional update (again only one caller wins it).
 */
export async function claimDelivery(
  db: Db,
  integrationId: number,
  deliveryId: string,
  at: string,
  since: string,
): Promise<boolean> {
  let claimed = true;
  try {
    await db
      .insertInto('integration_delivery')
      .values({ integration_id: integrationId, delivery_id: deliveryId, created: at })
      .execute();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const res = await db
      .updateTable('integration_delivery')
      .set({ created: at })
      .where('integration_id', '=', integrationId)
      .where('delivery_id', '=', deliveryId)
      .where('created', '<', since)
      .executeTakeFirst();
    claimed = toCount(res.numUpdatedRows) === 1;
  }
  if (claimed) await pruneDeliveries(db, since);
  return claimed;
}

/** Forgets an accepted delivery id (its task could not be started, so a redelivery should try again). */
export async function releaseDelivery(db: Db, integrationId: number, deliveryId: string, at: string) {
  await db
    .deleteFrom('integration_delivery')
    .where('integration_id', '=', integrationId)
    .where('delivery_id', '=', deliveryId)
    .where('created', '=', at)
    .execute();
}

/** Deletes up to one batch of delivery ids accepted before `since` (of any integration). */
export async function pruneDeliveries(db: Db, since: string, limit = PRUNE_BATCH) {
  const old = await db
    .selectFrom('integration_delivery')
    .select('id')
    .where('created', '<', since)
    .orderBy('created')
    .limit(limit)
    .execute();
  if (old.length === 0) return;
  await db
    .deleteFrom('integration_delivery')
    .where(
      'id',
      'in',
      old.map((r) => r.id),
    )
    .execute();
}
