import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { configuredDialects, testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  insertRepository,
  insertTemplate,
  outputOf,
  waitFor,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { DEMO_REPOSITORY_PATH, DEMO_VAULT_PASSWORD, demoRepositoryDir } from './demo';

describe('the demo repository shipped with Signalbox', () => {
  const file = (path: string) => join(DEMO_REPOSITORY_PATH, path);

  it('is an absolute directory holding every file the demo templates use', () => {
    expect(isAbsolute(DEMO_REPOSITORY_PATH)).toBe(true);
    for (const path of [
      'ping.yml',
      'build.yml',
      'deploy.yml',
      'print_system_info.sh',
      'terraform/main.tf',
      'pulumi/Pulumi.yaml',
    ]) {
      expect(existsSync(file(path)), path).toBe(true);
    }
    accessSync(file('print_system_info.sh'), constants.X_OK);
  });

  it('has playbooks for all hosts and nothing that needs the network', () => {
    for (const playbook of ['ping.yml', 'build.yml', 'deploy.yml']) {
      const plays = parseYaml(readFileSync(file(playbook), 'utf8')) as Array<{ hosts: string }>;
      expect(plays.length, playbook).toBeGreaterThan(0);
      for (const play of plays) expect(play.hosts, playbook).toBe('all');
    }
    const tf = readFileSync(file('terraform/main.tf'), 'utf8');
    expect(tf).not.toMatch(/required_providers|^\s*provider\s/m);
    const pulumi = parseYaml(readFileSync(file('pulumi/Pulumi.yaml'), 'utf8')) as {
      runtime: string;
      resources?: unknown;
    };
    expect(pulumi.runtime).toBe('yaml');
  });

  it('has a bash script that runs', () => {
    const out = execFileSync('bash', [file('print_system_info.sh'), 'one'], { encoding: 'utf8' });
    expect(out).toContain('== Host ==');
    expect(out).toContain('Arguments: one');
  });

  it('has playbooks ansible-playbook accepts (ansible-playbook is required, never skipped)', () => {
    const inventory = join(tmpdir(), `signalbox-demo-inventory-${process.pid}`);
    writeFileSync(inventory, '[builder]\nlocalhost ansible_connection=local\n');
    execFileSync(
      'ansible-playbook',
      ['--syntax-check', '-i', inventory, 'ping.yml', 'build.yml', 'deploy.yml'],
      {
        cwd: DEMO_REPOSITORY_PATH,
        stdio: 'pipe',
      },
    );
  });
});

describe.each(testDialects())('demo project on $name', (dialect) => {
  let h: Harness;
  let creator: Client;

  beforeAll(async () => {
    h = await createHarness(dialect);
    creator = await h.userClient({ can_create_project: true });
  });
  afterAll(async () => h?.close());

  const rows = async (projectId: number) => {
    const db = h.deps.db;
    return {
      keys: await db
        .selectFrom('access_key')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute(),
      repositories: await db
        .selectFrom('repository')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute(),
      inventories: await db
        .selectFrom('inventory')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute(),
      environments: await db
        .selectFrom('environment')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute(),
      views: await db
        .selectFrom('view')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute(),
      templates: await db
        .selectFrom('template')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute(),
      schedules: await db
        .selectFrom('schedule')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute(),
    };
  };

  it('creates a key, the local repository, inventories, an environment, views and a template of each type', async () => {
    const res = await creator.post('/api/projects', { name: 'Demo', demo: true });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ name: 'Demo', type: '' });
    const pid = res.json().id as number;
    const r = await rows(pid);
    const id = (list: { id: number; name?: string; title?: string }[], name: string) =>
      list.find((x) => (x.name ?? x.title) === name)?.id;

    expect(r.keys.map((k) => [k.name, k.type])).toEqual([
      ['None', 'none'],
      ['Vault Password', 'login_password'],
    ]);
    const vault = r.keys[1]!;
    expect(vault.secret).not.toContain(DEMO_VAULT_PASSWORD);
    expect(JSON.parse(h.deps.box.open(vault.secret!))).toEqual({ login: '', password: DEMO_VAULT_PASSWORD });

    expect(r.repositories).toHaveLength(1);
    const repo = r.repositories[0]!;
    // A git copy of the shipped repository under the data dir: tasks never write into the install dir.
    const copy = demoRepositoryDir(h.dataDir, pid);
    expect(repo).toMatchObject({ name: 'Demo', git_url: copy, git_branch: '', ssh_key_id: r.keys[0]!.id });
    expect(copy.startsWith(h.dataDir)).toBe(true);
    for (const f of ['build.yml', 'deploy.yml', 'ping.yml', 'print_system_info.sh', 'terraform/main.tf'])
      expect(readFileSync(join(copy, f), 'utf8')).toBe(readFileSync(join(DEMO_REPOSITORY_PATH, f), 'utf8'));
    expect(execFileSync('git', ['-C', copy, 'log', '-1', '--format=%s']).toString().trim()).toBe(
      'Signalbox demo',
    );
    expect(execFileSync('git', ['-C', copy, 'status', '--porcelain']).toString()).toBe('');

    const none = r.keys[0]!.id;
    expect(r.inventories.map((i) => [i.name, i.type, i.inventory, i.ssh_key_id])).toEqual([
      ['Build', 'static', '[builder]\nlocalhost ansible_connection=local', none],
      ['Dev', 'static', '[dev]\nlocalhost ansible_connection=local', none],
      ['Prod', 'static', '[prod]\nlocalhost ansible_connection=local', none],
      ['Default workspace (OpenTofu)', 'tofu-workspace', 'default', none],
      ['Default workspace (Terraform)', 'terraform-workspace', 'default', none],
    ]);

    expect(r.environments.map((e) => e.name)).toEqual(['Empty', 'Demo', 'Infrastructure']);
    const env = r.environments[1]!;
    expect(JSON.parse(env.json)).toEqual({
      demo_app_name: 'signalbox-demo',
      demo_artifacts_dir: join(copy, '.artifacts'),
      greeting: 'Hello from Signalbox',
    });
    expect(JSON.parse(env.env)).toEqual({ ANSIBLE_HOST_KEY_CHECKING: 'False' });
    const infra = r.environments[2]!;
    // Terraform gets every extra variable as -var: only the variables main.tf declares may be there.
    const declared = [
      ...readFileSync(join(DEMO_REPOSITORY_PATH, 'terraform/main.tf'), 'utf8').matchAll(/variable "(\w+)"/g),
    ];
    expect(Object.keys(JSON.parse(infra.json)).sort()).toEqual(declared.map((m) => m[1]).sort());
    expect(JSON.parse(infra.env)).toMatchObject({
      PULUMI_BACKEND_URL: `file://${DEMO_REPOSITORY_PATH}/pulumi/.state`,
    });

    expect(r.views.map((v) => [v.title, v.position])).toEqual([
      ['Build', 0],
      ['Deploy', 1],
      ['Tools', 2],
    ]);

    const inv = (name: string) => id(r.inventories, name) ?? null;
    const view = (name: string) => id(r.views, name) ?? null;
    const buildId = id(r.templates, 'Build demo app');
    const expected = [
      ['Ping', 'ansible', '', 'ping.yml', inv('Prod'), view('Tools')],
      ['Build demo app', 'ansible', 'build', 'build.yml', inv('Build'), view('Build')],
      ['Deploy demo app to Dev', 'ansible', 'deploy', 'deploy.yml', inv('Dev'), view('Deploy')],
      ['Deploy demo app to Production', 'ansible', 'deploy', 'deploy.yml', inv('Prod'), view('Deploy')],
      [
        'Apply infrastructure (OpenTofu)',
        'tofu',
        '',
        'terraform',
        inv('Default workspace (OpenTofu)'),
        view('Build'),
      ],
      [
        'Apply infrastructure (Terraform)',
        'terraform',
        '',
        'terraform',
        inv('Default workspace (Terraform)'),
        view('Build'),
      ],
      ['Print system info (Bash)', 'bash', '', 'print_system_info.sh', null, view('Tools')],
      ['Pulumi preview', 'pulumi', '', 'pulumi', null, view('Tools')],
    ];
    expect(r.templates.map((t) => [t.name, t.app, t.type, t.playbook, t.inventory_id, t.view_id])).toEqual(
      expected,
    );
    for (const t of r.templates) {
      expect(t.repository_id, t.name).toBe(repo.id);
      expect(t.environment_id, t.name).toBe(
        ['tofu', 'terraform', 'pulumi'].includes(t.app) ? infra.id : env.id,
      );
      // Every file or directory a template names is in the repository.
      expect(existsSync(join(DEMO_REPOSITORY_PATH, t.playbook)), t.name).toBe(true);
    }
    const byName = (name: string) => r.templates.find((t) => t.name === name)!;
    expect(byName('Build demo app')).toMatchObject({ start_version: '1.0.0', autorun: 0 });
    expect(byName('Deploy demo app to Dev')).toMatchObject({
      build_template_id: buildId,
      autorun: 1,
      vault_key_id: vault.id,
    });
    expect(byName('Deploy demo app to Production')).toMatchObject({
      build_template_id: buildId,
      autorun: 0,
      vault_key_id: vault.id,
    });
    expect(r.schedules).toEqual([]);
  });

  it('creates nothing extra without demo, and refuses demo creation to users who may not create projects', async () => {
    const plain = (await creator.post('/api/projects', { name: 'Plain', demo: false })).json().id as number;
    const r = await rows(plain);
    expect(r.templates).toEqual([]);
    expect(r.keys.map((k) => k.name)).toEqual(['None']);
    expect(r.repositories).toEqual([]);

    const before = await h.deps.db.selectFrom('template').select('id').execute();
    const nobody = await h.userClient();
    const res = await nobody.post('/api/projects', { name: 'Demo', demo: true });
    expect(res.statusCode).toBe(403);
    expect(await h.deps.db.selectFrom('template').select('id').execute()).toEqual(before);
    expect((await h.anonymous().post('/api/projects', { name: 'Demo', demo: true })).statusCode).toBe(401);
    expect((await creator.post('/api/projects', { name: 'Demo', demo: 'yes' })).statusCode).toBe(400);
  });

  it('backs up and restores like any other project', async () => {
    const pid = (await creator.post('/api/projects', { name: 'Demo round trip', demo: true })).json()
      .id as number;
    const backup = (await creator.get(`/api/project/${pid}/backup`)).json();
    expect(backup.templates).toHaveLength(8);
    expect(JSON.stringify(backup)).not.toContain(DEMO_VAULT_PASSWORD);
    const restored = await creator.post('/api/projects/restore', backup);
    expect(restored.statusCode).toBe(200);
    const again = (await creator.get(`/api/project/${restored.json().id}/backup`)).json();
    expect(again).toEqual(backup);
  });

  it("removes the project's copy of the example repository when the project is deleted", async () => {
    const pid = (await creator.post('/api/projects', { name: 'Short-lived demo', demo: true })).json()
      .id as number;
    const copy = demoRepositoryDir(h.dataDir, pid);
    expect(existsSync(join(copy, 'build.yml'))).toBe(true);
    expect((await creator.del(`/api/project/${pid}`)).statusCode).toBe(204);
    expect(existsSync(copy)).toBe(false);
  });
});

describe('demo project tasks in the task sandbox', () => {
  let h: Harness;
  let creator: Client;
  const sqlite = configuredDialects().find((d) => d.name === 'sqlite')!;

  beforeAll(async () => {
    h = await createHarness(sqlite);
    creator = await h.userClient({ can_create_project: true });
  });
  afterAll(async () => h?.close());

  const templateOf = async (projectId: number, name: string) =>
    (
      await h.deps.db
        .selectFrom('template')
        .select('id')
        .where('project_id', '=', projectId)
        .where('name', '=', name)
        .executeTakeFirstOrThrow()
    ).id;
  const finished = async (id: number) => {
    const done = await waitForStatus(h.deps, id, ['success', 'error', 'stopped'], 60_000);
    return { ...done, out: (await outputOf(h.deps, id)).join('\n') };
  };

  it("runs its Bash and Ansible templates, builds and deploys from the project's own copy, which another project cannot name", async () => {
    const admin = await h.userClient({ admin: true });
    expect((await admin.get('/api/info')).json().task_sandbox).toEqual({ mode: 'bwrap' });
    const pid = (await creator.post('/api/projects', { name: 'Sandboxed demo', demo: true })).json()
      .id as number;
    const copy = demoRepositoryDir(h.dataDir, pid);
    for (const name of ['Print system info (Bash)', 'Ping']) {
      const res = await creator.post(`/api/project/${pid}/tasks`, {
        template_id: await templateOf(pid, name),
      });
      expect(res.statusCode, res.body).toBe(201);
      const done = await finished(res.json().id);
      expect(done.status, done.out).toBe('success');
    }
    const started = await creator.post(`/api/project/${pid}/tasks`, {
      template_id: await templateOf(pid, 'Build demo app'),
    });
    expect(started.statusCode, started.body).toBe(201);
    const build = await finished(started.json().id);
    expect(build.status, build.out).toBe('success');
    // The build's autorun deploys its artifact to Dev, from the artifacts folder in the project's copy.
    const deploy = await waitFor(
      async () =>
        h.deps.db
          .selectFrom('task')
          .select('id')
          .where('project_id', '=', pid)
          .where('template_id', '=', await templateOf(pid, 'Deploy demo app to Dev'))
          .executeTakeFirst(),
      60_000,
      'the deploy to start',
    );
    const deployed = await finished(deploy.id);
    expect(deployed.status, deployed.out).toBe('success');
    expect(existsSync(join(copy, '.artifacts', 'dev', 'signalbox-demo.txt'))).toBe(true);

    // Another project's repository naming that copy is refused before git or the task sees it.
    const other = (await creator.post('/api/projects', { name: 'Neighbour' })).json().id as number;
    const repo = await insertRepository(h.deps, other, { git_url: copy });
    const template = await insertTemplate(h.deps, other, {
      name: 'Borrow',
      repository_id: repo,
      playbook: 'print_system_info.sh',
      app: 'bash',
    });
    const borrowed = await creator.post(`/api/project/${other}/tasks`, { template_id: template });
    expect(borrowed.statusCode, borrowed.body).toBe(201);
    const refused = await finished(borrowed.json().id);
    expect(refused.status).toBe('error');
    expect(refused.out).toContain(`Repository path ${copy} is inside the server's own files`);
  }, 180_000);
});
