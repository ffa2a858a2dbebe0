import {
  errorMessage,
  inventoryTypesForApp,
  type ProjectBackupInput,
  scheduleInput,
  templateInput,
} from '@signalbox/contracts';
import { defaultParamsText } from '../../tasks/run/default-params';
import { cronError } from '../schedules';
import { invalid } from './backup-parse';
import { assertRef, checkAs, isRecord, REF, refId, uniqueNames } from './plan-checks';
import type { PlannedTemplate, RestorePlan } from './restore-plan';
import { surveyById } from './survey-sources';

// Planning a restore's templates (with their vaults) and schedules.

/**
 * Checks the whole backup and turns it into a restore plan. Nothing is written for a backup that fails here.
 */
/**
 * A template's vault in a backup: the deprecated `vault_key`, or the one entry of the `vaults` list of newer
 * versions with its name (a password vault by its key, a script vault by its script). A password vault without a
 * key is no vault; two different vaults are refused, since a template keeps one.
 */
export function planVault(
  t: ProjectBackupInput['templates'][number],
  at: string,
  keyNames: Set<string>,
): { name: string | null; key: string | null; script: string } | null {
  const found: { name: string | null; key: string | null; script: string }[] = [];
  if (t.vault_key) {
    assertRef(`${at}.vault_key`, 'key', 'keys', keyNames, t.vault_key);
    found.push({ name: null, key: t.vault_key, script: '' });
  }
  t.vaults.forEach((v, k) => {
    const where = `${at}.vaults[${k}]`;
    const name = v.name ?? null;
    if (v.type === 'script') {
      const script = v.script ?? '';
      if (!script) throw invalid(`${where}.script`, 'Vault script is required');
      found.push({ name, key: null, script });
      return;
    }
    if (!v.vault_key) return;
    assertRef(`${where}.vault_key`, 'key', 'keys', keyNames, v.vault_key);
    // The deprecated field beside the list names the same vault: the list's entry (with its name) is the one.
    const same = found.findIndex((f) => f.key === v.vault_key && f.name === null);
    if (same >= 0) found.splice(same, 1);
    found.push({ name, key: v.vault_key, script: '' });
  });
  if (found.length > 1) throw invalid(`${at}.vaults`, 'a template holds one vault here, not several');
  return found[0] ?? null;
}

/** Checks the backup's templates: every reference by name, the vault, the app's inventory types, build/deploy. */
export function planTemplates(
  b: ProjectBackupInput,
  n: {
    keyNames: Set<string>;
    inventoryType: Map<string, string>;
    repositoryNames: Set<string>;
    environmentNames: Set<string>;
    viewNames: Set<string>;
    allTabs: Set<string>;
    templateNames: Set<string>;
    optionListNames: Set<string>;
  },
): PlannedTemplate[] {
  const { keyNames, inventoryType, repositoryNames, environmentNames, viewNames, allTabs, templateNames } = n;
  const sourceNames = {
    inventory: new Set(inventoryType.keys()),
    option_list: n.optionListNames,
    key: keyNames,
  };
  const sourceLists = { inventory: 'inventories', option_list: 'option_lists', key: 'keys' } as const;
  const templateType = new Map(b.templates.map((t) => [t.name, t.type]));
  const uniqueTemplate = uniqueNames('templates');
  const templates = b.templates.map((t, i): PlannedTemplate => {
    const at = `templates[${i}]`;
    uniqueTemplate(i, t.name);
    if (Array.isArray(t.roles) && t.roles.length > 0)
      throw invalid(`${at}.roles`, 'template roles cannot be restored here; remove them from the backup');
    const environment = t.environment ?? 'Empty';
    const view = t.view != null && allTabs.has(t.view) ? null : t.view;
    assertRef(`${at}.inventory`, 'inventory', 'inventories', new Set(inventoryType.keys()), t.inventory);
    assertRef(`${at}.repository`, 'repository', 'repositories', repositoryNames, t.repository);
    assertRef(`${at}.environment`, 'environment', 'environments', environmentNames, environment);
    assertRef(`${at}.view`, 'view', 'views', viewNames, view);
    assertRef(`${at}.build_template`, 'template', 'templates', templateNames, t.build_template);

    const vault = planVault(t, at, keyNames);

    const input = checkAs(
      templateInput,
      {
        name: t.name,
        description: t.description,
        type: t.type,
        app: t.app,
        playbook: t.playbook,
        inventory_id: refId(t.inventory),
        repository_id: refId(t.repository),
        environment_id: REF,
        view_id: refId(view),
        build_template_id: refId(t.build_template),
        start_version: t.start_version,
        autorun: t.autorun,
        suppress_success_alerts: t.suppress_success_alerts,
        arguments: t.arguments,
        allow_override_args_in_task: t.allow_override_args_in_task,
        allow_override_branch_in_task: t.allow_override_branch_in_task,
        allow_parallel_tasks: t.allow_parallel_tasks,
        git_branch: t.git_branch,
        // An options source's named inventory, option list or key must be in the backup (an id stands for it).
        survey_vars: surveyById(t.survey_vars, (kind, name) => {
          assertRef(`${at}.survey_vars`, kind.replace('_', ' '), sourceLists[kind], sourceNames[kind], name);
          return REF;
        }),
        task_params: t.task_params,
        runner_tag: t.runner_tag,
        // The vault's name and script are checked as the template API checks them.
        vaults: vault
          ? [
              vault.script
                ? { name: vault.name, type: 'script', script: vault.script }
                : { name: vault.name, type: 'password', vault_key_id: REF },
            ]
          : [],
      },
      at,
    );
    if (t.inventory) {
      const allowed = inventoryTypesForApp[input.app];
      const type = inventoryType.get(t.inventory) ?? '';
      if (allowed && !allowed.includes(type))
        throw invalid(
          `${at}.inventory`,
          `the ${input.app} app needs an inventory of type ${allowed.join(', ')}; ${JSON.stringify(t.inventory)} is ${type}`,
        );
    }
    if (input.type === 'deploy' && t.build_template) {
      if (t.build_template === t.name || templateType.get(t.build_template) !== 'build')
        throw invalid(`${at}.build_template`, `${JSON.stringify(t.build_template)} is not a build template`);
    }
    if (t.cron && !b.schedules) {
      const error = cronError(t.cron, 'cron');
      if (error) throw invalid(`${at}.cron`, errorMessage(error));
    }
    return {
      name: input.name,
      description: input.description,
      type: input.type,
      app: input.app,
      playbook: input.playbook,
      inventory: t.inventory,
      repository: t.repository,
      environment,
      vault_key: vault?.key ?? null,
      vault_name: input.vault_name,
      vault_script: input.vault_script,
      view,
      // As the template API stores them: only a deploy follows a build, only a build has a start version.
      build_template: input.type === 'deploy' ? t.build_template : null,
      start_version: input.type === 'build' ? input.start_version : null,
      autorun: input.type === 'deploy' && input.autorun,
      suppress_success_alerts: input.suppress_success_alerts,
      arguments: input.arguments,
      allow_override_args_in_task: input.allow_override_args_in_task,
      allow_override_branch_in_task: input.allow_override_branch_in_task,
      allow_parallel_tasks: input.allow_parallel_tasks,
      git_branch: input.git_branch,
      survey_vars: JSON.stringify(t.survey_vars),
      task_params: JSON.stringify(t.task_params),
      runner_tag: input.runner_tag,
    };
  });
  return templates;
}

/** Checks the backup's schedules (an old backup's template crons stand for them). */
export function planSchedules(
  b: ProjectBackupInput,
  n: {
    inventoryNames: Set<string>;
    templateNames: Set<string>;
    repositoryNames: Set<string>;
    workflowNames: Set<string>;
  },
): RestorePlan['schedules'] {
  const { inventoryNames, templateNames, repositoryNames, workflowNames } = n;
  // Old backups have no schedules list: each template's cron was its schedule.
  const scheduleList =
    b.schedules ??
    b.templates.flatMap((t) =>
      t.cron
        ? [
            {
              name: '',
              template: t.name,
              workflow: null,
              cron_format: t.cron,
              active: true,
              checkable_repository: null,
            },
          ]
        : [],
    );
  const schedules = scheduleList.map((s, i) => {
    const at = `schedules[${i}]`;
    const raw = s as Record<string, unknown>;
    const {
      inventory_name,
      inventory_id: _stale,
      ...params
    } = isRecord(raw.task_params) ? raw.task_params : {};
    const inventory = typeof inventory_name === 'string' && inventory_name ? inventory_name : null;
    assertRef(`${at}.task_params.inventory_name`, 'inventory', 'inventories', inventoryNames, inventory);
    assertRef(`${at}.template`, 'template', 'templates', templateNames, s.template);
    assertRef(`${at}.workflow`, 'workflow', 'workflows', workflowNames, s.workflow);
    assertRef(
      `${at}.checkable_repository`,
      'repository',
      'repositories',
      repositoryNames,
      s.checkable_repository,
    );
    const once = raw.type === 'run_at';
    const input = checkAs(
      scheduleInput,
      {
        template_id: s.workflow ? 0 : REF,
        workflow_id: refId(s.workflow),
        type: once ? 'run_at' : '',
        cron_format: s.cron_format,
        run_at: once ? raw.run_at : null,
        delete_after_run: once ? raw.delete_after_run : false,
        repository_id: refId(s.checkable_repository),
        name: s.name,
        active: s.active,
        task_params: { ...params, inventory_id: refId(inventory) },
      },
      at,
    );
    if (!once) {
      const error = cronError(input.cron_format);
      if (error) throw invalid(`${at}.cron_format`, errorMessage(error));
    }
    const runAt = once ? input.run_at : null;
    return {
      name: input.name,
      template: s.workflow ? null : s.template,
      workflow: s.workflow,
      type: input.type,
      cron_format: once ? '' : input.cron_format,
      run_at: runAt,
      delete_after_run: once && input.delete_after_run,
      // A run-once schedule whose time has passed comes back disabled, so a restore never runs it.
      active: input.active && (!runAt || Date.parse(runAt) > Date.now()),
      repository: once ? null : s.checkable_repository,
      task_params: defaultParamsText(input.task_params && { ...input.task_params, inventory_id: null }),
      inventory,
    };
  });
  return schedules;
}
