import { type ProjectBackup, templateVaultsOf } from '@signalbox/contracts';
import type { Db } from '../../db';
import { parseJson, toBool } from '../../db/values';
import { randomAlnum } from '../../lib/crypto';
import { entriesOf } from '../option-lists';
import { currentVersionsOf } from '../terraform-states';
import { listViewRows } from '../views';
import { surveyByName } from './survey-sources';

/** The peer's rule for names that occur twice: the later ones get ` - <random10>` so references stay unique. */
export const uniqueSuffix = (name: string) => `${name} - ${randomAlnum(10)}`;

/**
 * Gives every row of a list a name no earlier row has (the first keeps its name) and returns id -> name.
 * References are then written with these names.
 */
function uniqueNames<T extends { id: number }>(rows: T[], nameOf: (row: T) => string): Map<number, string> {
  const taken = new Set<string>();
  const names = new Map<number, string>();
  for (const row of rows) {
    let name = nameOf(row);
    while (taken.has(name)) name = uniqueSuffix(nameOf(row));
    taken.add(name);
    names.set(row.id, name);
  }
  return names;
}

const nameOf = (names: Map<number, string>, id: number | null) =>
  id == null ? null : (names.get(id) ?? null);

/** The name uniqueNames gave a row it was handed (every row read for the backup has one). */
function nameFor(names: Map<number, string>, id: number): string {
  const name = names.get(id);
  if (name === undefined) throw new Error(`backup: row ${id} has no name`);
  return name;
}

/**
 * Reads a whole project into the backup format: objects refer to each other by name; no secret is included in plain
 * text (the built-in backend's Terraform states come sealed with the server's secret key, as stored).
 */
export async function readBackup(db: Db, projectId: number): Promise<ProjectBackup> {
  const project = await db
    .selectFrom('project')
    .selectAll()
    .where('id', '=', projectId)
    .executeTakeFirstOrThrow();
  const keys = (
    await db.selectFrom('access_key').selectAll().where('project_id', '=', projectId).orderBy('id').execute()
  ).filter((k) => k.owner === '');
  const repositories = await db
    .selectFrom('repository')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
  const inventories = await db
    .selectFrom('inventory')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
  const environments = await db
    .selectFrom('environment')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
  const templates = await db
    .selectFrom('template')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
  const schedules = await db
    .selectFrom('schedule')
    .selectAll()
    .where('project_id', '=', projectId)
    // A template's drift check schedule is part of its settings (task_params), restored from them.
    .where('type', '<>', 'drift')
    .orderBy('id')
    .execute();
  const views = await listViewRows(db, projectId);
  const optionLists = await db
    .selectFrom('option_list')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
  const integrations = await db
    .selectFrom('integration')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
  const workflows = await db
    .selectFrom('workflow')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
  const usernames = new Map(
    (await db.selectFrom('user').select(['id', 'username']).execute()).map((u) => [u.id, u.username]),
  );
  const integrationIds = integrations.map((i) => i.id);
  const aliases = await db
    .selectFrom('integration_alias')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
  const matchers = integrationIds.length
    ? await db
        .selectFrom('integration_matcher')
        .selectAll()
        .where('integration_id', 'in', integrationIds)
        .orderBy('id')
        .execute()
    : [];
  const extractValues = integrationIds.length
    ? await db
        .selectFrom('integration_extract_value')
        .selectAll()
        .where('integration_id', 'in', integrationIds)
        .orderBy('id')
        .execute()
    : [];

  const keyNames = uniqueNames(keys, (k) => k.name);
  const repositoryNames = uniqueNames(repositories, (r) => r.name);
  const inventoryNames = uniqueNames(inventories, (i) => i.name);
  const environmentNames = uniqueNames(environments, (e) => e.name);
  const templateNames = uniqueNames(templates, (t) => t.name);
  const viewNames = uniqueNames(views, (v) => v.title);
  const integrationNames = uniqueNames(integrations, (i) => i.name);
  const optionListNames = uniqueNames(optionLists, (l) => l.name);
  const workflowNames = uniqueNames(workflows, (w) => w.name);
  /**
   * What a schedule or integration starts: its template, or its workflow (by name; `template` then null); null when
   * neither is left. Only one that starts a workflow has a `workflow`, so the others read as the peer writes them.
   */
  const startsOf = (row: { template_id: number; workflow_id?: number | null }) =>
    row.workflow_id
      ? workflowNames.has(row.workflow_id)
        ? { template: null, workflow: nameFor(workflowNames, row.workflow_id) }
        : null
      : templateNames.has(row.template_id)
        ? { template: nameFor(templateNames, row.template_id) }
        : null;
  const sourceNames = { inventory: inventoryNames, option_list: optionListNames, key: keyNames };

  /** Stored task parameters name their inventory by id; a backup names it. */
  const portableParams = (text: string) => {
    const { inventory_id, ...params } = parseJson<Record<string, unknown>>(text, {});
    const inventory = typeof inventory_id === 'number' ? nameOf(inventoryNames, inventory_id) : null;
    return inventory ? { ...params, inventory_name: inventory } : params;
  };

  return {
    meta: {
      name: project.name,
      alert: toBool(project.alert),
      alert_chat: project.alert_chat,
      max_parallel_tasks: project.max_parallel_tasks,
      task_retention_days: project.task_retention_days,
      agent_runs_need_approval: toBool(project.agent_runs_need_approval),
      type: project.type,
    },
    templates: templates.map((t) => ({
      name: nameFor(templateNames, t.id),
      description: t.description,
      type: t.type,
      app: t.app,
      playbook: t.playbook,
      arguments: t.arguments,
      inventory: nameOf(inventoryNames, t.inventory_id),
      repository: nameOf(repositoryNames, t.repository_id),
      environment: nameOf(environmentNames, t.environment_id),
      view: nameOf(viewNames, t.view_id),
      build_template: nameOf(templateNames, t.build_template_id),
      vault_key: nameOf(keyNames, t.vault_key_id),
      vaults: templateVaultsOf(t).map((v) => ({
        name: v.name,
        type: v.type,
        vault_key: nameOf(keyNames, v.vault_key_id),
        script: v.script || null,
      })),
      start_version: t.start_version,
      autorun: toBool(t.autorun),
      suppress_success_alerts: toBool(t.suppress_success_alerts),
      allow_override_args_in_task: toBool(t.allow_override_args_in_task),
      allow_override_branch_in_task: toBool(t.allow_override_branch_in_task),
      allow_parallel_tasks: toBool(t.allow_parallel_tasks),
      git_branch: t.git_branch,
      survey_vars: surveyByName(parseJson<unknown[]>(t.survey_vars, []), (kind, id) =>
        nameOf(sourceNames[kind], id),
      ),
      task_params: parseJson<Record<string, unknown>>(t.task_params, {}),
      cron: schedules.find((s) => s.template_id === t.id && s.type !== 'run_at')?.cron_format ?? null,
      runner_tag: t.runner_tag ?? null,
    })),
    repositories: repositories.map((r) => ({
      name: nameFor(repositoryNames, r.id),
      git_url: r.git_url,
      git_branch: r.git_branch,
      ssh_key: nameOf(keyNames, r.ssh_key_id),
    })),
    keys: keys.map((k) => ({ name: nameFor(keyNames, k.id), type: k.type, owner: k.owner })),
    views: views.map((v) => ({ title: nameFor(viewNames, v.id), position: v.position })),
    inventories: inventories.map((i) => ({
      name: nameFor(inventoryNames, i.id),
      type: i.type,
      inventory: i.inventory,
      ssh_key: nameOf(keyNames, i.ssh_key_id),
      become_key: nameOf(keyNames, i.become_key_id),
      repository: nameOf(repositoryNames, i.repository_id),
      runner_tag: i.runner_tag ?? null,
    })),
    environments: environments.map((e) => ({
      name: nameFor(environmentNames, e.id),
      json: e.json,
      env: e.env,
    })),
    integrations: integrations.flatMap((i) => {
      const starts = startsOf(i);
      if (!starts) return [];
      return {
        name: nameFor(integrationNames, i.id),
        ...starts,
        auth_method: i.auth_method,
        auth_header: i.auth_header,
        auth_secret: nameOf(keyNames, i.auth_secret_id),
        searchable: toBool(i.searchable),
        task_params: portableParams(i.task_params),
        aliases: aliases.filter((a) => a.integration_id === i.id).map((a) => a.alias),
        matchers: matchers
          .filter((m) => m.integration_id === i.id)
          .map(({ name, match_type, body_data_type, key, method, value }) => ({
            name,
            match_type,
            body_data_type,
            key,
            method,
            value,
          })),
        extract_values: extractValues
          .filter((v) => v.integration_id === i.id)
          .map(({ name, value_source, body_data_type, key, variable, variable_type }) => ({
            name,
            value_source,
            body_data_type,
            key,
            variable,
            variable_type,
          })),
      };
    }),
    integration_aliases: aliases.filter((a) => a.integration_id == null).map((a) => a.alias),
    option_lists: optionLists.map((l) => ({ name: nameFor(optionListNames, l.id), options: entriesOf(l) })),
    terraform_states: await currentVersionsOf(db, projectId),
    workflows: workflows.map((w) =>
      portableWorkflow(
        { ...w, name: nameFor(workflowNames, w.id) },
        {
          template: (id) => nameOf(templateNames, id),
          inventory: (id) => nameOf(inventoryNames, id),
          environment: (id) => nameOf(environmentNames, id),
        },
        usernames,
      ),
    ),
    schedules: schedules.flatMap((s) => {
      const starts = startsOf(s);
      if (!starts) return [];
      return {
        name: s.name,
        ...starts,
        cron_format: s.cron_format,
        active: toBool(s.active),
        checkable_repository: nameOf(repositoryNames, s.repository_id),
        type: s.type === 'run_at' ? ('run_at' as const) : ('' as const),
        run_at: s.run_at,
        delete_after_run: toBool(s.delete_after_run),
        task_params: portableParams(s.task_params ?? '{}'),
      };
    }),
  };
}

/** A fixed id of a value source; null when the source is not fixed or its value is no id. */
function fixedId(source: unknown): number | null {
  if (!source || typeof source !== 'object') return null;
  const { from, value } = source as { from?: unknown; value?: unknown };
  if (from !== 'fixed') return null;
  const id = typeof value === 'string' && /^\d{1,9}$/.test(value.trim()) ? Number(value) : value;
  return typeof id === 'number' && Number.isInteger(id) ? id : null;
}

type NameOf = (id: number) => string | null;

/**
 * A workflow as a backup keeps it: its templates, and the inventories and environments its nodes fix, by name (the
 * fixed id stays as the old project's, the name is what a restore reads); its named approvers by username.
 */
function portableWorkflow(
  w: { name: string; description: string; definition: string },
  names: { template: NameOf; inventory: NameOf; environment: NameOf },
  usernames: Map<number, string>,
) {
  const d = parseJson<{ survey_vars?: unknown[]; nodes?: Record<string, unknown>[]; edges?: unknown[] }>(
    w.definition,
    {},
  );
  const nodes = (d.nodes ?? []).map((node) => {
    if (node.type === 'template') {
      const { template_id, ...rest } = node;
      const inventory = fixedId(node.inventory_id);
      const environment = fixedId(node.environment_id);
      return {
        ...rest,
        template: names.template(Number(template_id)),
        ...(inventory === null ? {} : { inventory: names.inventory(inventory) }),
        ...(environment === null ? {} : { environment: names.environment(environment) }),
      };
    }
    if (node.type === 'approval') {
      const { user_ids, ...rest } = node;
      const ids = Array.isArray(user_ids) ? user_ids : [];
      return { ...rest, users: ids.flatMap((id) => usernames.get(Number(id)) ?? []) };
    }
    return node;
  });
  return {
    name: w.name,
    description: w.description,
    survey_vars: d.survey_vars ?? [],
    nodes,
    edges: d.edges ?? [],
  };
}
