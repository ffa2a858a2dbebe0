import { coded, type Project } from '@signalbox/contracts';
import type { InsertObject } from 'kysely';
import type { UserRow } from '../../access/principals.store';
import { namedKind, recordProjectEvent } from '../../audit/audit.store';
import type { Database, Db } from '../../db';
import { updateRows } from '../../db/rows';
import { fromBool, insertReturningId, parseJson } from '../../db/values';
import type { Deps } from '../../deps';
import { randomAlnum } from '../../lib/crypto';
import { forbidden, found } from '../../lib/errors';
import { insertSecretRow } from '../environments';
import { insertAlias, insertExtractValue, insertMatcher } from '../integrations';
import { canCreateProject, findProject, insertProject, toProject } from '../projects';
import { driftScheduleRow } from '../templates';
import { importStates } from '../terraform-states';
import { definitionText } from '../workflows';
import { checkBackup, type RestorePlan } from './backup-check';
import { invalid } from './backup-parse';
import { surveyById } from './survey-sources';

const fold = (name: string) => name.trim().toLowerCase();

/** How long a restore writes before it lets other requests in (see `pacer`). */
const WRITE_SLICE_MS = 10;

/**
 * Lets the event loop serve other requests every WRITE_SLICE_MS of writing. On SQLite every statement runs on this
 * thread and returns at once, so a backup of many rows would otherwise hold the whole server for seconds. The
 * writes stay in their one transaction: a restore that fails still leaves nothing behind.
 */
function pacer() {
  let sliceStart = performance.now();
  return async () => {
    if (performance.now() - sliceStart < WRITE_SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    sliceStart = performance.now();
  };
}

/**
 * Names within one kind are unique in a project, but a backup (one from the peer, say) may repeat one: the
 * repeats are restored as `name (2)`, `name (3)`… rather than refused. References in the backup still resolve by
 * the names it wrote, as before.
 */
function distinctNames(...taken: string[]) {
  const used = new Set(taken.map(fold));
  return (name: string) => {
    let candidate = name;
    for (let n = 2; used.has(fold(candidate)); n++) candidate = `${name} (${n})`;
    used.add(fold(candidate));
    return candidate;
  };
}

/**
 * Writes a checked backup as a new project inside `db` (a transaction); returns the new project's id. Every
 * reference of the plan names an object written before it (checkBackup made sure), so a lookup that finds nothing
 * is a bug, not a bad backup: it throws, and the transaction leaves nothing behind.
 */
async function writePlan(
  db: Db,
  deps: Pick<Deps, 'dialect' | 'box' | 'config'>,
  plan: RestorePlan,
  ownerId: number,
): Promise<number> {
  const { projectId, noneKeyId, emptyEnvironmentId } = await insertProject(
    db,
    deps.dialect,
    plan.meta,
    ownerId,
  );
  const pace = pacer();
  const insert = async <T extends keyof Database & string>(
    into: Db,
    dialect: Deps['dialect'],
    table: T,
    values: InsertObject<Database, T>,
  ) => {
    await pace();
    return insertReturningId(into, dialect, table, values);
  };
  /** Inserts a restored row and remembers its id under its name, for the rows restored after it to refer to. */
  const insertNamed = async <T extends keyof Database & string>(
    map: Map<string, number>,
    name: string,
    table: T,
    values: InsertObject<Database, T>,
  ) => map.set(name, await insert(db, deps.dialect, table, values));
  // Every new project starts with a `None` key and an `Empty` environment; a backup's own take their place.
  const ids = {
    key: new Map<string, number>([['None', noneKeyId]]),
    repository: new Map<string, number>(),
    inventory: new Map<string, number>(),
    environment: new Map<string, number>([['Empty', emptyEnvironmentId]]),
    view: new Map<string, number>(),
    template: new Map<string, number>(),
    option_list: new Map<string, number>(),
    workflow: new Map<string, number>(),
  };
  const idOf = (kind: keyof typeof ids, name: string) => {
    const id = ids[kind].get(name);
    if (id === undefined) throw new Error(`restore: no ${kind} named ${name}`);
    return id;
  };
  const optionalIdOf = (kind: keyof typeof ids, name: string | null) =>
    name == null ? null : idOf(kind, name);
  const name = {
    key: distinctNames('None'),
    repository: distinctNames(),
    inventory: distinctNames(),
    environment: distinctNames('Empty'),
    view: distinctNames(),
  };
  const seal = (secret: string | null) => (secret === null ? null : deps.box.seal(secret));

  for (const k of plan.keys) {
    if (k.name === 'None') {
      if (k.type !== 'none')
        await updateRows(db, 'access_key', { id: noneKeyId }, { type: k.type, secret: seal(k.secret) });
      continue;
    }
    await insertNamed(ids.key, k.name, 'access_key', {
      project_id: projectId,
      name: name.key(k.name),
      type: k.type,
      secret: seal(k.secret),
      owner: '',
      environment_id: null,
    });
  }

  for (const r of plan.repositories) {
    await insertNamed(ids.repository, r.name, 'repository', {
      project_id: projectId,
      name: name.repository(r.name),
      git_url: r.git_url,
      git_branch: r.git_branch,
      ssh_key_id: idOf('key', r.ssh_key),
    });
  }

  for (const i of plan.inventories) {
    await insertNamed(ids.inventory, i.name, 'inventory', {
      project_id: projectId,
      name: name.inventory(i.name),
      type: i.type,
      inventory: i.inventory,
      // A workspace inventory runs with the project's None key, as the inventory API stores it.
      ssh_key_id: i.ssh_key === null ? noneKeyId : idOf('key', i.ssh_key),
      become_key_id: optionalIdOf('key', i.become_key),
      repository_id: optionalIdOf('repository', i.repository),
      runner_tag: i.runner_tag,
    });
  }

  for (const e of plan.environments) {
    let environmentId: number;
    if (e.name === 'Empty') {
      environmentId = emptyEnvironmentId;
      await updateRows(db, 'environment', { id: environmentId }, { json: e.json, env: e.env });
    } else {
      environmentId = await insert(db, deps.dialect, 'environment', {
        project_id: projectId,
        name: name.environment(e.name),
        json: e.json,
        env: e.env,
      });
      ids.environment.set(e.name, environmentId);
    }
    for (const s of e.secrets) {
      await pace();
      await insertSecretRow(db, deps.dialect, {
        project_id: projectId,
        environment_id: environmentId,
        name: s.name,
        owner: s.type === 'var' ? 'variable' : 'environment',
        secret: deps.box.seal(s.secret),
      });
    }
  }

  for (const v of plan.views) {
    await insertNamed(ids.view, v.title, 'view', {
      project_id: projectId,
      title: name.view(v.title),
      position: v.position,
    });
  }

  for (const l of plan.option_lists) {
    await insertNamed(ids.option_list, l.name, 'option_list', {
      project_id: projectId,
      name: l.name,
      options: JSON.stringify(l.options),
    });
  }

  await importStates(db, deps, projectId, ownerId, plan.terraform_states, (i, reason) =>
    invalid(
      `terraform_states[${i}]`,
      reason === 'key'
        ? "the state is sealed with another server's secret key: restore it on that server, or remove terraform_states from the backup"
        : 'the sealed value is not a Terraform state',
    ),
  );

  for (const t of plan.templates) {
    await insertNamed(ids.template, t.name, 'template', {
      project_id: projectId,
      name: t.name,
      description: t.description,
      type: t.type,
      app: t.app,
      playbook: t.playbook,
      inventory_id: optionalIdOf('inventory', t.inventory),
      repository_id: optionalIdOf('repository', t.repository),
      environment_id: idOf('environment', t.environment),
      vault_key_id: optionalIdOf('key', t.vault_key),
      vault_name: t.vault_name,
      vault_script: t.vault_script,
      view_id: optionalIdOf('view', t.view),
      build_template_id: null,
      start_version: t.start_version,
      autorun: fromBool(t.autorun),
      suppress_success_alerts: fromBool(t.suppress_success_alerts),
      arguments: t.arguments,
      allow_override_args_in_task: fromBool(t.allow_override_args_in_task),
      allow_override_branch_in_task: fromBool(t.allow_override_branch_in_task),
      allow_parallel_tasks: fromBool(t.allow_parallel_tasks),
      git_branch: t.git_branch,
      // A survey's options sources named their inventory, option list or key: the restored ones' ids.
      survey_vars: JSON.stringify(surveyById(parseJson<unknown[]>(t.survey_vars, []), idOf)),
      task_params: t.task_params,
      runner_tag: t.runner_tag,
    });
  }
  // Build templates are linked once every template exists, whatever their order in the backup.
  for (const t of plan.templates) {
    if (!t.build_template) continue;
    await pace();
    await updateRows(
      db,
      'template',
      { id: idOf('template', t.name) },
      { build_template_id: idOf('template', t.build_template) },
    );
  }

  // Workflows once every template exists: their template nodes name templates. A named approver counts only as a
  // member of the restored project; an approval node left with nobody falls back to the project's owners.
  const members = new Map(
    (
      await db
        .selectFrom('project_user')
        .innerJoin('user', 'user.id', 'project_user.user_id')
        .select(['user.id', 'user.username'])
        .where('project_user.project_id', '=', projectId)
        .execute()
    ).map((u) => [u.username, u.id]),
  );
  for (const w of plan.workflows) {
    const nodes = w.nodes.map((node) => {
      if (node.type === 'template') {
        const { template, inventory, environment, ...rest } = node;
        // A fixed inventory or environment names the restored one.
        const fixed = (kind: 'inventory' | 'environment', name: unknown) =>
          typeof name === 'string' ? { from: 'fixed', value: idOf(kind, name) } : null;
        return {
          ...rest,
          template_id: idOf('template', String(template)),
          ...((rest.inventory_id as { from?: string } | null)?.from === 'fixed'
            ? { inventory_id: fixed('inventory', inventory) }
            : {}),
          ...((rest.environment_id as { from?: string } | null)?.from === 'fixed'
            ? { environment_id: fixed('environment', environment) }
            : {}),
        };
      }
      if (node.type === 'approval') {
        const { users, ...rest } = node;
        const userIds = (Array.isArray(users) ? users : []).flatMap((u) => members.get(String(u)) ?? []);
        const roles = Array.isArray(rest.roles) ? rest.roles : [];
        return { ...rest, user_ids: userIds, roles: roles.length || userIds.length ? roles : ['owner'] };
      }
      return node;
    });
    await insertNamed(ids.workflow, w.name, 'workflow', {
      project_id: projectId,
      name: w.name,
      description: w.description,
      definition: definitionText({
        survey_vars: w.survey_vars,
        nodes: nodes as never,
        edges: w.edges as never,
      } as never),
      created: new Date().toISOString(),
      updated: new Date().toISOString(),
    });
  }

  // Aliases are unique across the server: one still used (by the original project, say) gets a new one.
  const aliasFor = async (alias: string) => {
    const taken = await db
      .selectFrom('integration_alias')
      .select('id')
      .where('alias', '=', alias)
      .executeTakeFirst();
    return taken ? randomAlnum(32) : alias;
  };
  for (const integration of plan.integrations) {
    const inventoryId = optionalIdOf('inventory', integration.inventory);
    const integrationId = await insert(db, deps.dialect, 'integration', {
      project_id: projectId,
      name: integration.name,
      template_id: integration.workflow ? 0 : idOf('template', String(integration.template)),
      workflow_id: integration.workflow ? idOf('workflow', integration.workflow) : null,
      auth_method: integration.auth_method,
      auth_header: integration.auth_header,
      auth_secret_id: optionalIdOf('key', integration.auth_secret),
      searchable: fromBool(integration.searchable),
      task_params: JSON.stringify(
        inventoryId ? { ...integration.task_params, inventory_id: inventoryId } : integration.task_params,
      ),
    });
    for (const m of integration.matchers) {
      await pace();
      await insertMatcher(db, deps.dialect, integrationId, m);
    }
    for (const v of integration.extract_values) {
      await pace();
      await insertExtractValue(db, deps.dialect, integrationId, v);
    }
    for (const alias of integration.aliases) {
      await pace();
      await insertAlias(db, deps.dialect, projectId, integrationId, await aliasFor(alias));
    }
  }
  for (const alias of plan.integration_aliases) {
    await pace();
    await insertAlias(db, deps.dialect, projectId, null, await aliasFor(alias));
  }

  for (const s of plan.schedules) {
    await pace();
    const inventoryId = optionalIdOf('inventory', s.inventory);
    const params = JSON.parse(s.task_params) as Record<string, unknown>;
    await db
      .insertInto('schedule')
      .values({
        project_id: projectId,
        template_id: s.workflow ? 0 : idOf('template', String(s.template)),
        workflow_id: s.workflow ? idOf('workflow', s.workflow) : null,
        type: s.type,
        cron_format: s.cron_format,
        run_at: s.run_at,
        delete_after_run: fromBool(s.delete_after_run),
        repository_id: optionalIdOf('repository', s.repository),
        name: s.name,
        active: fromBool(s.active),
        last_commit_hash: null,
        task_params: JSON.stringify(inventoryId ? { ...params, inventory_id: inventoryId } : params),
      })
      .execute();
  }
  // Drift checks: each template's own schedule, from its settings.
  for (const t of plan.templates) {
    const row = driftScheduleRow({
      project_id: projectId,
      id: idOf('template', t.name),
      app: t.app,
      task_params: t.task_params,
    });
    if (!row) continue;
    await pace();
    await db.insertInto('schedule').values(row).execute();
  }
  return projectId;
}

/**
 * POST projects/restore: checks the whole backup first, then writes it as a NEW project owned by the caller in
 * one transaction (its audit event included), so a backup that fails half-way leaves nothing behind.
 */
export async function restoreProject(
  deps: Pick<Deps, 'config' | 'db' | 'dialect' | 'box' | 'log' | 'scheduler'>,
  user: UserRow,
  body: unknown,
): Promise<Project> {
  if (!canCreateProject(deps, user)) throw forbidden(coded('cannot_create_projects'));
  const plan = checkBackup(body);
  // As in the template API: only an administrator may set a vault password script.
  const scripted = plan.templates.find((t) => t.vault_script);
  if (scripted && user.admin !== 1)
    throw forbidden(coded('vault_script_admin_only_template', { template: scripted.name }));

  const projectId = await deps.db.transaction().execute(async (trx) => {
    const id = await writePlan(trx, deps, plan, user.id);
    await recordProjectEvent(
      trx,
      user,
      id,
      'project',
      id,
      `Project ${plan.meta.name} restored from a backup`,
      namedKind('project', 'restored', plan.meta.name),
    );
    return id;
  });
  if (plan.schedules.length > 0) {
    try {
      await deps.scheduler.refresh();
    } catch (err) {
      deps.log.error({ err }, 'schedule refresh after restore failed');
    }
  }
  return toProject(found(await findProject(deps.db, projectId), 'project'));
}
