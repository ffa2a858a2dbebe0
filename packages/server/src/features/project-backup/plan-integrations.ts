import {
  integrationExtractValueInput,
  integrationInput,
  integrationMatcherInput,
  type ProjectBackupInput,
} from '@signalbox/contracts';
import { invalid } from './backup-parse';
import { ALIAS, assertRef, checkAs, REF, refId } from './plan-checks';
import type { RestorePlan } from './restore-plan';

// Planning a restore's integrations, their matchers, extracted values and aliases.

/** Checks the backup's integrations with their rules and aliases, and the project's own aliases. */
export function planIntegrations(
  b: ProjectBackupInput,
  n: {
    templateNames: Set<string>;
    keyNames: Set<string>;
    keyType: (name: string) => string;
    inventoryNames: Set<string>;
    workflowNames: Set<string>;
  },
): RestorePlan['integrations'] {
  const { templateNames, keyNames, keyType, inventoryNames, workflowNames } = n;
  const integrations = b.integrations.map((integration, i) => {
    const at = `integrations[${i}]`;
    assertRef(`${at}.template`, 'template', 'templates', templateNames, integration.template);
    assertRef(`${at}.workflow`, 'workflow', 'workflows', workflowNames, integration.workflow);
    assertRef(`${at}.auth_secret`, 'key', 'keys', keyNames, integration.auth_secret);
    const { inventory_name, inventory_id: _stale, ...params } = integration.task_params;
    const inventory = typeof inventory_name === 'string' && inventory_name ? inventory_name : null;
    assertRef(`${at}.task_params.inventory_name`, 'inventory', 'inventories', inventoryNames, inventory);
    const input = checkAs(
      integrationInput,
      {
        name: integration.name,
        template_id: integration.workflow ? 0 : REF,
        workflow_id: refId(integration.workflow),
        auth_method: integration.auth_method,
        auth_secret_id: refId(integration.auth_secret),
        auth_header: integration.auth_header,
        searchable: integration.searchable,
        task_params: { ...params, inventory_id: refId(inventory) },
      },
      at,
    );
    if (
      input.auth_secret_id &&
      integration.auth_secret &&
      keyType(integration.auth_secret) !== 'login_password'
    )
      throw invalid(`${at}.auth_secret`, 'Auth secret must be a login_password key');
    // A rule reading the whole body as text has no key; the peer keeps it empty, the API asks for one.
    const wholeBody = (source: string, type: string, key: string) =>
      source === 'body' && type === 'string' && key.trim() === '';
    const matchers = integration.matchers.map((m, k) => {
      const keyless = wholeBody(m.match_type, m.body_data_type, m.key);
      const checked = checkAs(
        integrationMatcherInput,
        keyless ? { ...m, key: 'body' } : m,
        `${at}.matchers[${k}]`,
      );
      const { integration_id: _i, id: _id, ...values } = checked;
      return keyless ? { ...values, key: '' } : values;
    });
    const extract_values = integration.extract_values.map((v, k) => {
      const keyless = wholeBody(v.value_source, v.body_data_type, v.key);
      const checked = checkAs(
        integrationExtractValueInput,
        keyless ? { ...v, key: 'body' } : v,
        `${at}.extract_values[${k}]`,
      );
      const { integration_id: _i, id: _id, ...values } = checked;
      return keyless ? { ...values, key: '' } : values;
    });
    integration.aliases.forEach((alias, k) => {
      if (!ALIAS.test(alias))
        throw invalid(`${at}.aliases[${k}]`, 'Alias may contain only letters, digits, "_" and "-"');
    });
    return {
      name: input.name,
      template: integration.workflow ? null : integration.template,
      workflow: integration.workflow,
      auth_method: input.auth_method,
      auth_header: input.auth_header,
      auth_secret: input.auth_secret_id ? integration.auth_secret : null,
      searchable: input.searchable,
      task_params: params,
      inventory,
      aliases: integration.aliases,
      matchers,
      extract_values,
    };
  });
  b.integration_aliases.forEach((alias, k) => {
    if (!ALIAS.test(alias))
      throw invalid(`integration_aliases[${k}]`, 'Alias may contain only letters, digits, "_" and "-"');
  });
  return integrations;
}
