import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Insertable } from 'kysely';
import type { Db } from '../../db';
import type { TemplateTable } from '../../db/tables';
import { templateRowDefaults } from '../../db/template-row';
import { insertReturningId } from '../../db/values';
import type { Deps } from '../../deps';
import { demoRepository } from '../../paths';

/** Fills a new project with demo content, inside the transaction that creates the project. */
export type DemoBuilder = (
  db: Db,
  deps: Deps,
  ids: { projectId: number; noneKeyId: number; emptyEnvironmentId: number },
) => Promise<void>;

/** The example repository shipped with Signalbox (packages/server/demo); each demo project gets a copy. */
export const DEMO_REPOSITORY_PATH = demoRepository;

/** Where a demo project's copy of the example repository lives (under the data dir). */
export const demoRepositoryDir = (dataDir: string, projectId: number) =>
  join(resolve(dataDir), 'demo', `project-${projectId}`, 'repository');

/**
 * Copies the shipped example repository into the data dir as a git repository of its own: the demo's tasks
 * write their state (Terraform, Pulumi) there, never into the install dir (which may be read-only), and record
 * a real commit. Without git the copy still works as a plain local directory.
 */
function copyDemoRepository(dataDir: string, projectId: number): string {
  const dir = demoRepositoryDir(dataDir, projectId);
  rmSync(dir, { recursive: true, force: true });
  cpSync(DEMO_REPOSITORY_PATH, dir, {
    recursive: true,
    filter: (src) =>
      !/[/\\](\.terraform|terraform\.tfstate\.d|\.state)([/\\]|$)|\.tfstate(\.backup)?$/.test(src),
  });
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: dir, stdio: 'ignore', timeout: 20_000 });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git(
      '-c',
      'user.name=Signalbox',
      '-c',
      'user.email=signalbox@localhost',
      'commit',
      '-q',
      '-m',
      'Signalbox demo',
    );
  } catch {
    // git is missing or failed: the directory is still a usable local repository.
  }
  return dir;
}

/** Removes a deleted demo project's copy of the example repository (nothing when it has none). */
export const removeDemoRepository = (dataDir: string, projectId: number) =>
  rmSync(join(resolve(dataDir), 'demo', `project-${projectId}`), { recursive: true, force: true });

/** The demo vault password: not a real secret, but stored sealed like every key. */
export const DEMO_VAULT_PASSWORD = 'signalbox-demo-vault';

const localhost = (group: string) => `[${group}]\nlocalhost ansible_connection=local`;

/**
 * Fills a new project with the demo content: a key, the local example repository, inventories, an environment,
 * views and one template of each kind. Runs inside the project's create transaction with its new ids.
 */
export const createDemoContent: DemoBuilder = async (db, deps, { projectId, noneKeyId }) => {
  const insert = <T extends 'access_key' | 'repository' | 'inventory' | 'environment' | 'view' | 'template'>(
    table: T,
    values: Parameters<typeof insertReturningId<T>>[3],
  ) => insertReturningId(db, deps.dialect, table, values);

  const vaultKey = await insert('access_key', {
    project_id: projectId,
    name: 'Vault Password',
    type: 'login_password',
    secret: deps.box.seal(JSON.stringify({ login: '', password: DEMO_VAULT_PASSWORD })),
    owner: '',
    environment_id: null,
  });
  const repository = await insert('repository', {
    project_id: projectId,
    name: 'Demo',
    git_url: copyDemoRepository(deps.config.dataDir, projectId),
    git_branch: '',
    ssh_key_id: noneKeyId,
  });

  const inventory = (name: string, type: string, content: string) =>
    insert('inventory', {
      project_id: projectId,
      name,
      type,
      inventory: content,
      ssh_key_id: noneKeyId,
      become_key_id: null,
      repository_id: null,
    });
  const build = await inventory('Build', 'static', localhost('builder'));
  const dev = await inventory('Dev', 'static', localhost('dev'));
  const prod = await inventory('Prod', 'static', localhost('prod'));
  const tofuWorkspace = await inventory('Default workspace (OpenTofu)', 'tofu-workspace', 'default');
  const terraformWorkspace = await inventory(
    'Default workspace (Terraform)',
    'terraform-workspace',
    'default',
  );

  // Ansible and Bash read the demo variables; Terraform gets every extra variable as -var, so the infrastructure
  // templates have their own environment holding only the variables main.tf declares.
  const environment = await insert('environment', {
    project_id: projectId,
    name: 'Demo',
    json: JSON.stringify(
      {
        demo_app_name: 'signalbox-demo',
        // Inside the project's own copy: the only folder of the server's a sandboxed demo task can write.
        demo_artifacts_dir: join(demoRepositoryDir(deps.config.dataDir, projectId), '.artifacts'),
        greeting: 'Hello from Signalbox',
      },
      null,
      2,
    ),
    env: JSON.stringify({ ANSIBLE_HOST_KEY_CHECKING: 'False' }, null, 2),
  });
  const infrastructure = await insert('environment', {
    project_id: projectId,
    name: 'Infrastructure',
    json: JSON.stringify({ environment: 'demo', app_version: '1.0.0' }, null, 2),
    env: JSON.stringify(
      {
        // Local Pulumi state, so the demo needs no Pulumi Cloud account; the passphrase guards nothing real.
        PULUMI_BACKEND_URL: `file://${DEMO_REPOSITORY_PATH}/pulumi/.state`,
        PULUMI_CONFIG_PASSPHRASE: 'signalbox-demo',
      },
      null,
      2,
    ),
  });

  const [buildView, deployView, toolsView] = [
    await insert('view', { project_id: projectId, title: 'Build', position: 0 }),
    await insert('view', { project_id: projectId, title: 'Deploy', position: 1 }),
    await insert('view', { project_id: projectId, title: 'Tools', position: 2 }),
  ];

  const template = (
    t: Partial<Insertable<TemplateTable>> & Pick<Insertable<TemplateTable>, 'name' | 'app'>,
  ) =>
    insert('template', {
      ...templateRowDefaults,
      project_id: projectId,
      playbook: '',
      repository_id: repository,
      environment_id: environment,
      ...t,
    });

  await template({
    name: 'Ping',
    description: 'Checks that Ansible reaches the hosts of the Prod inventory.',
    app: 'ansible',
    playbook: 'ping.yml',
    inventory_id: prod,
    view_id: toolsView,
  });
  const buildTemplate = await template({
    name: 'Build demo app',
    description: 'Builds a versioned artifact; each run increments the version.',
    app: 'ansible',
    type: 'build',
    playbook: 'build.yml',
    inventory_id: build,
    view_id: buildView,
    start_version: '1.0.0',
  });
  await template({
    name: 'Deploy demo app to Dev',
    description: 'Deploys a build to Dev; runs on its own after every successful build.',
    app: 'ansible',
    type: 'deploy',
    playbook: 'deploy.yml',
    inventory_id: dev,
    view_id: deployView,
    build_template_id: buildTemplate,
    autorun: 1,
    vault_key_id: vaultKey,
  });
  await template({
    name: 'Deploy demo app to Production',
    description: 'Deploys a chosen build to Production.',
    app: 'ansible',
    type: 'deploy',
    playbook: 'deploy.yml',
    inventory_id: prod,
    view_id: deployView,
    build_template_id: buildTemplate,
    vault_key_id: vaultKey,
  });
  await template({
    name: 'Apply infrastructure (OpenTofu)',
    description: 'Plans and, after confirmation, applies terraform/main.tf with OpenTofu.',
    app: 'tofu',
    playbook: 'terraform',
    environment_id: infrastructure,
    inventory_id: tofuWorkspace,
    view_id: buildView,
  });
  await template({
    name: 'Apply infrastructure (Terraform)',
    description: 'Plans and, after confirmation, applies terraform/main.tf with Terraform.',
    app: 'terraform',
    playbook: 'terraform',
    environment_id: infrastructure,
    inventory_id: terraformWorkspace,
    view_id: buildView,
  });
  await template({
    name: 'Print system info (Bash)',
    description: 'Prints a short report about the machine that runs the task.',
    app: 'bash',
    playbook: 'print_system_info.sh',
    view_id: toolsView,
  });
  await template({
    name: 'Pulumi preview',
    description: 'Runs the Pulumi YAML program in pulumi/ (start it as a dry run for a preview only).',
    app: 'pulumi',
    playbook: 'pulumi',
    environment_id: infrastructure,
    view_id: toolsView,
  });
};
