import type { Project, ProjectBackupInput } from '@signalbox/contracts';
import type { InsertObject } from 'kysely';
import { recordProjectEvent } from '../../audit/audit.store';
import type { Database, Db } from '../../db';
import { updateRows } from '../../db/rows';
import { fromBool, insertReturningId } from '../../db/values';
import type { Deps } from '../../deps';
import { randomAlnum } from '../../lib/crypto';
import { forbidden, found } from '../../lib/errors';
import { insertAlias } from '../integrations/aliases.store';
import { insertExtractValue } from '../integrations/extract-values.store';
import { insertMatcher } from '../integrations/matchers.store';
import type { UserRow } from '../users/users.store';
import { checkBackup } from './backup-check';
import { canCreateProject, insertProject } from './projects.service';
import { findProject, toProject } from './projects.store';

/** An empty secret of the key's type: secrets are never in a backup, so restored keys must be filled in again. */
function emptySecret(deps: Pick<Deps, 'box'>, type: string) {
  if (type === 'ssh') return deps.box.seal(JSON.stringify({ login: '', passphrase: '', private_key: '' }));
  if (type === 'login_password') return deps.box.seal(JSON.stringify({ login: '', password: '' }));
  return null;
}

/** Writes the whole backup as a new project inside `db` (a transaction); returns the new project's id. */
async function writeBackup(
  db: Db,
  deps: Pick<Deps, 'dialect' | 'box'>,
  b: ProjectBackupInput,
  ownerId: number,
): Promise<number> {
  const { projectId, noneKeyId, emptyEnvironmentId } = await insertProject(db, deps.dialect, b.meta, ownerId);
  const insert = insertReturningId;
  /** Inserts a restored row and remembers its id under its name, for the rows restored after it to refer to. */
  const insertNamed = async <T extends keyof Database & string>(
    map: Map<string, number>,
    name: string,
    table: T,
    values: InsertObject<Database, T>,
  ) => map.set(name, await insert(db, deps.dialect, table, values));
  const ids = {
    key: new Map<string, number>(),
    repository: new Map<string, number>(),
    inventory: new Map<string, number>(),
    environment: new Map<string, number>(),
    view: new Map<string, number>(),
    template: new Map<string, number>(),
  };
  const idOf = (map: Map<string, number>, name: string | null) =>
    name == null ? null : (map.get(name) ?? null);
  /** The id of a template restored under that name: checkBackup made sure every reference names one. */
  const templateId = (name: string) => {
    const id = ids.template.get(name);
    if (id === undefined) throw new Error(`restore: no template named ${name}`);
    return id;
  };

  for (const e of b.environments) {
    // Every new project starts with an `Empty` environment and a `None` key; a backup's own take their place.
    if (e.name === 'Empty' && !ids.environment.has('Empty')) {
      await updateRows(db, 'environment', { id: emptyEnvironmentId }, { json: e.json, env: e.env });
      ids.environment.set(e.name, emptyEnvironmentId);
      continue;
    }
    await insertNamed(ids.environment, e.name, 'environment', {
      project_id: projectId,
      name: e.name,
      json: e.json,
      env: e.env,
    });
  }

  for (const v of b.views) {
    await insertNamed(ids.view, v.title, 'view', {
      project_id: projectId,
      title: v.title,
      position: v.position,
    });
  }

  for (const k of b.keys) {
    if (k.owner === 'environment' || k.owner === 'variable') continue;
    if (k.name === 'None' && !ids.key.has('None')) {
      if (k.type !== 'none') {
        await updateRows(
          db,
          'access_key',
          { id: noneKeyId },
          { type: k.type, secret: emptySecret(deps, k.type) },
        );
      }
      ids.key.set(k.name, noneKeyId);
      continue;
    }
    await insertNamed(ids.key, k.name, 'access_key', {
      project_id: projectId,
      name: k.name,
      type: k.type,
      secret: emptySecret(deps, k.type),
      owner: '',
      environment_id: null,
    });
  }

  for (const r of b.repositories) {
    await insertNamed(ids.repository, r.name, 'repository', {
      project_id: projectId,
      name: r.name,
      git_url: r.git_url,
      git_branch: r.git_branch,
      ssh_key_id: idOf(ids.key, r.ssh_key),
    });
  }

  for (const i of b.inventories) {
    await insertNamed(ids.inventory, i.name, 'inventory', {
      project_id: projectId,
      name: i.name,
      type: i.type,
      inventory: i.inventory,
      ssh_key_id: idOf(ids.key, i.ssh_key),
      become_key_id: idOf(ids.key, i.become_key),
      repository_id: idOf(ids.repository, i.repository),
    });
  }

  for (const t of b.templates) {
    const vaultKey =
      t.vault_key ?? t.vaults.find((v) => v.vault_key && (v.type ?? 'password') === 'password')?.vault_key;
    await insertNamed(ids.template, t.name, 'template', {
      project_id: projectId,
      name: t.name,
      description: t.description,
      type: t.type,
      app: t.app,
      playbook: t.playbook,
      inventory_id: idOf(ids.inventory, t.inventory),
      repository_id: idOf(ids.repository, t.repository),
      environment_id: idOf(ids.environment, t.environment),
      vault_key_id: idOf(ids.key, vaultKey ?? null),
      view_id: idOf(ids.view, t.view),
      build_template_id: null,
      start_version: t.start_version,
      autorun: fromBool(t.autorun),
      suppress_success_alerts: fromBool(t.suppress_success_alerts),
      arguments: t.arguments,
      allow_override_args_in_task: fromBool(t.allow_override_args_in_task),
      allow_override_branch_in_task: fromBool(t.allow_override_branch_in_task),
      allow_parallel_tasks: fromBool(t.allow_parallel_tasks),
      git_branch: t.git_branch,
      survey_vars: JSON.stringify(t.survey_vars),
      task_params: JSON.stringify(t.task_params),
    });
  }
  // Build templates are linked once every template exists, whatever their order in the backup.
  for (const t of b.templates) {
    if (!t.build_template) continue;
    const buildTemplateId = idOf(ids.template, t.build_template);
    await updateRows(db, 'template', { id: templateId(t.name) }, { build_template_id: buildTemplateId });
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
  for (const integration of b.integrations) {
    const { inventory_name, inventory_id: _ignored, ...params } = integration.task_params;
    const inventoryId = typeof inventory_name === 'string' ? idOf(ids.inventory, inventory_name) : null;
    const integrationId = await insert(db, deps.dialect, 'integration', {
      project_id: projectId,
      name: integration.name,
      template_id: templateId(integration.template),
      auth_method: integration.auth_method,
      auth_header: integration.auth_header,
      auth_secret_id: idOf(ids.key, integration.auth_secret),
      searchable: fromBool(integration.searchable),
      task_params: JSON.stringify(inventoryId ? { ...params, inventory_id: inventoryId } : params),
    });
    for (const m of integration.matchers) await insertMatcher(db, deps.dialect, integrationId, m);
    for (const v of integration.extract_values) await insertExtractValue(db, deps.dialect, integrationId, v);
    for (const alias of integration.aliases)
      await insertAlias(db, deps.dialect, projectId, integrationId, await aliasFor(alias));
  }
  for (const alias of b.integration_aliases)
    await insertAlias(db, deps.dialect, projectId, null, await aliasFor(alias));

  // Old backups have no schedules list: each template's cron was its schedule.
  const schedules =
    b.schedules ??
    b.templates.flatMap((t) =>
      t.cron
        ? [
            {
              name: '',
              template: t.name,
              cron_format: t.cron,
              active: true,
              checkable_repository: null,
              type: '' as const,
              run_at: null,
              delete_after_run: false,
            },
          ]
        : [],
    );
  for (const s of schedules) {
    // A run-once schedule keeps its time; one whose time has passed comes back disabled, so a restore never runs it.
    const runAt = s.type === 'run_at' && s.run_at ? new Date(s.run_at).toISOString() : null;
    await db
      .insertInto('schedule')
      .values({
        project_id: projectId,
        template_id: templateId(s.template),
        type: runAt ? 'run_at' : '',
        cron_format: runAt ? '' : s.cron_format,
        run_at: runAt,
        delete_after_run: fromBool(!!runAt && s.delete_after_run),
        repository_id: runAt ? null : idOf(ids.repository, s.checkable_repository),
        name: s.name,
        active: fromBool(s.active && (!runAt || new Date(runAt).getTime() > Date.now())),
        last_commit_hash: null,
      })
      .execute();
  }
  return projectId;
}

/**
 * POST projects/restore: validates the whole backup first, then writes it as a NEW project owned by the caller in
 * one transaction, so a backup that fails half-way leaves nothing behind.
 */
export async function restoreProject(
  deps: Pick<Deps, 'config' | 'db' | 'dialect' | 'box' | 'log' | 'scheduler'>,
  user: UserRow,
  body: unknown,
): Promise<Project> {
  if (!canCreateProject(deps, user)) throw forbidden('You are not allowed to create projects');
  const backup = checkBackup(body);

  const projectId = await deps.db.transaction().execute((trx) => writeBackup(trx, deps, backup, user.id));
  await recordProjectEvent(
    deps.db,
    user,
    projectId,
    'project',
    projectId,
    `Project ${backup.meta.name} restored from a backup`,
  );
  if ((backup.schedules?.length ?? 0) > 0 || backup.templates.some((t) => t.cron)) {
    try {
      await deps.scheduler.refresh();
    } catch (err) {
      deps.log.error({ err }, 'schedule refresh after restore failed');
    }
  }
  return toProject(found(await findProject(deps.db, projectId), 'Project'));
}
