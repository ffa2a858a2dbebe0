import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_SECRET, fillProject, projectObjectTables } from '../../../test/support/backup-fixture';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  createProjectActors,
  expectCodesByActor,
  memberCodes,
  type ProjectActors,
} from '../../../test/support/project-actors';
import { ansibleBody, templateFixtures } from '../../../test/support/template-fixtures';

const projectTables = [...projectObjectTables, 'integration', 'integration_alias'] as const;

/**
 * Rows of a project with ids (own and foreign), secrets and row revisions (how often a row was written) removed,
 * sorted: equal for an equal project.
 */
async function snapshot(h: Harness, projectId: number, { aliases = true } = {}) {
  const db = h.deps.db;
  const strip = (row: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(row).filter(
        ([k]) =>
          k !== 'id' &&
          !k.endsWith('_id') &&
          k !== 'secret' &&
          k !== 'last_tick' &&
          k !== 'rev' &&
          (aliases || k !== 'alias'),
      ),
    );
  // Stored task parameters name an inventory by id: compare them without it (the backup test checks the name).
  const params = (row: Record<string, unknown>) => {
    if (typeof row.task_params !== 'string') return row;
    const { inventory_id, ...rest } = JSON.parse(row.task_params) as Record<string, unknown>;
    return { ...row, task_params: rest, has_inventory: inventory_id != null };
  };
  const sorted = (rows: Record<string, unknown>[]) =>
    rows
      .map(strip)
      .map(params)
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  const out: Record<string, unknown> = {};
  for (const table of projectTables) {
    out[table] = sorted(await db.selectFrom(table).selectAll().where('project_id', '=', projectId).execute());
  }
  const integrations = db.selectFrom('integration').select('id').where('project_id', '=', projectId);
  out.integration_matcher = sorted(
    await db
      .selectFrom('integration_matcher')
      .selectAll()
      .where('integration_id', 'in', integrations)
      .execute(),
  );
  out.integration_extract_value = sorted(
    await db
      .selectFrom('integration_extract_value')
      .selectAll()
      .where('integration_id', 'in', integrations)
      .execute(),
  );
  const project = await db
    .selectFrom('project')
    .selectAll()
    .where('id', '=', projectId)
    .executeTakeFirstOrThrow();
  out.project = strip({ ...project, created: undefined });
  return out;
}

/** Row counts of every table a restore may write: a failed restore must leave them all unchanged. */
async function counts(h: Harness) {
  const out: Record<string, number> = {};
  for (const table of [
    'project',
    'project_user',
    ...projectTables,
    'integration_matcher',
    'integration_extract_value',
    'event',
  ] as const) {
    const row = await h.deps.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  return out;
}

/** Every property name in a JSON document. */
function keysOf(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) keysOf(v, into);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      into.add(k);
      keysOf(v, into);
    }
  return into;
}

/** A backup written by hand in the format Semaphore UI exports (nulls, extra fields, no `app`, `vaults`). */
const semaphoreBackup = () => ({
  meta: { name: 'homelab', alert: true, alert_chat: 'Test', max_parallel_tasks: 0, type: null, id: 7 },
  templates: [
    {
      inventory: 'Build',
      repository: 'Demo',
      environment: 'Empty',
      name: 'Build',
      playbook: 'build.yml',
      arguments: '[]',
      allow_override_args_in_task: false,
      description: 'Build Job',
      vault_key: null,
      type: 'build',
      start_version: '1.0.0',
      build_template: null,
      view: 'Build',
      autorun: false,
      survey_vars: null,
      suppress_success_alerts: false,
      cron: '* * * * *',
      tasks: 3,
      vaults: null,
    },
    {
      inventory: 'Prod',
      repository: 'Demo',
      environment: 'Empty',
      name: 'Deploy',
      playbook: 'deploy.yml',
      arguments: null,
      description: null,
      type: 'deploy',
      start_version: null,
      build_template: 'Build',
      view: null,
      autorun: true,
      survey_vars: [{ name: 'host', title: 'Host', type: '', required: true, description: '' }],
      vaults: [{ vault_key: 'Vault Password', type: 'password', name: null }],
      app: '',
    },
  ],
  repositories: [
    {
      name: 'Demo',
      git_url: 'https://github.com/semaphoreui/semaphore-demo.git',
      git_branch: 'main',
      ssh_key: 'None',
    },
  ],
  keys: [
    { name: 'None', type: 'none', owner: '' },
    { name: 'Vault Password', type: 'login_password', plain: null },
    { name: 'Deploy key', type: 'ssh', owner: '' },
  ],
  views: [{ title: 'Build', position: 0, type: '', hidden: false }],
  inventories: [
    { name: 'Build', inventory: '', ssh_key: 'None', become_key: 'None', type: 'static' },
    { name: 'Prod', inventory: 'invs/prod/hosts', ssh_key: 'Deploy key', become_key: null, type: 'file' },
  ],
  environments: [{ name: 'Empty', password: null, json: '{}', env: null }],
  secret_storages: [],
  roles: null,
});

describe.each(testDialects())('project backup and restore on $name', (dialect) => {
  let h: Harness;
  let team: ProjectActors;

  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createProjectActors(h, 'Full project');
    await h.deps.db
      .updateTable('project')
      .set({
        alert: 1,
        alert_chat: '12345',
        max_parallel_tasks: 3,
        task_retention_days: 21,
        agent_runs_need_approval: 0,
      })
      .where('id', '=', team.projectId)
      .execute();
    await fillProject(h.deps, team.projectId, `full-${dialect.name}`);
  });
  afterAll(async () => h?.close());

  it('downloads a backup as a JSON attachment that refers by name and holds no secret', async () => {
    const res = await team.members.task_runner.get(`/api/project/${team.projectId}/backup`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toBe('attachment; filename="Full_project-backup.json"');
    expect(res.body).not.toContain(FIXTURE_SECRET);
    const backup = res.json();
    expect(Object.keys(backup).sort()).toEqual(
      [
        'meta',
        'templates',
        'repositories',
        'keys',
        'views',
        'inventories',
        'environments',
        'integrations',
        'integration_aliases',
        'option_lists',
        'terraform_states',
        'schedules',
        'workflows',
      ].sort(),
    );
    const names = keysOf(backup);
    expect([...names].filter((k) => k === 'id' || k.endsWith('_id') || k === 'secret')).toEqual([]);
    expect(backup.meta).toEqual({
      name: 'Full project',
      alert: true,
      alert_chat: '12345',
      max_parallel_tasks: 3,
      task_retention_days: 21,
      agent_runs_need_approval: false,
      type: '',
    });
    expect(backup.keys).toEqual([
      { name: 'None', type: 'none', owner: '' },
      { name: 'Deploy SSH', type: 'ssh', owner: '' },
      { name: 'Vault', type: 'login_password', owner: '' },
    ]);
    expect(backup.repositories).toEqual([
      {
        name: 'App repo',
        git_url: 'git@example.test:org/app.git',
        git_branch: 'main',
        ssh_key: 'Deploy SSH',
      },
    ]);
    expect(backup.inventories).toContainEqual({
      name: 'Web servers',
      type: 'static',
      inventory: '[web]\nweb1.example.test\n',
      ssh_key: 'Deploy SSH',
      become_key: 'Vault',
      repository: null,
      runner_tag: 'linux',
    });
    expect(backup.inventories.find((i: { name: string }) => i.name === 'From repo').runner_tag).toBeNull();
    const deploy = backup.templates.find((t: { name: string }) => t.name === 'Deploy app');
    expect(deploy).toMatchObject({
      type: 'deploy',
      build_template: 'Build app',
      vault_key: 'Vault',
      view: 'Deploy',
      inventory: 'From repo',
      repository: 'App repo',
      environment: 'Production',
      autorun: true,
    });
    const build = backup.templates.find((t: { name: string }) => t.name === 'Build app');
    expect(build.survey_vars).toHaveLength(2);
    expect(build.cron).toBe('0 3 * * *');
    expect(build.runner_tag).toBe('builder');
    expect(deploy.runner_tag).toBeNull();
    expect(backup.schedules).toEqual([
      {
        name: 'Nightly build',
        template: 'Build app',
        cron_format: '0 3 * * *',
        active: true,
        checkable_repository: 'App repo',
        type: '',
        run_at: null,
        delete_after_run: false,
        task_params: { environment: '{"NIGHTLY":"1"}', inventory_name: 'Web servers', message: 'nightly' },
      },
    ]);
    expect(backup.integrations[0]).toMatchObject({
      name: 'GitHub push',
      template: 'Deploy app',
      auth_method: 'github',
      auth_secret: 'Vault',
      searchable: true,
      task_params: { environment: '{"FROM":"hook"}', inventory_name: 'Web servers', message: 'hook' },
      aliases: [`full-${dialect.name}-integration`],
    });
    expect(backup.integration_aliases).toEqual([`full-${dialect.name}-project`]);
  });

  it('leaves the alias URLs out of the backup a member who may not run tasks downloads', async () => {
    const res = await team.members.guest.get(`/api/project/${team.projectId}/backup`);
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(`full-${dialect.name}-integration`);
    expect(res.body).not.toContain(`full-${dialect.name}-project`);
    const backup = res.json();
    expect(backup.integrations[0]).toMatchObject({ name: 'GitHub push', aliases: [] });
    expect(backup.integration_aliases).toEqual([]);
  });

  it('leaves the alias URLs out of the backup an API token without the run scope downloads', async () => {
    const token = (await team.members.owner.post('/api/user/tokens', { scopes: ['read'] })).json().token;
    const res = await h.app.inject({
      method: 'GET',
      url: `/api/project/${team.projectId}/backup`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(`full-${dialect.name}-integration`);
    expect(res.body).not.toContain(`full-${dialect.name}-project`);
    expect(res.json().integration_aliases).toEqual([]);
  });

  it('GET backup: permission matrix', async () => {
    await expectCodesByActor(h, team, memberCodes(200), (c) =>
      c.get(`/api/project/${team.projectId}/backup`),
    );
    expect((await team.admin.get('/api/project/999999/backup')).statusCode).toBe(404);
  });

  it('restores a backup into a new project equal to the original, ids aside', async () => {
    const backup = (await team.creator.get(`/api/project/${team.projectId}/backup`)).json();
    const res = await team.creator.post('/api/projects/restore', backup);
    expect(res.statusCode).toBe(200);
    const restored = res.json();
    expect(restored.id).not.toBe(team.projectId);
    expect(restored).toMatchObject({
      name: 'Full project',
      alert: true,
      alert_chat: '12345',
      max_parallel_tasks: 3,
      task_retention_days: 21,
      agent_runs_need_approval: false,
    });
    // The caller owns the new project; nobody else was carried over.
    const membership = await h.deps.db
      .selectFrom('project_user')
      .select(['user_id', 'role'])
      .where('project_id', '=', restored.id)
      .execute();
    expect(membership).toEqual([{ user_id: team.creator.userId, role: 'owner' }]);
    // The original still holds its aliases, so the copy got new ones; everything else is equal.
    expect(await snapshot(h, restored.id, { aliases: false })).toEqual(
      await snapshot(h, team.projectId, { aliases: false }),
    );
    const again = (await team.creator.get(`/api/project/${restored.id}/backup`)).json();
    const withoutAliases = (b: typeof backup) => ({
      ...b,
      integration_aliases: b.integration_aliases.length,
      integrations: b.integrations.map((i: { aliases: string[] }) => ({ ...i, aliases: i.aliases.length })),
    });
    expect(withoutAliases(again)).toEqual(withoutAliases(backup));
    expect(again.integration_aliases[0]).not.toBe(backup.integration_aliases[0]);
    // Secrets are not in a backup: restored keys keep their type with an empty secret to fill in.
    const ssh = await h.deps.db
      .selectFrom('access_key')
      .selectAll()
      .where('project_id', '=', restored.id)
      .where('name', '=', 'Deploy SSH')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(h.deps.box.open(ssh.secret!))).toEqual({ login: '', passphrase: '', private_key: '' });
    const event = await h.deps.db
      .selectFrom('event')
      .select('description')
      .where('project_id', '=', restored.id)
      .executeTakeFirstOrThrow();
    expect(event.description).toBe('Project Full project restored from a backup');
  });

  it("carries option lists and a survey's options sources by name into the restored project", async () => {
    const admin = team.creator;
    const pid = (await admin.post('/api/projects', { name: 'Sources' })).json().id as number;
    const base = `/api/project/${pid}`;
    const fx = await templateFixtures(h, pid);
    const key = (
      await admin.post(`${base}/keys`, {
        name: 'Catalog login',
        type: 'login_password',
        login_password: { login: 'ops', password: 'catalog-secret-1' },
      })
    ).json().id as number;
    const list = (
      await admin.post(`${base}/option_lists`, {
        name: 'Regions',
        options: [
          { name: 'Europe', value: 'eu' },
          { name: 'Asia', value: 'ap' },
        ],
      })
    ).json().id as number;
    const survey = [
      {
        name: 'hosts',
        title: 'Hosts',
        type: 'multiselect',
        options_source: { type: 'inventory_hosts', inventory_id: fx.inventory },
      },
      {
        name: 'region',
        title: 'Region',
        type: 'enum',
        options_source: { type: 'option_list', option_list_id: list },
      },
      {
        name: 'release',
        title: 'Release',
        type: 'enum',
        options_source: { type: 'http', url: 'https://catalog.example.test/releases', key_id: key },
      },
    ];
    const created = await admin.post(
      `${base}/templates`,
      ansibleBody(fx, { name: 'Deploy', survey_vars: survey }),
    );
    expect(created.statusCode, created.body).toBe(201);

    const backup = (await admin.get(`${base}/backup`)).json();
    // The backup names what the sources use, as it names every other reference.
    expect(backup.option_lists).toEqual([
      {
        name: 'Regions',
        options: [
          { name: 'Europe', value: 'eu' },
          { name: 'Asia', value: 'ap' },
        ],
      },
    ]);
    const sources = (b: typeof backup) =>
      b.templates[0].survey_vars.map((v: { options_source: unknown }) => v.options_source);
    expect(sources(backup)).toEqual([
      { type: 'inventory_hosts', inventory: 'Hosts' },
      { type: 'option_list', option_list: 'Regions' },
      {
        type: 'http',
        url: 'https://catalog.example.test/releases',
        items_path: '$[*]',
        value_path: '',
        label_path: '',
        key: 'Catalog login',
      },
    ]);

    const restored = await admin.post('/api/projects/restore', backup);
    expect(restored.statusCode, restored.body).toBe(200);
    const nid = restored.json().id as number;
    const idIn = async (table: 'inventory' | 'option_list' | 'access_key', name: string) =>
      (
        await h.deps.db
          .selectFrom(table)
          .select('id')
          .where('project_id', '=', nid)
          .where('name', '=', name)
          .executeTakeFirstOrThrow()
      ).id;
    const [template] = (await admin.get(`/api/project/${nid}/templates`)).json();
    // Each source points at the restored project's own object, none at the original's.
    expect(template.survey_vars.map((v: { options_source: unknown }) => v.options_source)).toEqual([
      { type: 'inventory_hosts', inventory_id: await idIn('inventory', 'Hosts') },
      { type: 'option_list', option_list_id: await idIn('option_list', 'Regions') },
      expect.objectContaining({ type: 'http', key_id: await idIn('access_key', 'Catalog login') }),
    ]);
    expect((await admin.get(`/api/project/${nid}/option_lists`)).json()).toEqual([
      expect.objectContaining({ name: 'Regions', options: backup.option_lists[0].options }),
    ]);
    // Backed up again, the copy reads as the original.
    expect(sources((await admin.get(`/api/project/${nid}/backup`)).json())).toEqual(sources(backup));

    // A source naming an option list the backup does not hold is refused, and nothing is created.
    const projects = (await admin.get('/api/projects')).json().length;
    const broken = await admin.post('/api/projects/restore', { ...backup, option_lists: [] });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().error).toContain(
      'templates[0].survey_vars: option list "Regions" is not in option_lists',
    );
    expect((await admin.get('/api/projects')).json()).toHaveLength(projects);
  });

  it('restores aliases unchanged once the original is gone, from raw text as well', async () => {
    const owner = await h.userClient({ can_create_project: true });
    const pid = (await owner.post('/api/projects', { name: 'Short-lived' })).json().id as number;
    await fillProject(h.deps, pid, `gone-${dialect.name}`);
    const before = await snapshot(h, pid);
    const text = (await owner.get(`/api/project/${pid}/backup`)).body;
    expect((await owner.del(`/api/project/${pid}`)).statusCode).toBe(204);
    const res = await owner.request('POST', '/api/projects/restore', text, { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(200);
    expect(await snapshot(h, res.json().id)).toEqual(before);
  });

  it('restores a backup written by Semaphore UI', async () => {
    const res = await team.creator.post('/api/projects/restore', semaphoreBackup());
    expect(res.statusCode).toBe(200);
    const pid = res.json().id as number;
    // Semaphore has no task_retention_days: the project uses the server default.
    expect(res.json()).toMatchObject({
      name: 'homelab',
      alert: true,
      alert_chat: 'Test',
      type: '',
      task_retention_days: 0,
      // Nor a setting for AI agents' runs: they wait for approval.
      agent_runs_need_approval: true,
    });
    const db = h.deps.db;
    const keys = await db
      .selectFrom('access_key')
      .selectAll()
      .where('project_id', '=', pid)
      .orderBy('id')
      .execute();
    // The backup's None key is the one every new project gets; no second one.
    expect(keys.map((k) => [k.name, k.type])).toEqual([
      ['None', 'none'],
      ['Vault Password', 'login_password'],
      ['Deploy key', 'ssh'],
    ]);
    expect(keys[0]!.secret).toBeNull();
    expect(JSON.parse(h.deps.box.open(keys[1]!.secret!))).toEqual({ login: '', password: '' });
    const envs = await db.selectFrom('environment').selectAll().where('project_id', '=', pid).execute();
    expect(envs.map((e) => [e.name, e.json, e.env])).toEqual([['Empty', '{}', '{}']]);
    const templates = await db
      .selectFrom('template')
      .selectAll()
      .where('project_id', '=', pid)
      .orderBy('id')
      .execute();
    const [build, deploy] = templates;
    expect(build).toMatchObject({
      name: 'Build',
      app: 'ansible',
      type: 'build',
      start_version: '1.0.0',
      survey_vars: '[]',
    });
    expect(deploy).toMatchObject({
      name: 'Deploy',
      app: 'ansible',
      type: 'deploy',
      build_template_id: build!.id,
      autorun: 1,
    });
    expect(JSON.parse(deploy!.survey_vars)).toEqual([
      { name: 'host', title: 'Host', type: '', required: true, description: '' },
    ]);
    expect(deploy!.vault_key_id).toBe(keys[1]!.id);
    const prod = await db
      .selectFrom('inventory')
      .selectAll()
      .where('project_id', '=', pid)
      .where('name', '=', 'Prod')
      .executeTakeFirstOrThrow();
    expect(prod).toMatchObject({
      type: 'file',
      inventory: 'invs/prod/hosts',
      ssh_key_id: keys[2]!.id,
      become_key_id: null,
    });
    const view = await db
      .selectFrom('view')
      .selectAll()
      .where('project_id', '=', pid)
      .executeTakeFirstOrThrow();
    expect(build!.view_id).toBe(view.id);
    // Without a schedules list, a template's cron becomes its schedule (older backups).
    const schedules = await db.selectFrom('schedule').selectAll().where('project_id', '=', pid).execute();
    expect(schedules).toHaveLength(1);
    expect(schedules[0]).toMatchObject({ template_id: build!.id, cron_format: '* * * * *', active: 1 });
  });

  it('refuses a backup naming two objects of a kind alike; a project holding such names backs up distinct', async () => {
    const backup = semaphoreBackup();
    backup.inventories.push({
      name: 'Build',
      inventory: 'second',
      ssh_key: 'None',
      become_key: null,
      type: 'static',
    });
    const before = await counts(h);
    const res = await team.creator.post('/api/projects/restore', backup);
    expect(res.statusCode).toBe(400);
    // References by name could not tell the two apart.
    expect(res.json().error).toBe(
      'Invalid backup: inventories[2].name: "Build" is already the name of inventories[0]',
    );
    expect(await counts(h)).toEqual(before);

    // Names taken twice inside a project (rows written past the API) get the peer's " - <random10>" suffix in its
    // backup, which then restores with every reference meaning the first.
    const pid = (await team.creator.post('/api/projects/restore', semaphoreBackup())).json().id as number;
    await h.deps.db
      .insertInto('inventory')
      .values({
        project_id: pid,
        name: 'Build',
        type: 'static',
        inventory: 'second',
        ssh_key_id: null,
        become_key_id: null,
        repository_id: null,
      })
      .execute();
    const dupBackup = (await team.creator.get(`/api/project/${pid}/backup`)).json();
    expect(dupBackup.inventories.map((i: { name: string }) => i.name)).toEqual([
      'Build',
      'Prod',
      expect.stringMatching(/^Build - [A-Za-z0-9]{10}$/),
    ]);
    expect(dupBackup.templates.find((t: { name: string }) => t.name === 'Build').inventory).toBe('Build');
    const again = await team.creator.post('/api/projects/restore', dupBackup);
    expect(again.statusCode, again.body).toBe(200);
    const build = await h.deps.db
      .selectFrom('template')
      .innerJoin('inventory', 'inventory.id', 'template.inventory_id')
      .select(['inventory.name', 'inventory.inventory'])
      .where('template.project_id', '=', again.json().id)
      .where('template.name', '=', 'Build')
      .executeTakeFirstOrThrow();
    expect(build).toEqual({ name: 'Build', inventory: '' });
  });

  it('refuses malformed backups with 400 naming the problem, and creates nothing', async () => {
    const broken = (mutate: (b: ReturnType<typeof semaphoreBackup>) => unknown) => {
      const b = semaphoreBackup();
      return mutate(b) ?? b;
    };
    const cases: Array<[string, unknown, string]> = [
      ['array', [], 'Invalid backup: A backup must be a JSON object'],
      ['no meta', { templates: [] }, 'Invalid backup: meta: Backup details is required'],
      ['no name', { meta: { alert: true } }, 'Invalid backup: meta.name: Name is required'],
      [
        'unknown inventory',
        broken((b) => {
          b.templates[0]!.inventory = 'Nowhere';
        }),
        'Invalid backup: templates[0].inventory: inventory "Nowhere" is not in inventories',
      ],
      [
        'unknown key',
        broken((b) => {
          b.inventories[1]!.ssh_key = 'Lost key';
        }),
        'Invalid backup: inventories[1].ssh_key: key "Lost key" is not in keys',
      ],
      [
        'unknown build template',
        broken((b) => {
          b.templates[1]!.build_template = 'Nope';
        }),
        'Invalid backup: templates[1].build_template: template "Nope" is not in templates',
      ],
      [
        'deploy without build',
        broken((b) => {
          b.templates[1]!.build_template = null;
        }),
        'Invalid backup: templates[1].build_template: Build template is required',
      ],
      [
        'bad key type',
        broken((b) => {
          b.keys[1]!.type = 'string';
        }),
        'Invalid backup: keys[1].type: Type must be one of none, ssh, login_password',
      ],
      [
        'wrong type',
        broken((b) => ({ ...b, templates: 'x' })),
        'Invalid backup: templates: templates must be a list',
      ],
      [
        'bad env JSON',
        broken((b) => {
          b.environments[0]!.json = '{nope';
        }),
        'Invalid backup: environments[0].json: Extra variables must be valid JSON',
      ],
      [
        'negative max parallel',
        broken((b) => {
          b.meta.max_parallel_tasks = -1;
        }),
        'Invalid backup: meta.max_parallel_tasks: Max parallel tasks must be 0 or greater',
      ],
      [
        'negative retention',
        broken((b) => {
          (b.meta as Record<string, unknown>).task_retention_days = -3;
        }),
        'Invalid backup: meta.task_retention_days: Task retention days must be 0 or greater',
      ],
      [
        'fractional retention',
        broken((b) => {
          (b.meta as Record<string, unknown>).task_retention_days = 2.5;
        }),
        'Invalid backup: meta.task_retention_days: Task retention days must be an integer',
      ],
      [
        '1 MB name',
        broken((b) => {
          b.templates[0]!.name = 'x'.repeat(1024 * 1024);
        }),
        'Invalid backup: templates[0].name: Name must be at most 100 characters',
      ],
    ];
    const before = await counts(h);
    for (const [label, body, error] of cases) {
      const res = await team.creator.post('/api/projects/restore', body);
      expect(res.statusCode, label).toBe(400);
      expect(res.json().error, label).toBe(error);
    }
    const notJson = await team.creator.request('POST', '/api/projects/restore', '{"meta": ', {
      'content-type': 'text/plain',
    });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().error).toBe('The backup is not valid JSON');
    const malformed = await team.creator.request('POST', '/api/projects/restore', '{"meta": ');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ error: 'Request body is not valid JSON' });
    expect(await counts(h)).toEqual(before);
  });

  it('writes nothing when the restore fails half-way', async () => {
    const before = await counts(h);
    const seal = h.deps.box.seal;
    h.deps.box.seal = () => {
      throw new Error('simulated failure while writing keys');
    };
    try {
      const res = await team.creator.post('/api/projects/restore', semaphoreBackup());
      expect(res.statusCode).toBe(500);
      expect(res.json()).toMatchObject({ error: 'Internal server error' });
    } finally {
      h.deps.box.seal = seal;
    }
    expect(await counts(h)).toEqual(before);
  });

  it('POST projects/restore: permission matrix', async () => {
    const plain = await h.userClient();
    const cases: Array<[string, Client, number]> = [
      ['admin', team.admin, 200],
      ['can_create_project', team.creator, 200],
      ['plain user', plain, 403],
      ['anonymous', h.anonymous(), 401],
    ];
    for (const [label, client, status] of cases) {
      const before = await counts(h);
      const res = await client.post('/api/projects/restore', semaphoreBackup());
      expect(res.statusCode, label).toBe(status);
      if (status !== 200) expect(await counts(h), label).toEqual(before);
    }
  });
});
