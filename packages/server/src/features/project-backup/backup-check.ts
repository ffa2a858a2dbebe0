import type { ProjectBackupInput } from '@signalbox/contracts';
import { invalid, parseBackup, unsupportedKinds } from './backup-parse';
import { isRecord } from './plan-checks';
import { planIntegrations } from './plan-integrations';
import {
  planEnvironments,
  planInventories,
  planKeys,
  planOptionLists,
  planRepositories,
  planViews,
} from './plan-resources';
import { planSchedules, planTemplates } from './plan-templates';
import { planWorkflows } from './plan-workflows';
import type { RestorePlan } from './restore-plan';

export { parseBackup } from './backup-parse';
export type { PlannedKey, PlannedTemplate, RestorePlan } from './restore-plan';

/**
 * A checked backup: every object checked as its API would check it, every reference a name of an object of the
 * plan (each kind planned in its own module), so that nothing is written for a backup that cannot be restored whole.
 */
export function planRestore(b: ProjectBackupInput): RestorePlan {
  for (const [kind, what] of Object.entries(unsupportedKinds)) {
    const list = (b as Record<string, unknown>)[kind];
    if (Array.isArray(list) && list.length > 0)
      throw invalid(kind, `${what} cannot be restored here; remove them from the backup`);
  }
  const keys = planKeys(b);
  const keyNames = new Set(['None', ...keys.map((k) => k.name)]);
  const keyType = (name: string) => keys.find((k) => k.name === name)?.type ?? 'none';
  const repositories = planRepositories(b, keyNames);
  const repositoryNames = new Set(repositories.map((r) => r.name));
  const inventories = planInventories(b, keyNames, repositoryNames);
  const inventoryType = new Map(inventories.map((inv) => [inv.name, inv.type]));
  const inventoryNames = new Set(inventoryType.keys());
  const environments = planEnvironments(b);
  const environmentNames = new Set(['Empty', ...environments.map((e) => e.name)]);
  const { views, allTabs } = planViews(b);
  const viewNames = new Set(views.map((v) => v.title));
  const templateNames = new Set(b.templates.map((t) => t.name));
  const optionLists = planOptionLists(b);
  const templates = planTemplates(b, {
    optionListNames: new Set(optionLists.map((l) => l.name)),
    keyNames,
    inventoryType,
    repositoryNames,
    environmentNames,
    viewNames,
    allTabs,
    templateNames,
  });
  const workflows = planWorkflows(b, { templateNames, inventoryNames, environmentNames });
  const workflowNames = new Set(workflows.map((w) => w.name));
  const schedules = planSchedules(b, { inventoryNames, templateNames, repositoryNames, workflowNames });
  const integrations = planIntegrations(b, {
    templateNames,
    keyNames,
    keyType,
    inventoryNames,
    workflowNames,
  });
  return {
    meta: b.meta,
    keys,
    repositories,
    inventories,
    environments,
    views,
    templates,
    schedules,
    integrations,
    integration_aliases: b.integration_aliases,
    option_lists: optionLists,
    terraform_states: planTerraformStates(b),
    workflows,
  };
}

/** The backup's Terraform states: one per name (each is opened under the server's key when it is written). */
function planTerraformStates(b: ProjectBackupInput): RestorePlan['terraform_states'] {
  const seen = new Set<string>();
  return b.terraform_states.map((s, i) => {
    if (seen.has(s.name)) throw invalid(`terraform_states[${i}].name`, `${s.name} is named twice`);
    seen.add(s.name);
    return { name: s.name, serial: s.serial, lineage: s.lineage, sealed: s.sealed };
  });
}

/** Plans made by checkBackup: restoring one again needs no second check. */
const checkedPlans = new WeakSet<RestorePlan>();
export const isCheckedPlan = (value: unknown): value is RestorePlan =>
  isRecord(value) && checkedPlans.has(value as RestorePlan);

/**
 * Reads a backup for restoring: parses it, checks every object as its API would and every reference by name, so
 * that nothing is written for a backup that cannot be restored whole.
 */
export function checkBackup(body: unknown): RestorePlan {
  if (isCheckedPlan(body)) return body;
  const plan = planRestore(parseBackup(body));
  checkedPlans.add(plan);
  return plan;
}
