import { insertReturningId } from '../../src/db/values';
import type { Deps } from '../../src/deps';
import { templateRow } from './task-fixtures';

export const FIXTURE_SECRET = 'TOPSECRET-fixture-9f3a1c';

/** The tables of a project's own objects (rows with a project_id), in the order a project's objects are made. */
export const projectObjectTables = [
  'access_key',
  'repository',
  'inventory',
  'environment',
  'view',
  'template',
  'schedule',
] as const;

/**
 * Fills a project with one of everything, written straight to the database (the resource APIs are built
 * elsewhere): keys, repository, inventories, environment, views, build/deploy templates with survey variables,
 * a schedule, and an integration with aliases, a matcher and an extracted value.
 */
export async function fillProject(deps: Deps, projectId: number, aliasPrefix: string) {
  const { db, dialect, box } = deps;
  const none = await db
    .selectFrom('access_key')
    .select('id')
    .where('project_id', '=', projectId)
    .where('name', '=', 'None')
    .executeTakeFirstOrThrow();
  const sshKey = await insertReturningId(db, dialect, 'access_key', {
    project_id: projectId,
    name: 'Deploy SSH',
    type: 'ssh',
    secret: box.seal(JSON.stringify({ login: 'deploy', passphrase: '', private_key: FIXTURE_SECRET })),
    owner: '',
    environment_id: null,
  });
  const vaultKey = await insertReturningId(db, dialect, 'access_key', {
    project_id: projectId,
    name: 'Vault',
    type: 'login_password',
    secret: box.seal(JSON.stringify({ login: '', password: FIXTURE_SECRET })),
    owner: '',
    environment_id: null,
  });
  const repository = await insertReturningId(db, dialect, 'repository', {
    project_id: projectId,
    name: 'App repo',
    git_url: 'git@example.test:org/app.git',
    git_branch: 'main',
    ssh_key_id: sshKey,
  });
  const inventory = await insertReturningId(db, dialect, 'inventory', {
    project_id: projectId,
    name: 'Web servers',
    type: 'static',
    inventory: '[web]\nweb1.example.test\n',
    ssh_key_id: sshKey,
    become_key_id: vaultKey,
    repository_id: null,
    runner_tag: 'linux',
  });
  const fileInventory = await insertReturningId(db, dialect, 'inventory', {
    project_id: projectId,
    name: 'From repo',
    type: 'file',
    inventory: 'inventories/prod.ini',
    ssh_key_id: none.id,
    become_key_id: null,
    repository_id: repository,
  });
  const environment = await insertReturningId(db, dialect, 'environment', {
    project_id: projectId,
    name: 'Production',
    json: '{"region":"eu-west-1","replicas":3}',
    env: '{"ANSIBLE_HOST_KEY_CHECKING":"False"}',
  });
  const buildView = await insertReturningId(db, dialect, 'view', {
    project_id: projectId,
    title: 'Build',
    position: 0,
  });
  await insertReturningId(db, dialect, 'view', { project_id: projectId, title: 'Deploy', position: 1 });
  const surveyVars = [
    { name: 'release', title: 'Release', description: 'Release tag', type: '', required: true, values: [] },
    {
      name: 'colour',
      title: 'Colour',
      description: '',
      type: 'enum',
      required: false,
      values: [
        { name: 'Blue', value: 'blue' },
        { name: 'Green', value: 'green' },
      ],
    },
  ];
  const template = (over: Parameters<typeof templateRow>[1]) =>
    templateRow(projectId, {
      app: 'ansible',
      playbook: 'site.yml',
      inventory_id: inventory,
      repository_id: repository,
      environment_id: environment,
      name: '',
      ...over,
    });
  const build = await insertReturningId(
    db,
    dialect,
    'template',
    template({
      name: 'Build app',
      description: 'Builds the app',
      type: 'build',
      playbook: 'build.yml',
      start_version: '1.0.0',
      view_id: buildView,
      runner_tag: 'builder',
      arguments: '["--diff"]',
      allow_override_args_in_task: 1,
      survey_vars: JSON.stringify(surveyVars),
      task_params: JSON.stringify({ allow_debug: true, limit: ['web1'] }),
      git_branch: 'release',
    }),
  );
  const deployView = await db
    .selectFrom('view')
    .select('id')
    .where('project_id', '=', projectId)
    .where('title', '=', 'Deploy')
    .executeTakeFirstOrThrow();
  const deploy = await insertReturningId(
    db,
    dialect,
    'template',
    template({
      name: 'Deploy app',
      type: 'deploy',
      playbook: 'deploy.yml',
      build_template_id: build,
      autorun: 1,
      vault_key_id: vaultKey,
      view_id: deployView.id,
      inventory_id: fileInventory,
      suppress_success_alerts: 1,
      allow_parallel_tasks: 1,
      allow_override_branch_in_task: 1,
    }),
  );
  await insertReturningId(
    db,
    dialect,
    'template',
    template({ name: 'Plan infra', app: 'tofu', playbook: 'infra', inventory_id: null }),
  );
  await insertReturningId(db, dialect, 'schedule', {
    project_id: projectId,
    template_id: build,
    cron_format: '0 3 * * *',
    repository_id: repository,
    name: 'Nightly build',
    active: 1,
    last_commit_hash: null,
    task_params: JSON.stringify({
      environment: '{"NIGHTLY":"1"}',
      inventory_id: inventory,
      message: 'nightly',
    }),
  });
  const integration = await insertReturningId(db, dialect, 'integration', {
    project_id: projectId,
    name: 'GitHub push',
    template_id: deploy,
    auth_method: 'github',
    auth_header: '',
    auth_secret_id: vaultKey,
    searchable: 1,
    task_params: JSON.stringify({ environment: '{"FROM":"hook"}', inventory_id: inventory, message: 'hook' }),
  });
  await db
    .insertInto('integration_matcher')
    .values({
      integration_id: integration,
      name: 'Main branch',
      match_type: 'body',
      body_data_type: 'json',
      key: 'ref',
      method: 'equals',
      value: 'refs/heads/main',
    })
    .execute();
  await db
    .insertInto('integration_extract_value')
    .values({
      integration_id: integration,
      name: 'Commit',
      value_source: 'body',
      body_data_type: 'json',
      key: 'after',
      variable: 'COMMIT',
      variable_type: 'environment',
    })
    .execute();
  await db
    .insertInto('integration_alias')
    .values([
      { project_id: projectId, integration_id: integration, alias: `${aliasPrefix}-integration` },
      { project_id: projectId, integration_id: null, alias: `${aliasPrefix}-project` },
    ])
    .execute();
  return { sshKey, vaultKey, repository, inventory, environment, build, deploy, integration };
}
