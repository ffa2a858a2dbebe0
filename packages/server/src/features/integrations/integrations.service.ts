import type {
  IntegrationAlias,
  IntegrationExtractValueInput,
  IntegrationInput,
  IntegrationMatcherInput,
} from '@signalbox/contracts';
import { recordProjectEvent } from '../../audit/audit.store';
import type { Deps } from '../../deps';
import { randomAlnum } from '../../lib/crypto';
import { badRequest, found, notFound } from '../../lib/errors';
import { findStoreKey } from '../keys/keys.store';
import { assertInProject } from '../refs/refs.store';
import type { UserRow } from '../users/users.store';
import * as aliasStore from './aliases.store';
import * as valueStore from './extract-values.store';
import * as integrationStore from './integrations.store';
import * as matcherStore from './matchers.store';

/** Aliases are the only secret of an unauthenticated webhook: 32 characters of [A-Za-z0-9] (~190 bits). */
export const ALIAS_LENGTH = 32;

type Actor = { deps: Pick<Deps, 'db' | 'dialect'>; user: UserRow; projectId: number };

const event = (a: Actor, objectType: string, objectId: number | null, description: string) =>
  recordProjectEvent(a.deps.db, a.user, a.projectId, objectType, objectId, description);

export async function listIntegrations(deps: Pick<Deps, 'db'>, projectId: number) {
  return (await integrationStore.listIntegrations(deps.db, projectId)).map(integrationStore.toIntegration);
}

export async function getIntegration(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  const row = await integrationStore.findIntegration(deps.db, projectId, id);
  if (!row) throw notFound('Integration');
  return row;
}

/** Referenced objects must live in this project; the auth secret must be a login/password key. */
async function checkReferences(deps: Pick<Deps, 'db'>, projectId: number, input: IntegrationInput) {
  await assertInProject(deps.db, 'template', input.template_id, projectId, 'Template');
  if (input.task_params?.inventory_id)
    await assertInProject(deps.db, 'inventory', input.task_params.inventory_id, projectId, 'Inventory');
  if (input.auth_secret_id) {
    const key = await findStoreKey(deps.db, projectId, input.auth_secret_id);
    if (!key)
      throw badRequest(`Auth secret ${input.auth_secret_id} does not exist in this project`, {
        auth_secret_id: 'Auth secret not found',
      });
    if (key.type !== 'login_password')
      throw badRequest('Auth secret must be a login_password key', {
        auth_secret_id: 'Auth secret must be a login_password key',
      });
  }
}

export async function createIntegration(a: Actor, input: IntegrationInput) {
  await checkReferences(a.deps, a.projectId, input);
  const id = await integrationStore.insertIntegration(a.deps.db, a.deps.dialect, a.projectId, input);
  await event(a, 'integration', id, `Integration ${input.name} created`);
  return integrationStore.toIntegration(
    found(await integrationStore.findIntegration(a.deps.db, a.projectId, id), 'Integration'),
  );
}

export async function updateIntegration(a: Actor, id: number, input: IntegrationInput) {
  await getIntegration(a.deps, a.projectId, id);
  await checkReferences(a.deps, a.projectId, input);
  await integrationStore.updateIntegration(a.deps.db, a.projectId, id, input);
  await event(a, 'integration', id, `Integration ${input.name} updated`);
}

export async function deleteIntegration(a: Actor, id: number) {
  const row = await getIntegration(a.deps, a.projectId, id);
  await integrationStore.deleteIntegration(a.deps.db, a.projectId, id);
  await event(a, 'integration', id, `Integration ${row.name} deleted`);
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
  const id = await aliasStore.insertAlias(a.deps.db, a.deps.dialect, a.projectId, integrationId, alias);
  await event(
    a,
    'integration_alias',
    id,
    integration ? `Alias of integration ${integration.name} created` : 'Project integration alias created',
  );
  return toAlias(found(await aliasStore.findAliasById(a.deps.db, a.projectId, id), 'Alias'), baseUrl);
}

/** Deletes an alias; with an integration id, only an alias of that integration. */
export async function deleteAlias(a: Actor, integrationId: number | null, aliasId: number) {
  const integration = integrationId == null ? null : await getIntegration(a.deps, a.projectId, integrationId);
  const row = await aliasStore.findAliasById(a.deps.db, a.projectId, aliasId);
  if (!row || (integration && row.integration_id !== integration.id)) throw notFound('Alias');
  await aliasStore.deleteAlias(a.deps.db, a.projectId, aliasId);
  await event(
    a,
    'integration_alias',
    aliasId,
    integration ? `Alias of integration ${integration.name} deleted` : 'Integration alias deleted',
  );
}

// Matchers.

export async function listMatchers(deps: Pick<Deps, 'db'>, projectId: number, integrationId: number) {
  await getIntegration(deps, projectId, integrationId);
  return (await matcherStore.listMatchers(deps.db, integrationId)).map(matcherStore.toMatcher);
}

export async function createMatcher(a: Actor, integrationId: number, input: IntegrationMatcherInput) {
  const integration = await getIntegration(a.deps, a.projectId, integrationId);
  const id = await matcherStore.insertMatcher(a.deps.db, a.deps.dialect, integrationId, input);
  await event(
    a,
    'integration_matcher',
    id,
    `Matcher ${input.name} of integration ${integration.name} created`,
  );
  return matcherStore.toMatcher(
    found(await matcherStore.findMatcher(a.deps.db, integrationId, id), 'Matcher'),
  );
}

export async function updateMatcher(
  a: Actor,
  integrationId: number,
  id: number,
  input: IntegrationMatcherInput,
) {
  const integration = await getIntegration(a.deps, a.projectId, integrationId);
  if (!(await matcherStore.findMatcher(a.deps.db, integrationId, id))) throw notFound('Matcher');
  await matcherStore.updateMatcher(a.deps.db, integrationId, id, input);
  await event(
    a,
    'integration_matcher',
    id,
    `Matcher ${input.name} of integration ${integration.name} updated`,
  );
}

export async function deleteMatcher(a: Actor, integrationId: number, id: number) {
  const integration = await getIntegration(a.deps, a.projectId, integrationId);
  const row = await matcherStore.findMatcher(a.deps.db, integrationId, id);
  if (!row) throw notFound('Matcher');
  await matcherStore.deleteMatcher(a.deps.db, integrationId, id);
  await event(a, 'integration_matcher', id, `Matcher ${row.name} of integration ${integration.name} deleted`);
}

// Extracted values.

export async function listExtractValues(deps: Pick<Deps, 'db'>, projectId: number, integrationId: number) {
  await getIntegration(deps, projectId, integrationId);
  return (await valueStore.listExtractValues(deps.db, integrationId)).map(valueStore.toExtractValue);
}

export async function createExtractValue(
  a: Actor,
  integrationId: number,
  input: IntegrationExtractValueInput,
) {
  const integration = await getIntegration(a.deps, a.projectId, integrationId);
  const id = await valueStore.insertExtractValue(a.deps.db, a.deps.dialect, integrationId, input);
  await event(
    a,
    'integration_extract_value',
    id,
    `Extracted value ${input.name} of integration ${integration.name} created`,
  );
  return valueStore.toExtractValue(
    found(await valueStore.findExtractValue(a.deps.db, integrationId, id), 'Extracted value'),
  );
}

export async function updateExtractValue(
  a: Actor,
  integrationId: number,
  id: number,
  input: IntegrationExtractValueInput,
) {
  const integration = await getIntegration(a.deps, a.projectId, integrationId);
  if (!(await valueStore.findExtractValue(a.deps.db, integrationId, id))) throw notFound('Extracted value');
  await valueStore.updateExtractValue(a.deps.db, integrationId, id, input);
  await event(
    a,
    'integration_extract_value',
    id,
    `Extracted value ${input.name} of integration ${integration.name} updated`,
  );
}

export async function deleteExtractValue(a: Actor, integrationId: number, id: number) {
  const integration = await getIntegration(a.deps, a.projectId, integrationId);
  const row = await valueStore.findExtractValue(a.deps.db, integrationId, id);
  if (!row) throw notFound('Extracted value');
  await valueStore.deleteExtractValue(a.deps.db, integrationId, id);
  await event(
    a,
    'integration_extract_value',
    id,
    `Extracted value ${row.name} of integration ${integration.name} deleted`,
  );
}
