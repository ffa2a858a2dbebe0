import type { IntegrationAlias, IntegrationInput } from '@signalbox/contracts';
import { coded } from '@signalbox/contracts';
import type { UserRow } from '../../access/principals.store';
import { assertInProject } from '../../access/refs.store';
import { type EventKind, namedKind, recordProjectEvent } from '../../audit/audit.store';
import type { Db, Dialect } from '../../db';
import { transaction } from '../../db/transaction';
import type { Deps } from '../../deps';
import { randomAlnum } from '../../lib/crypto';
import { badRequest, fieldError, found, notFound } from '../../lib/errors';
import { findStoreKey } from '../keys';
import * as aliasStore from './aliases.store';
import * as valueStore from './extract-values.store';
import * as integrationStore from './integrations.store';
import * as matcherStore from './matchers.store';

/** Aliases are the only secret of an unauthenticated webhook: 32 characters of [A-Za-z0-9] (~190 bits). */
export const ALIAS_LENGTH = 32;

type Actor = { deps: Pick<Deps, 'db' | 'dialect'>; user: UserRow; projectId: number };

/** Records an event of the actor's project; on `db` when it runs in a transaction (the actor's database otherwise). */
const event = (
  a: Actor,
  objectType: string,
  objectId: number | null,
  description: string,
  kind?: EventKind,
  db: Db = a.deps.db,
) => recordProjectEvent(db, a.user, a.projectId, objectType, objectId, description, kind);

/** The kind of an alias's event: one of an integration's, or one of the project's. */
const aliasEvent = (integration: { name: string } | null, verb: 'created' | 'deleted'): EventKind =>
  integration
    ? { kind: `alias.${verb}`, params: { integration: integration.name } }
    : { kind: `projectalias.${verb}`, params: {} };

/** Makes a change and records its event in one transaction: no change without its event, nor the reverse. */
async function withEvent<T>(
  a: Actor,
  change: (trx: Db) => Promise<T>,
  what: (result: T) => [objectType: string, objectId: number | null, description: string, kind?: EventKind],
): Promise<T> {
  return transaction(a.deps.db, async (trx) => {
    const result = await change(trx);
    const [objectType, objectId, description, kind] = what(result);
    await event(a, objectType, objectId, description, kind, trx);
    return result;
  });
}

export async function listIntegrations(deps: Pick<Deps, 'db'>, projectId: number) {
  return (await integrationStore.listIntegrations(deps.db, projectId)).map(integrationStore.toIntegration);
}

export async function getIntegration(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  const row = await integrationStore.findIntegration(deps.db, projectId, id);
  if (!row) throw notFound('integration');
  return row;
}

/** Referenced objects must live in this project; the auth secret must be a login/password key. */
async function checkReferences(deps: Pick<Deps, 'db'>, projectId: number, input: IntegrationInput) {
  if (input.workflow_id)
    await assertInProject(deps.db, 'workflow', input.workflow_id, projectId, 'workflow', 'workflow_id');
  else await assertInProject(deps.db, 'template', input.template_id, projectId, 'template', 'template_id');
  if (input.task_params?.inventory_id)
    await assertInProject(
      deps.db,
      'inventory',
      input.task_params.inventory_id,
      projectId,
      'inventory',
      'task_params.inventory_id',
    );
  if (input.auth_secret_id) {
    const key = await findStoreKey(deps.db, projectId, input.auth_secret_id);
    if (!key)
      throw badRequest(coded('not_in_project', { what: 'auth_secret', id: input.auth_secret_id }), {
        auth_secret_id: coded('not_found', { what: 'auth_secret' }),
      });
    if (key.type !== 'login_password')
      throw fieldError('auth_secret_id', coded('auth_secret_not_login_password'));
  }
}

export async function createIntegration(a: Actor, input: IntegrationInput) {
  await checkReferences(a.deps, a.projectId, input);
  const id = await withEvent(
    a,
    (trx) => integrationStore.insertIntegration(trx, a.deps.dialect, a.projectId, input),
    (id) => [
      'integration',
      id,
      `Integration ${input.name} created`,
      namedKind('integration', 'created', input.name),
    ],
  );
  return integrationStore.toIntegration(
    found(await integrationStore.findIntegration(a.deps.db, a.projectId, id), 'integration'),
  );
}

export async function updateIntegration(a: Actor, id: number, input: IntegrationInput) {
  await getIntegration(a.deps, a.projectId, id);
  await checkReferences(a.deps, a.projectId, input);
  await withEvent(
    a,
    (trx) => integrationStore.updateIntegration(trx, a.projectId, id, input),
    () => [
      'integration',
      id,
      `Integration ${input.name} updated`,
      namedKind('integration', 'updated', input.name),
    ],
  );
}

export async function deleteIntegration(a: Actor, id: number) {
  const row = await getIntegration(a.deps, a.projectId, id);
  await withEvent(
    a,
    (trx) => integrationStore.deleteIntegration(trx, a.projectId, id),
    () => [
      'integration',
      id,
      `Integration ${row.name} deleted`,
      namedKind('integration', 'deleted', row.name),
    ],
  );
}

// Aliases.

/** `<web root>/api/integrations/<alias>`; without a configured web root, the address the caller used. */
export function aliasUrl(baseUrl: string, alias: string) {
  return `${baseUrl.replace(/\/+$/, '')}/api/integrations/${alias}`;
}

export function toAlias(row: aliasStore.AliasRow, baseUrl: string): IntegrationAlias {
  return {
    id: row.id,
    project_id: row.project_id,
    integration_id: row.integration_id,
    alias: row.alias,
    url: aliasUrl(baseUrl, row.alias),
  };
}

export async function listAliases(
  deps: Pick<Deps, 'db'>,
  projectId: number,
  integrationId: number | null,
  baseUrl: string,
) {
  if (integrationId != null) await getIntegration(deps, projectId, integrationId);
  return (await aliasStore.listAliases(deps.db, projectId, integrationId)).map((r) => toAlias(r, baseUrl));
}

export async function createAlias(a: Actor, integrationId: number | null, baseUrl: string) {
  const integration = integrationId == null ? null : await getIntegration(a.deps, a.projectId, integrationId);
  const alias = randomAlnum(ALIAS_LENGTH);
  const id = await withEvent(
    a,
    (trx) => aliasStore.insertAlias(trx, a.deps.dialect, a.projectId, integrationId, alias),
    (id) => [
      'integration_alias',
      id,
      integration ? `Alias of integration ${integration.name} created` : 'Project integration alias created',
      aliasEvent(integration, 'created'),
    ],
  );
  return toAlias(found(await aliasStore.findAliasById(a.deps.db, a.projectId, id), 'alias'), baseUrl);
}

/** Deletes an alias; with an integration id, only an alias of that integration. */
export async function deleteAlias(a: Actor, integrationId: number | null, aliasId: number) {
  const integration = integrationId == null ? null : await getIntegration(a.deps, a.projectId, integrationId);
  const row = await aliasStore.findAliasById(a.deps.db, a.projectId, aliasId);
  if (!row || (integration && row.integration_id !== integration.id)) throw notFound('alias');
  await withEvent(
    a,
    (trx) => aliasStore.deleteAlias(trx, a.projectId, aliasId),
    () => [
      'integration_alias',
      aliasId,
      integration ? `Alias of integration ${integration.name} deleted` : 'Integration alias deleted',
      aliasEvent(integration, 'deleted'),
    ],
  );
}

// Matchers and extracted values: rows under one integration, handled alike.

/** One kind of row under an integration: its store, how the API shows it, and the words its events use. */
type IntegrationRowKind<Input extends { name: string }, Row extends { name: string }, Shown> = {
  label: 'Matcher' | 'Extracted value';
  /** What a 404 names. */
  thing: 'matcher' | 'extracted_value';
  objectType: string;
  /** The first part of its events' kind (`<kindPrefix>.created`…). */
  kindPrefix: 'matcher' | 'extractedvalue';
  list: (db: Db, integrationId: number) => Promise<Row[]>;
  find: (db: Db, integrationId: number, id: number) => Promise<Row | undefined>;
  insert: (db: Db, dialect: Dialect, integrationId: number, input: Input) => Promise<number>;
  update: (db: Db, integrationId: number, id: number, input: Input) => Promise<void>;
  remove: (db: Db, integrationId: number, id: number) => Promise<void>;
  show: (row: Row) => Shown;
};

/**
 * List, create, update and delete of one kind of row under an integration; the integration must be in the
 * project, and each change is recorded as "<Label> <name> of integration <integration> <verb>".
 */
function integrationRows<Input extends { name: string }, Row extends { name: string }, Shown>(
  kind: IntegrationRowKind<Input, Row, Shown>,
) {
  const describe = (name: string, integration: { name: string }, verb: string) =>
    `${kind.label} ${name} of integration ${integration.name} ${verb}`;
  const kindOf = (name: string, integration: { name: string }, verb: string): EventKind => ({
    kind: `${kind.kindPrefix}.${verb}`,
    params: { name, integration: integration.name },
  });
  return {
    async list(deps: Pick<Deps, 'db'>, projectId: number, integrationId: number) {
      await getIntegration(deps, projectId, integrationId);
      return (await kind.list(deps.db, integrationId)).map(kind.show);
    },
    async create(a: Actor, integrationId: number, input: Input) {
      const integration = await getIntegration(a.deps, a.projectId, integrationId);
      const id = await withEvent(
        a,
        (trx) => kind.insert(trx, a.deps.dialect, integrationId, input),
        (id) => [
          kind.objectType,
          id,
          describe(input.name, integration, 'created'),
          kindOf(input.name, integration, 'created'),
        ],
      );
      return kind.show(found(await kind.find(a.deps.db, integrationId, id), kind.thing));
    },
    async update(a: Actor, integrationId: number, id: number, input: Input) {
      const integration = await getIntegration(a.deps, a.projectId, integrationId);
      if (!(await kind.find(a.deps.db, integrationId, id))) throw notFound(kind.thing);
      await withEvent(
        a,
        (trx) => kind.update(trx, integrationId, id, input),
        () => [
          kind.objectType,
          id,
          describe(input.name, integration, 'updated'),
          kindOf(input.name, integration, 'updated'),
        ],
      );
    },
    async remove(a: Actor, integrationId: number, id: number) {
      const integration = await getIntegration(a.deps, a.projectId, integrationId);
      const row = await kind.find(a.deps.db, integrationId, id);
      if (!row) throw notFound(kind.thing);
      await withEvent(
        a,
        (trx) => kind.remove(trx, integrationId, id),
        () => [
          kind.objectType,
          id,
          describe(row.name, integration, 'deleted'),
          kindOf(row.name, integration, 'deleted'),
        ],
      );
    },
  };
}

export const {
  list: listMatchers,
  create: createMatcher,
  update: updateMatcher,
  remove: deleteMatcher,
} = integrationRows({
  label: 'Matcher',
  thing: 'matcher',
  objectType: 'integration_matcher',
  kindPrefix: 'matcher',
  list: matcherStore.listMatchers,
  find: matcherStore.findMatcher,
  insert: matcherStore.insertMatcher,
  update: matcherStore.updateMatcher,
  remove: matcherStore.deleteMatcher,
  show: matcherStore.toMatcher,
});

export const {
  list: listExtractValues,
  create: createExtractValue,
  update: updateExtractValue,
  remove: deleteExtractValue,
} = integrationRows({
  label: 'Extracted value',
  thing: 'extracted_value',
  objectType: 'integration_extract_value',
  kindPrefix: 'extractedvalue',
  list: valueStore.listExtractValues,
  find: valueStore.findExtractValue,
  insert: valueStore.insertExtractValue,
  update: valueStore.updateExtractValue,
  remove: valueStore.deleteExtractValue,
  show: valueStore.toExtractValue,
});
