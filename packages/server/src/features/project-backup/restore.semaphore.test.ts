import { execFileSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apps, emptySurveyVar, inventoryTypes } from '@signalbox/contracts';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { gitRepo, outputOf, toolsOnPath, waitFor, waitForStatus } from '../../../test/support/task-fixtures';
import { sharedTempDir } from '../../../test/support/task-shared';
import { stripAnsi } from '../../lib/ansi';
import type { NewTask } from '../../ports';

/**
 * Backups written by hand in the format Semaphore UI exports, one per shape the peer has written over the years
 * (test/fixtures/semaphore-backups, see its README): each restores completely — every object, every link, every
 * secret a hand-completed backup carries — and its templates run. A bad backup is refused whole.
 */

type Json = Record<string, unknown>;
type Backup = Json & {
  keys: Json[];
  repositories: Json[];
  inventories: Json[];
  environments: Json[];
  templates: Json[];
  views?: Json[];
  schedules?: Json[];
  integrations?: Json[];
};

const fixture = (name: string): Backup =>
  JSON.parse(
    readFileSync(new URL(`../../../test/fixtures/semaphore-backups/${name}`, import.meta.url), 'utf8'),
  );

/** The fixture with some repository URLs and ssh private keys replaced (a git repository and keys made here). */
function prepared(
  name: string,
  opts: { urls?: Record<string, string>; privateKeys?: Record<string, string> } = {},
): Backup {
  const b = fixture(name);
  for (const r of b.repositories) if (opts.urls?.[r.name as string]) r.git_url = opts.urls[r.name as string];
  for (const k of b.keys) {
    const key = opts.privateKeys?.[k.name as string];
    if (key) (k.ssh as Json).private_key = key;
  }
  return b;
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** A new ed25519 key pair: the private key (OpenSSH format, encrypted with `passphrase` when given) and public key. */
function sshKeyPair(passphrase: string) {
  const dir = mkdtempSync(join(tmpdir(), 'sb-restore-key-'));
  execFileSync('ssh-keygen', [
    '-q',
    '-t',
    'ed25519',
    '-N',
    passphrase,
    '-C',
    'restore-test',
    '-f',
    join(dir, 'id'),
  ]);
  const pair = {
    privateKey: readFileSync(join(dir, 'id'), 'utf8'),
    publicKey: readFileSync(join(dir, 'id.pub'), 'utf8').trim().split(' ').slice(0, 2).join(' '),
  };
  rmSync(dir, { recursive: true, force: true });
  return pair;
}

/** Every table a restore writes to, or a task run of a restored template: a refused restore leaves them all as they were. */
const countedTables = [
  'project',
  'project_user',
  'access_key',
  'repository',
  'inventory',
  'environment',
  'view',
  'template',
  'schedule',
  'integration',
  'integration_alias',
  'integration_matcher',
  'integration_extract_value',
  'event',
  'task',
] as const;

async function counts(h: Harness) {
  const out: Record<string, number> = {};
  for (const table of countedTables) {
    const row = await h.deps.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  return out;
}

const parse = (text: string | null) => (text == null ? null : (JSON.parse(text) as unknown));

/**
 * A restored project read back from its rows, every id replaced by the name of the object it points at: what the
 * assertions compare with the backup. Secrets are left out (see secretsOf).
 */
async function readProject(h: Harness, projectId: number) {
  const db = h.deps.db;
  const [
    keyRows,
    repositories,
    inventories,
    environments,
    views,
    templates,
    schedules,
    integrations,
    aliases,
  ] = await Promise.all([
    db.selectFrom('access_key').selectAll().where('project_id', '=', projectId).orderBy('id').execute(),
    db.selectFrom('repository').selectAll().where('project_id', '=', projectId).orderBy('id').execute(),
    db.selectFrom('inventory').selectAll().where('project_id', '=', projectId).orderBy('id').execute(),
    db.selectFrom('environment').selectAll().where('project_id', '=', projectId).orderBy('id').execute(),
    db.selectFrom('view').selectAll().where('project_id', '=', projectId).orderBy('id').execute(),
    db.selectFrom('template').selectAll().where('project_id', '=', projectId).orderBy('id').execute(),
    db.selectFrom('schedule').selectAll().where('project_id', '=', projectId).orderBy('id').execute(),
    db.selectFrom('integration').selectAll().where('project_id', '=', projectId).orderBy('id').execute(),
    db
      .selectFrom('integration_alias')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('id')
      .execute(),
  ]);
  const ids = integrations.map((i) => i.id);
  const matchers = ids.length
    ? await db
        .selectFrom('integration_matcher')
        .selectAll()
        .where('integration_id', 'in', ids)
        .orderBy('id')
        .execute()
    : [];
  const values = ids.length
    ? await db
        .selectFrom('integration_extract_value')
        .selectAll()
        .where('integration_id', 'in', ids)
        .orderBy('id')
        .execute()
    : [];
  const nameIn =
    <R extends { id: number }>(list: R[], nameOf: (row: R) => string) =>
    (id: number | null) => {
      if (id == null) return null;
      const row = list.find((r) => r.id === id);
      if (!row) throw new Error(`dangling id ${id}`);
      return nameOf(row);
    };
  const key = nameIn(keyRows, (k) => k.name);
  const repository = nameIn(repositories, (r) => r.name);
  const inventory = nameIn(inventories, (i) => i.name);
  const environment = nameIn(environments, (e) => e.name);
  const view = nameIn(views, (v) => v.title);
  const template = nameIn(templates, (t) => t.name);
  const shared = keyRows.filter((k) => k.owner === '');
  return {
    keys: shared.map((k) => ({ name: k.name, type: k.type })),
    repositories: repositories.map((r) => ({
      name: r.name,
      git_url: r.git_url,
      git_branch: r.git_branch,
      ssh_key: key(r.ssh_key_id),
    })),
    inventories: inventories.map((i) => ({
      name: i.name,
      type: i.type,
      inventory: i.inventory,
      ssh_key: key(i.ssh_key_id),
      become_key: key(i.become_key_id),
      repository: repository(i.repository_id),
    })),
    environments: environments.map((e) => ({
      name: e.name,
      json: parse(e.json),
      env: parse(e.env),
      secrets: keyRows
        .filter((k) => k.environment_id === e.id)
        .map((k) => ({ name: k.name, owner: k.owner, type: k.type })),
    })),
    // No secret of an environment belongs to another project or to no environment.
    strayKeys: keyRows.filter((k) => k.owner !== '' && !environments.some((e) => e.id === k.environment_id)),
    views: views.map((v) => ({ title: v.title, position: v.position })),
    templates: templates.map((t) => ({
      name: t.name,
      description: t.description,
      app: t.app,
      type: t.type,
      playbook: t.playbook,
      arguments: t.arguments,
      inventory: inventory(t.inventory_id),
      repository: repository(t.repository_id),
      environment: environment(t.environment_id),
      vault_key: key(t.vault_key_id),
      vault_name: t.vault_name,
      vault_script: t.vault_script,
      view: view(t.view_id),
      build_template: template(t.build_template_id),
      start_version: t.start_version,
      autorun: Boolean(t.autorun),
      suppress_success_alerts: Boolean(t.suppress_success_alerts),
      allow_override_args_in_task: Boolean(t.allow_override_args_in_task),
      allow_override_branch_in_task: Boolean(t.allow_override_branch_in_task),
      allow_parallel_tasks: Boolean(t.allow_parallel_tasks),
      git_branch: t.git_branch,
      survey_vars: parse(t.survey_vars),
      task_params: parse(t.task_params),
    })),
    schedules: schedules.map((s) => ({
      name: s.name,
      template: template(s.template_id),
      cron_format: s.cron_format,
      active: Boolean(s.active),
      repository: repository(s.repository_id),
    })),
    integrations: integrations.map((i) => {
      const { inventory_id, ...params } = parse(i.task_params) as Json;
      return {
        name: i.name,
        template: template(i.template_id),
        auth_method: i.auth_method,
        auth_header: i.auth_header,
        auth_secret: key(i.auth_secret_id),
        searchable: Boolean(i.searchable),
        task_params: params,
        inventory: inventory((inventory_id as number | undefined) ?? null),
        aliases: aliases.filter((a) => a.integration_id === i.id).map((a) => a.alias),
        matchers: matchers
          .filter((m) => m.integration_id === i.id)
          .map(({ id: _id, integration_id: _i, ...m }) => m),
        extract_values: values
          .filter((v) => v.integration_id === i.id)
          .map(({ id: _id, integration_id: _i, ...v }) => v),
      };
    }),
    integration_aliases: aliases.filter((a) => a.integration_id == null).map((a) => a.alias),
  };
}

/** The decrypted secret of every key of the project by name (the test reads the rows; no API answers them). */
async function secretsOf(h: Harness, projectId: number) {
  const rows = await h.deps.db
    .selectFrom('access_key')
    .select(['name', 'owner', 'secret'])
    .where('project_id', '=', projectId)
    .execute();
  // Key store secrets are JSON ({login, password…}); an environment's secrets are their plain value.
  const open = (r: (typeof rows)[number]) =>
    r.secret ? (r.owner === '' ? parse(h.deps.box.open(r.secret)) : h.deps.box.open(r.secret)) : null;
  return Object.fromEntries(rows.map((r) => [r.name, open(r)]));
}

/** Starts a task of a restored template and waits for its end; its row and output text. */
async function run(h: Harness, client: Client, projectId: number, body: Json) {
  const res = await client.post(`/api/project/${projectId}/tasks`, body);
  expect(res.statusCode, res.body).toBe(201);
  const done = await waitForStatus(h.deps, res.json().id, ['success', 'error', 'stopped'], 60_000);
  const out = stripAnsi((await outputOf(h.deps, done.id)).join('\n'));
  return { done, out };
}

const templateId = async (h: Harness, projectId: number, name: string) =>
  (
    await h.deps.db
      .selectFrom('template')
      .select('id')
      .where('project_id', '=', projectId)
      .where('name', '=', name)
      .executeTakeFirstOrThrow()
  ).id;

/** What a bash script prints of a value: its sha256 (the task output masks secrets themselves). */
const shaLine = (label: string, variable: string) =>
  `echo "${label}=$(printf %s "${variable}" | sha256sum | cut -c1-64)"`;

describe.each(testDialects())('hand-built Semaphore backups on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  /** Tasks the scheduler, integrations and autorun asked for (recorded, not run). */
  const started: Array<{ projectId: number; input: NewTask }> = [];
  let outDir: string;
  let restorePath = () => {};
  let toolLog: string;

  beforeAll(async () => {
    h = await createHarness(
      dialect,
      {},
      {
        startTask: async (projectId, input) => {
          started.push({ projectId, input });
          return 0;
        },
      },
    );
    owner = await h.userClient({ can_create_project: true });
    outDir = sharedTempDir('sb-restore-out-');
    const tools = toolsOnPath({
      terraform: (log) => `#!/bin/bash
echo "terraform $*" >> ${log}
case "$1" in
  workspace) if [ "$2" = list ]; then echo "* default"; fi ;;
  plan)
    ${shaLine('admin_password_sha', '$TF_VAR_admin_password')}
    ${shaLine('signing_key_sha', '$TF_VAR_signing_key')}
    for a in "$@"; do case "$a" in -out=*) echo "saved plan" > "\${a#-out=}" ;; esac; done
    echo "Plan: 1 to add, 0 to change, 0 to destroy." ;;
  apply) echo "Apply complete! Resources: 1 added, 0 changed, 0 destroyed." ;;
esac
`,
    });
    restorePath = tools.restore;
    toolLog = tools.record;
  });
  afterAll(async () => {
    restorePath();
    rmSync(outDir, { recursive: true, force: true });
    await h?.close();
  });

  const restore = (backup: unknown) => owner.post('/api/projects/restore', backup);

  describe('a current (2.17) backup with every kind of object', () => {
    const opsKey = sshKeyPair('ops-passphrase-2.17');
    const deployKey = sshKeyPair('');
    let repoDir: string;
    let backup: Backup;
    let projectId: number;

    beforeAll(async () => {
      const vaultPass = join(outDir, 'vault-pass');
      writeFileSync(vaultPass, 'vault-secret-2.17');
      const vaulted = execFileSync('ansible-vault', [
        'encrypt_string',
        '--vault-password-file',
        vaultPass,
        'vaulted-plain-value',
        '--name',
        'vaulted',
      ]).toString();
      rmSync(vaultPass);
      repoDir = gitRepo({
        'site.yml': `- hosts: all
  gather_facts: false
  vars_files:
    - vaulted.yml
  tasks:
    - name: keys in the agent
      command: ssh-add -L
      register: agent
      check_mode: false
    - name: record what the playbook saw
      copy:
        dest: "{{ out_file }}"
        content: "{{ {'region': region, 'replicas': replicas, 'release': release, 'plain_env': lookup('env', 'PLAIN_ENV'), 'db_password': db_password, 'api_token': lookup('env', 'API_TOKEN'), 'vaulted': vaulted, 'become_password': lookup('file', lookup('env', 'ANSIBLE_BECOME_PASSWORD_FILE')), 'admin_password': admin_password, 'agent': agent.stdout_lines} | to_nice_json }}"
`,
        'vaulted.yml': vaulted,
        'build.sh': 'echo "building $SEMAPHORE_TASK_TARGET_VERSION"\n',
        'deploy.sh': 'echo "deploying $SEMAPHORE_TASK_INCOMING_VERSION"\n',
      });
      backup = prepared('semaphore-2.17-full.json', {
        urls: { Playbooks: `file://${repoDir}` },
        privateKeys: { 'Ops SSH': opsKey.privateKey, 'Deploy key': deployKey.privateKey },
      });
      const res = await restore(backup);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        name: 'Platform ops',
        alert: true,
        alert_chat: '-1001234567',
        max_parallel_tasks: 2,
        type: '',
        task_retention_days: 0,
      });
      projectId = res.json().id;
    });

    it('restores every object and every link', async () => {
      const p = await readProject(h, projectId);
      const fixtureTemplate = (name: string) => backup.templates.find((t) => t.name === name) as Json;
      expect(p.keys).toEqual([
        { name: 'None', type: 'none' },
        { name: 'Deploy key', type: 'ssh' },
        { name: 'Ops SSH', type: 'ssh' },
        { name: 'Become root', type: 'login_password' },
        { name: 'Vault password', type: 'login_password' },
        { name: 'Webhook secret', type: 'login_password' },
        { name: 'HTTPS token', type: 'login_password' },
        { name: 'To fill in', type: 'login_password' },
      ]);
      expect(p.repositories).toEqual([
        { name: 'Playbooks', git_url: `file://${repoDir}`, git_branch: 'main', ssh_key: 'Deploy key' },
        {
          name: 'Infra',
          git_url: 'https://git.example.test/ops/infra.git',
          git_branch: 'main',
          ssh_key: 'HTTPS token',
        },
      ]);
      expect(p.inventories).toEqual([
        {
          name: 'Local',
          type: 'static',
          inventory:
            '[local]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n',
          ssh_key: 'Ops SSH',
          become_key: 'Become root',
          repository: null,
        },
        {
          name: 'Web YAML',
          type: 'static-yaml',
          inventory:
            'all:\n  children:\n    web:\n      hosts:\n        web1.example.test:\n        web2.example.test:\n',
          ssh_key: 'Ops SSH',
          become_key: null,
          repository: null,
        },
        {
          name: 'Prod hosts',
          type: 'file',
          inventory: 'inventories/prod.ini',
          ssh_key: 'Ops SSH',
          become_key: 'Become root',
          repository: null,
        },
        // Workspaces run with the project's None key, whatever the backup says.
        {
          name: 'Staging workspace',
          type: 'terraform-workspace',
          inventory: 'staging',
          ssh_key: 'None',
          become_key: null,
          repository: null,
        },
        {
          name: 'Tofu dev',
          type: 'tofu-workspace',
          inventory: 'dev',
          ssh_key: 'None',
          become_key: null,
          repository: null,
        },
      ]);
      expect(p.environments).toEqual([
        { name: 'Empty', json: {}, env: {}, secrets: [] },
        {
          name: 'Production',
          json: { region: 'eu-west-1', replicas: 3 },
          env: { PLAIN_ENV: 'plain-value' },
          secrets: [
            { name: 'db_password', owner: 'variable', type: 'string' },
            { name: 'API_TOKEN', owner: 'environment', type: 'string' },
          ],
        },
      ]);
      expect(p.strayKeys).toEqual([]);
      // The peer's built-in "All" tab is not a view here: every project shows all templates by itself.
      expect(p.views).toEqual([
        { title: 'Deploy', position: 1 },
        { title: 'Infra', position: 2 },
        { title: 'Tools', position: 3 },
      ]);
      const defaults = {
        description: '',
        arguments: '[]',
        inventory: null,
        vault_key: null,
        vault_name: null,
        vault_script: null,
        view: null,
        build_template: null,
        start_version: null,
        autorun: false,
        suppress_success_alerts: false,
        allow_override_args_in_task: false,
        allow_override_branch_in_task: false,
        allow_parallel_tasks: false,
        git_branch: null,
        survey_vars: [],
        task_params: {},
      };
      expect(p.templates).toEqual([
        {
          ...defaults,
          name: 'Site',
          description: 'Configures every host',
          app: 'ansible',
          type: '',
          playbook: 'site.yml',
          inventory: 'Local',
          repository: 'Playbooks',
          environment: 'Production',
          vault_key: 'Vault password',
          // The vault keeps the name the backup gave it (Ansible gets `--vault-id prod@…`).
          vault_name: 'prod',
          view: 'Deploy',
          allow_parallel_tasks: true,
          survey_vars: fixtureTemplate('Site').survey_vars,
          task_params: fixtureTemplate('Site').task_params,
        },
        {
          ...defaults,
          name: 'Build app',
          description: 'Builds a release',
          app: 'bash',
          type: 'build',
          playbook: 'build.sh',
          repository: 'Playbooks',
          environment: 'Production',
          view: 'Deploy',
          start_version: '1.4.0',
          suppress_success_alerts: true,
          survey_vars: fixtureTemplate('Build app').survey_vars,
        },
        {
          ...defaults,
          name: 'Deploy app',
          description: 'Deploys the last build',
          app: 'bash',
          type: 'deploy',
          playbook: 'deploy.sh',
          arguments: '["--verbose"]',
          allow_override_args_in_task: true,
          repository: 'Playbooks',
          environment: 'Production',
          view: 'Deploy',
          build_template: 'Build app',
          autorun: true,
        },
        {
          ...defaults,
          name: 'Plan network',
          app: 'terraform',
          type: '',
          playbook: 'network',
          inventory: 'Staging workspace',
          repository: 'Infra',
          environment: 'Production',
          view: 'Infra',
          task_params: {
            allow_destroy: true,
            allow_auto_approve: true,
            auto_approve: false,
            override_backend: true,
            backend_filename: 'backend_override.tf',
          },
        },
        {
          ...defaults,
          name: 'Tofu dev',
          app: 'tofu',
          type: '',
          playbook: 'tofu',
          inventory: 'Tofu dev',
          repository: 'Infra',
          environment: 'Empty',
          view: 'Infra',
        },
        {
          ...defaults,
          name: 'Pulumi stack',
          app: 'pulumi',
          type: '',
          playbook: 'pulumi',
          repository: 'Infra',
          environment: 'Empty',
          view: 'Tools',
        },
        {
          ...defaults,
          name: 'Ping web',
          app: 'ansible',
          type: '',
          playbook: 'ping.yml',
          inventory: 'Web YAML',
          repository: 'Playbooks',
          environment: 'Empty',
          git_branch: 'release',
          allow_override_branch_in_task: true,
          task_params: { allow_debug: false, limit: ['web'], tags: ['ping'], skip_tags: [] },
        },
        {
          ...defaults,
          name: 'Ping prod',
          app: 'ansible',
          type: '',
          playbook: 'ping.yml',
          inventory: 'Prod hosts',
          repository: 'Playbooks',
          environment: 'Production',
        },
      ]);
      // The schedules list wins over the templates' `cron` (the peer writes the first schedule there too).
      expect(p.schedules).toEqual([
        { name: 'Nightly site', template: 'Site', cron_format: '0 3 * * *', active: true, repository: null },
        {
          name: 'Build on commit',
          template: 'Build app',
          cron_format: '*/5 * * * *',
          active: true,
          repository: 'Playbooks',
        },
        {
          name: 'Friday plan',
          template: 'Plan network',
          cron_format: '30 22 * * 5',
          active: false,
          repository: null,
        },
      ]);
      expect(p.integrations).toEqual([
        {
          name: 'GitHub push',
          template: 'Build app',
          auth_method: 'github',
          auth_header: '',
          auth_secret: 'Webhook secret',
          searchable: true,
          task_params: { environment: '{"DEPLOY_REASON":"push"}', message: 'from GitHub', params: {} },
          inventory: null,
          aliases: ['gh7Qm2Lx9PzR4tWvK8aD'],
          matchers: [
            {
              name: 'Main branch',
              match_type: 'body',
              body_data_type: 'json',
              key: 'ref',
              method: 'equals',
              value: 'refs/heads/main',
            },
            {
              name: 'Push event',
              match_type: 'header',
              body_data_type: 'string',
              key: 'X-GitHub-Event',
              method: 'equals',
              value: 'push',
            },
          ],
          extract_values: [
            {
              name: 'Commit',
              value_source: 'body',
              body_data_type: 'json',
              key: 'after',
              variable: 'COMMIT_SHA',
              variable_type: 'environment',
            },
            {
              name: 'Pusher',
              value_source: 'body',
              body_data_type: 'json',
              key: 'pusher.name',
              variable: 'PUSHER',
              variable_type: 'environment',
            },
          ],
        },
        {
          name: 'Token deploy',
          template: 'Site',
          auth_method: 'token',
          auth_header: 'X-Deploy-Token',
          auth_secret: 'Webhook secret',
          searchable: false,
          task_params: { environment: '{}', message: 'token deploy', params: {} },
          inventory: 'Local',
          aliases: ['tok3Nn8Vb5Qw1Zx0Rt6Y'],
          matchers: [
            {
              name: 'Web service',
              match_type: 'body',
              body_data_type: 'json',
              key: 'service',
              method: 'contains',
              value: 'web',
            },
          ],
          extract_values: [
            {
              name: 'Limit',
              value_source: 'header',
              body_data_type: 'string',
              key: 'X-Limit',
              variable: 'limit',
              variable_type: 'task',
            },
          ],
        },
      ]);
      expect(p.integration_aliases).toEqual(['projA1b2C3d4E5f6G7h8']);

      // The API answers the restored objects in its own shapes (every answer is checked against its schema).
      for (const path of [
        'keys',
        'repositories',
        'inventory',
        'environment',
        'views',
        'templates',
        'schedules',
      ])
        expect((await owner.get(`/api/project/${projectId}/${path}`)).statusCode, path).toBe(200);
      const templates = (await owner.get(`/api/project/${projectId}/templates`)).json() as Json[];
      expect(templates.find((t) => t.name === 'Site')?.survey_vars).toEqual([
        {
          ...emptySurveyVar,
          name: 'release',
          title: 'Release',
          description: 'Release tag to roll out',
          type: '',
          required: true,
          values: [],
          default_value: 'v1',
        },
        {
          ...emptySurveyVar,
          name: 'replicas',
          title: 'Replicas',
          description: '',
          type: 'int',
          required: false,
          values: [],
          default_value: '2',
        },
        {
          ...emptySurveyVar,
          name: 'colour',
          title: 'Colour',
          description: '',
          type: 'enum',
          required: false,
          values: [
            { name: 'Blue', value: 'blue' },
            { name: 'Green', value: 'green' },
          ],
          default_value: '',
        },
        {
          ...emptySurveyVar,
          name: 'admin_password',
          title: 'Admin password',
          description: '',
          type: 'secret',
          required: false,
          values: [],
          default_value: '',
        },
      ]);
    });

    it('keeps every secret the backup carries, sealed; a key without one comes back empty', async () => {
      expect(await secretsOf(h, projectId)).toEqual({
        None: null,
        'Deploy key': { login: 'git', passphrase: '', private_key: deployKey.privateKey },
        'Ops SSH': { login: 'ops', passphrase: 'ops-passphrase-2.17', private_key: opsKey.privateKey },
        'Become root': { login: 'root', password: 'become-secret-2.17' },
        'Vault password': { login: '', password: 'vault-secret-2.17' },
        'Webhook secret': { login: '', password: 'webhook-secret-2.17' },
        'HTTPS token': { login: 'ci-bot', password: 'https-token-2.17' },
        'To fill in': { login: '', password: '' },
        db_password: 'db-secret-2.17',
        API_TOKEN: 'api-token-2.17',
      });
      const stored = JSON.stringify(
        await h.deps.db
          .selectFrom('access_key')
          .select('secret')
          .where('project_id', '=', projectId)
          .execute(),
      );
      for (const secret of ['become-secret-2.17', 'vault-secret-2.17', 'db-secret-2.17', 'api-token-2.17'])
        expect(stored).not.toContain(secret);
      // Nothing the API answers about the restored project holds one.
      for (const path of ['keys', 'environment', 'backup']) {
        const body = (await owner.get(`/api/project/${projectId}/${path}`)).body;
        for (const secret of [
          'become-secret-2.17',
          'vault-secret-2.17',
          'db-secret-2.17',
          'ops-passphrase-2.17',
        ])
          expect(body, path).not.toContain(secret);
      }
    });

    it('runs the restored ansible template with the secrets of the backup', async () => {
      const outFile = join(outDir, 'site.json');
      const { done, out } = await run(h, owner, projectId, {
        template_id: await templateId(h, projectId, 'Site'),
        environment: JSON.stringify({ out_file: outFile, release: 'v9' }),
        secret: JSON.stringify({ admin_password: 'admin-secret-run' }),
      });
      expect(done.status, out).toBe('success');
      const seen = JSON.parse(readFileSync(outFile, 'utf8'));
      expect(seen).toEqual({
        region: 'eu-west-1',
        replicas: 3,
        release: 'v9',
        plain_env: 'plain-value',
        // Environment secrets (an extra variable and an environment variable), the vault password that opened
        // vaulted.yml, the become password and the passphrase-protected key now in the task's ssh-agent.
        db_password: 'db-secret-2.17',
        api_token: 'api-token-2.17',
        vaulted: 'vaulted-plain-value',
        become_password: 'become-secret-2.17',
        admin_password: 'admin-secret-run',
        agent: [`${opsKey.publicKey} restore-test`],
      });
      // The repository was fetched over file:// with its key loaded into an ssh-agent first: a key without its
      // private key (or with a wrong one) would have failed the task before the playbook ran.
      expect(out).toContain('Updating repository Playbooks');
      for (const secret of [
        'become-secret-2.17',
        'vault-secret-2.17',
        'db-secret-2.17',
        'ops-passphrase-2.17',
      ])
        expect(out).not.toContain(secret);
    });

    it('runs the restored bash build; its deploy follows it automatically', async () => {
      const build = await templateId(h, projectId, 'Build app');
      const deploy = await templateId(h, projectId, 'Deploy app');
      const { done, out } = await run(h, owner, projectId, { template_id: build });
      expect(done.status, out).toBe('success');
      expect(out).toContain('building 1.4.0');
      const autorun = await waitFor(
        async () => started.find((s) => s.projectId === projectId && s.input.build_task_id === done.id),
        20_000,
        'the autorun of the deploy template',
      );
      expect(autorun.input).toEqual({ template_id: deploy, build_task_id: done.id });
      const deployed = await run(h, owner, projectId, { template_id: deploy, build_task_id: done.id });
      expect(deployed.done.status, deployed.out).toBe('success');
      expect(deployed.out).toContain('deploying 1.4.0');
    });

    it('answers webhooks through the restored integrations: secret, matchers and extracted values', async () => {
      const body = JSON.stringify({ ref: 'refs/heads/main', after: 'abc123', pusher: { name: 'octo' } });
      const signature = (secret: string) =>
        `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
      const post = (alias: string, headers: Record<string, string>, payload = body) =>
        h.app.inject({
          method: 'POST',
          url: `/api/integrations/${alias}`,
          headers: { 'content-type': 'application/json', ...headers },
          payload,
        });
      const build = await templateId(h, projectId, 'Build app');
      const site = await templateId(h, projectId, 'Site');
      const before = started.length;
      // A signature made with another secret is refused: the restored secret is the backup's.
      const wrong = await post('projA1b2C3d4E5f6G7h8', {
        'x-github-event': 'push',
        'x-hub-signature-256': signature('not-the-secret'),
      });
      expect(wrong.statusCode).toBe(401);
      expect(started.length).toBe(before);
      // Through the project alias, only the integration whose matchers all match fires.
      const ok = await post('projA1b2C3d4E5f6G7h8', {
        'x-github-event': 'push',
        'x-hub-signature-256': signature('webhook-secret-2.17'),
      });
      expect(ok.statusCode).toBe(204);
      expect(started.slice(before)).toEqual([
        {
          projectId,
          input: {
            template_id: build,
            environment: JSON.stringify({ COMMIT_SHA: 'abc123', PUSHER: 'octo', DEPLOY_REASON: 'push' }),
            message: 'from GitHub',
          },
        },
      ]);
      // A body the matchers refuse starts nothing.
      const other = JSON.stringify({ ref: 'refs/heads/dev', after: 'def' });
      const skipped = await post(
        'projA1b2C3d4E5f6G7h8',
        {
          'x-github-event': 'push',
          'x-hub-signature-256': `sha256=${createHmac('sha256', 'webhook-secret-2.17').update(other).digest('hex')}`,
        },
        other,
      );
      expect(skipped.statusCode).toBe(204);
      expect(started.length).toBe(before + 1);
      // The token integration's own alias: its header secret, its matcher (applied on every alias), its inventory
      // and a task parameter from a header.
      const token = await post(
        'tok3Nn8Vb5Qw1Zx0Rt6Y',
        { 'x-deploy-token': 'webhook-secret-2.17', 'x-limit': 'web1' },
        JSON.stringify({ service: 'web-frontend' }),
      );
      expect(token.statusCode).toBe(204);
      const local = (
        await h.deps.db
          .selectFrom('inventory')
          .select('id')
          .where('project_id', '=', projectId)
          .where('name', '=', 'Local')
          .executeTakeFirstOrThrow()
      ).id;
      expect(started.slice(before + 1)).toEqual([
        {
          projectId,
          input: {
            template_id: site,
            params: { limit: 'web1' },
            message: 'token deploy',
            inventory_id: local,
          },
        },
      ]);
    });

    it('backs the restored project up into the same objects, secrets left out', async () => {
      const again = (await owner.get(`/api/project/${projectId}/backup`)).json();
      const text = JSON.stringify(again);
      for (const secret of ['webhook-secret-2.17', 'api-token-2.17', 'ops-passphrase-2.17'])
        expect(text).not.toContain(secret);
      const restored = await restore(again);
      expect(restored.statusCode, restored.body).toBe(200);
      const copy = await readProject(h, restored.json().id);
      const original = await readProject(h, projectId);
      // Aliases are unique across the server (the copy gets new ones); environment secrets are not in a backup.
      const comparable = (p: typeof original) => ({
        ...p,
        environments: p.environments.map((e) => ({ ...e, secrets: [] })),
        integrations: p.integrations.map((i) => ({ ...i, aliases: i.aliases.length })),
        integration_aliases: p.integration_aliases.length,
      });
      expect(comparable(copy)).toEqual(comparable(original));
    });
  });

  describe('an old (2.8) backup: no views, integrations or schedules, no app, type or key owner', () => {
    let repoDir: string;
    let projectId: number;

    beforeAll(async () => {
      repoDir = gitRepo({
        'ping.yml': `- hosts: all
  gather_facts: false
  tasks:
    - debug:
        msg: "{{ greeting }} on ports {{ ports | join(',') }}"
`,
      });
      // A key without a secret cannot fetch over ssh: the copy here is a local repository, used in place.
      const res = await restore(prepared('semaphore-2.8-legacy.json', { urls: { 'Ansible repo': repoDir } }));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ name: 'legacy-ops', alert: false, alert_chat: null, type: '' });
      projectId = res.json().id;
    });

    it('restores every object with the defaults of the fields it lacks', async () => {
      const p = await readProject(h, projectId);
      expect(p.keys).toEqual([
        { name: 'None', type: 'none' },
        { name: 'Old deploy', type: 'ssh' },
        { name: 'Vault', type: 'login_password' },
        { name: 'Sudo', type: 'login_password' },
      ]);
      expect(await secretsOf(h, projectId)).toEqual({
        None: null,
        'Old deploy': { login: '', passphrase: '', private_key: '' },
        Vault: { login: '', password: '' },
        Sudo: { login: '', password: '' },
      });
      // A local repository has no branch (the API stores it so too).
      expect(p.repositories).toEqual([
        { name: 'Ansible repo', git_url: repoDir, git_branch: '', ssh_key: 'Old deploy' },
      ]);
      expect(p.inventories).toEqual([
        {
          name: 'Localhost',
          type: 'static',
          inventory:
            '[local]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n',
          ssh_key: 'None',
          become_key: null,
          repository: null,
        },
        // A file inventory without a path, as the peer keeps them: the checkout is the inventory.
        {
          name: 'Dev',
          type: 'file',
          inventory: '',
          ssh_key: 'None',
          become_key: 'None',
          repository: null,
        },
        {
          name: 'Production',
          type: 'file',
          inventory: 'inventories/production',
          ssh_key: 'Old deploy',
          become_key: 'Sudo',
          repository: null,
        },
      ]);
      expect(p.environments).toEqual([
        { name: 'Empty', json: {}, env: {}, secrets: [] },
        { name: 'Vars', json: { greeting: 'hello from 2.8', ports: [80, 443] }, env: {}, secrets: [] },
      ]);
      expect(p.views).toEqual([]);
      expect(
        p.templates.map((t) => [t.name, t.app, t.type, t.inventory, t.environment, t.vault_key]),
      ).toEqual([
        ['Ping', 'ansible', '', 'Localhost', 'Vars', null],
        ['Deploy site', 'ansible', '', 'Production', 'Vars', 'Vault'],
        // No environment: the project's Empty one, as for a template saved through the API.
        ['Clean tmp', 'ansible', '', 'Localhost', 'Empty', null],
      ]);
      const deploy = p.templates[1];
      expect(deploy).toMatchObject({
        description: 'Rolls the site out to production',
        arguments: '["--diff"]',
        allow_override_args_in_task: true,
        suppress_success_alerts: true,
        repository: 'Ansible repo',
        survey_vars: [
          {
            name: 'target',
            title: 'Target host',
            required: true,
            type: '',
            description: 'Which host to deploy',
          },
          { name: 'retries', title: 'Retries', required: false, type: 'int', description: '' },
        ],
      });
      expect(p.templates[0]).toMatchObject({
        description: '',
        arguments: null,
        survey_vars: [],
        task_params: {},
      });
      // Without a schedules list, each template's cron is its schedule.
      expect(p.schedules).toEqual([
        { name: '', template: 'Deploy site', cron_format: '0 4 * * 1', active: true, repository: null },
        { name: '', template: 'Clean tmp', cron_format: '15 1 * * *', active: true, repository: null },
      ]);
      expect(p.integrations).toEqual([]);
      expect(p.integration_aliases).toEqual([]);
    });

    it('runs a restored template that needs no secret', async () => {
      const { done, out } = await run(h, owner, projectId, {
        template_id: await templateId(h, projectId, 'Ping'),
      });
      expect(done.status, out).toBe('success');
      expect(out).toContain('hello from 2.8 on ports 80,443');
    });
  });

  describe('a 2.12 backup around Terraform and Bash: build and deploy, secret survey values, schedules', () => {
    const runnerKey = sshKeyPair('runner-passphrase-2.12');
    let pipelines: string;
    let modules: string;
    let projectId: number;

    beforeAll(async () => {
      pipelines = gitRepo({
        'ci/build.sh': [
          'echo "type=$SEMAPHORE_TASK_TYPE version=$SEMAPHORE_TASK_TARGET_VERSION"',
          'echo "pipeline_env=$PIPELINE_ENV automation=$TF_IN_AUTOMATION"',
          shaLine('deploy_token_sha', '$DEPLOY_TOKEN'),
          shaLine('signing_key_sha', '$signing_key'),
          shaLine('passphrase_sha', '$signing_passphrase'),
          'echo "args: $*"',
          '',
        ].join('\n'),
        'ci/release.sh': 'echo "type=$SEMAPHORE_TASK_TYPE incoming=$SEMAPHORE_TASK_INCOMING_VERSION"\n',
      });
      modules = gitRepo({ 'envs/prod/main.tf': 'resource "null_resource" "prod" {}\n' });
      const res = await restore(
        prepared('semaphore-2.12-terraform-bash.json', {
          urls: { Pipelines: `file://${pipelines}`, Modules: `file://${modules}` },
          privateKeys: { 'Runner SSH': runnerKey.privateKey },
        }),
      );
      expect(res.statusCode, res.body).toBe(200);
      projectId = res.json().id;
    });

    it('restores every object and every link', async () => {
      const p = await readProject(h, projectId);
      expect(p.keys.map((k) => k.name)).toEqual(['None', 'Git token', 'Ansible vault', 'Runner SSH']);
      expect(await secretsOf(h, projectId)).toMatchObject({
        'Git token': { login: 'ci', password: 'git-token-2.12' },
        'Ansible vault': { login: '', password: 'ansible-vault-2.12' },
        'Runner SSH': {
          login: 'runner',
          passphrase: 'runner-passphrase-2.12',
          private_key: runnerKey.privateKey,
        },
        DEPLOY_TOKEN: 'deploy-token-2.12',
        signing_key: 'signing-key-2.12',
      });
      expect(p.repositories.map((r) => [r.name, r.ssh_key])).toEqual([
        ['Pipelines', 'Git token'],
        ['Modules', 'Git token'],
      ]);
      expect(p.inventories.map((i) => [i.name, i.type, i.inventory, i.ssh_key])).toEqual([
        ['Prod workspace', 'terraform-workspace', 'prod', 'None'],
        ['Dev workspace', 'tofu-workspace', 'dev', 'None'],
        [
          'Build hosts',
          'static',
          '[build]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n',
          'Runner SSH',
        ],
      ]);
      expect(p.environments[1]).toEqual({
        name: 'Pipeline',
        json: { artifact_bucket: 's3://artifacts' },
        env: { TF_IN_AUTOMATION: '1', PIPELINE_ENV: 'production' },
        secrets: [
          { name: 'DEPLOY_TOKEN', owner: 'environment', type: 'string' },
          { name: 'signing_key', owner: 'variable', type: 'string' },
        ],
      });
      expect(p.views).toEqual([
        { title: 'Build', position: 0 },
        { title: 'Release', position: 1 },
      ]);
      expect(
        p.templates.map((t) => [
          t.name,
          t.app,
          t.type,
          t.inventory,
          t.repository,
          t.environment,
          t.view,
          t.build_template,
          t.start_version,
          t.autorun,
          t.vault_key,
        ]),
      ).toEqual([
        [
          'Build artifact',
          'bash',
          'build',
          null,
          'Pipelines',
          'Pipeline',
          'Build',
          null,
          '2.3.0',
          false,
          null,
        ],
        [
          'Release artifact',
          'bash',
          'deploy',
          null,
          'Pipelines',
          'Pipeline',
          'Release',
          'Build artifact',
          null,
          true,
          null,
        ],
        [
          'Apply prod',
          'terraform',
          '',
          'Prod workspace',
          'Modules',
          'Pipeline',
          'Release',
          null,
          null,
          false,
          null,
        ],
        ['Plan dev', 'tofu', '', 'Dev workspace', 'Modules', 'Empty', 'Build', null, null, false, null],
        [
          'Configure build hosts',
          'ansible',
          '',
          'Build hosts',
          'Pipelines',
          'Pipeline',
          null,
          null,
          null,
          false,
          'Ansible vault',
        ],
      ]);
      expect(p.templates[0]?.survey_vars).toEqual(
        fixture('semaphore-2.12-terraform-bash.json').templates[0]?.survey_vars,
      );
      expect(p.templates[2]?.task_params).toEqual({ allow_destroy: false, auto_approve: true });
      expect(p.schedules).toEqual([
        {
          name: 'Build on commit',
          template: 'Build artifact',
          cron_format: '*/10 * * * *',
          active: true,
          repository: 'Pipelines',
        },
        {
          name: 'Nightly plan',
          template: 'Plan dev',
          cron_format: '0 2 * * *',
          active: true,
          repository: null,
        },
      ]);
      // The ids an older peer wrote beside the names mean nothing here: only the names link.
      expect(p.integrations).toEqual([
        {
          name: 'Registry hook',
          template: 'Release artifact',
          auth_method: 'hmac',
          auth_header: 'X-Signature',
          auth_secret: 'Git token',
          searchable: false,
          task_params: {},
          inventory: null,
          aliases: ['reg4Hq8Zt2Wm6Xp1Lc9V'],
          matchers: [
            {
              name: 'Tag push',
              match_type: 'body',
              body_data_type: 'json',
              key: 'push_data.tag',
              method: 'contains',
              value: 'v',
            },
          ],
          extract_values: [
            {
              name: 'Tag',
              value_source: 'body',
              body_data_type: 'json',
              key: 'push_data.tag',
              variable: 'RELEASE_TAG',
              variable_type: 'environment',
            },
            // The whole body as text needs no key.
            {
              name: 'Payload',
              value_source: 'body',
              body_data_type: 'string',
              key: '',
              variable: 'PAYLOAD',
              variable_type: 'environment',
            },
          ],
        },
      ]);
      expect(p.integration_aliases).toEqual([]);
    });

    it('runs the bash build with every value, and its deploy with the build version', async () => {
      const build = await templateId(h, projectId, 'Build artifact');
      const { done, out } = await run(h, owner, projectId, {
        template_id: build,
        environment: JSON.stringify({ channel: 'stable' }),
        secret: JSON.stringify({ signing_passphrase: 'passphrase-run' }),
      });
      expect(done.status, out).toBe('success');
      expect(out).toContain('type=build version=2.3.0');
      expect(out).toContain('pipeline_env=production automation=1');
      expect(out).toContain(`deploy_token_sha=${sha('deploy-token-2.12')}`);
      expect(out).toContain(`signing_key_sha=${sha('signing-key-2.12')}`);
      expect(out).toContain(`passphrase_sha=${sha('passphrase-run')}`);
      expect(out).toMatch(/args: .*artifact_bucket=s3:\/\/artifacts/);
      expect(out).toMatch(/args: .*channel=stable/);
      const release = await templateId(h, projectId, 'Release artifact');
      await waitFor(
        async () => started.find((s) => s.input.template_id === release && s.input.build_task_id === done.id),
        20_000,
        'the autorun of the release template',
      );
      const deployed = await run(h, owner, projectId, { template_id: release, build_task_id: done.id });
      expect(deployed.done.status, deployed.out).toBe('success');
      expect(deployed.out).toContain('type=deploy incoming=2.3.0');
    });

    it('runs the terraform template in its workspace with its secret values', async () => {
      writeFileSync(toolLog, '');
      const { done, out } = await run(h, owner, projectId, {
        template_id: await templateId(h, projectId, 'Apply prod'),
        secret: JSON.stringify({ admin_password: 'admin-run-2.12' }),
      });
      expect(done.status, out).toBe('success');
      const calls = readFileSync(toolLog, 'utf8');
      expect(calls).toMatch(/terraform workspace select -or-create=true prod/);
      expect(calls).toMatch(/terraform plan -lock-timeout=5m -var artifact_bucket=s3:\/\/artifacts -out=/);
      expect(calls).toMatch(/terraform apply -lock-timeout=5m -auto-approve/);
      expect(out).toContain(`admin_password_sha=${sha('admin-run-2.12')}`);
      expect(out).toContain(`signing_key_sha=${sha('signing-key-2.12')}`);
    });
  });

  it('restores templates of the apps and inventories this build has; names the first it has not', async () => {
    const backup = fixture('semaphore-2.17-newer-apps.json');
    const known = (list: readonly string[], value: unknown) => list.includes(value as string);
    const badInventory = backup.inventories.findIndex((i) => !known(inventoryTypes, i.type));
    const badTemplate = backup.templates.findIndex((t) => !known(apps, t.app));
    const before = await counts(h);
    const res = await restore(backup);
    if (badInventory >= 0) {
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatch(
        new RegExp(`^Invalid backup: inventories\\[${badInventory}\\]\\.type: `),
      );
      expect(await counts(h)).toEqual(before);
    } else if (badTemplate >= 0) {
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatch(new RegExp(`^Invalid backup: templates\\[${badTemplate}\\]\\.app: `));
      expect(await counts(h)).toEqual(before);
    } else {
      expect(res.statusCode, res.body).toBe(200);
      const p = await readProject(h, res.json().id);
      expect(p.templates.map((t) => [t.name, t.app, t.inventory])).toEqual(
        backup.templates.map((t) => [t.name, t.app, t.inventory ?? null]),
      );
    }
  });

  it('restores run-once schedules: one still to come armed, one whose time has passed disabled', async () => {
    const backup = fixture('semaphore-2.17-full.json');
    const future = new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString();
    Object.assign(backup.schedules![0]!, { type: 'run_at', run_at: future, delete_after_run: true });
    Object.assign(backup.schedules![2]!, {
      type: 'run_at',
      run_at: '2020-01-01T00:00:00+02:00',
      active: true,
    });
    const res = await restore(backup);
    expect(res.statusCode, res.body).toBe(200);
    const rows = await h.deps.db
      .selectFrom('schedule')
      .select(['name', 'type', 'cron_format', 'run_at', 'delete_after_run', 'active', 'repository_id'])
      .where('project_id', '=', res.json().id)
      .orderBy('id')
      .execute();
    expect([rows[0], rows[2]]).toEqual([
      {
        name: backup.schedules![0]!.name,
        type: 'run_at',
        cron_format: '',
        run_at: future,
        delete_after_run: 1,
        active: 1,
        repository_id: null,
      },
      {
        name: backup.schedules![2]!.name,
        type: 'run_at',
        cron_format: '',
        run_at: '2019-12-31T22:00:00.000Z',
        delete_after_run: 0,
        active: 0,
        repository_id: null,
      },
    ]);
    expect(rows[1]).toMatchObject({ type: '', run_at: null, cron_format: backup.schedules![1]!.cron_format });
  });

  describe('a bad backup', () => {
    /** The 2.17 backup changed by `change`; the restore must answer 400 `error` and write nothing. */
    const cases: Array<[string, (b: Backup) => void, string]> = [
      [
        'a template pointing at a missing inventory',
        (b) => {
          b.templates[0]!.inventory = 'Nowhere';
        },
        'Invalid backup: templates[0].inventory: inventory "Nowhere" is not in inventories',
      ],
      [
        'a schedule of a missing template',
        (b) => {
          b.schedules![1]!.template = 'Gone';
        },
        'Invalid backup: schedules[1].template: template "Gone" is not in templates',
      ],
      [
        'an integration with a missing secret',
        (b) => {
          b.integrations![1]!.auth_secret = 'Lost';
        },
        'Invalid backup: integrations[1].auth_secret: key "Lost" is not in keys',
      ],
      [
        'a vault key that is not there',
        (b) => {
          b.templates[0]!.vaults = [{ type: 'password', vault_key: 'Old vault' }];
        },
        'Invalid backup: templates[0].vaults[0].vault_key: key "Old vault" is not in keys',
      ],
      [
        'a key type Signalbox has not',
        (b) => {
          b.keys[7]!.type = 'string';
        },
        'Invalid backup: keys[7].type: Type must be one of none, ssh, login_password',
      ],
      [
        'a value of the wrong JSON type',
        (b) => {
          b.templates[2]!.autorun = 'yes';
        },
        'Invalid backup: templates[2].autorun: Autorun must be true or false',
      ],
      [
        'an inventory of the wrong type for its app',
        (b) => {
          b.templates[3]!.inventory = 'Local';
        },
        'Invalid backup: templates[3].inventory: the terraform app needs an inventory of type terraform-workspace; "Local" is static',
      ],
      [
        'a deploy following a template that is no build',
        (b) => {
          b.templates[2]!.build_template = 'Site';
        },
        'Invalid backup: templates[2].build_template: "Site" is not a build template',
      ],
      [
        'a secret of the other kind of key',
        (b) => {
          b.keys[3]!.ssh = { private_key: 'x' };
        },
        'Invalid backup: keys[3].ssh: a key of type login_password has no ssh secret',
      ],
      [
        'an ssh key secret without its private key',
        (b) => {
          b.keys[2]!.ssh = { login: 'ops', passphrase: 'p' };
        },
        'Invalid backup: keys[2].ssh.private_key: Private key is required',
      ],
      [
        'an environment secret of an unknown kind',
        (b) => {
          (b.environments[1]!.secrets as Json[])[0]!.type = 'file';
        },
        'Invalid backup: environments[1].secrets[0].type: Type must be one of var, env',
      ],
      [
        'extra variables that are no JSON object',
        (b) => {
          b.environments[1]!.json = '[1, 2]';
        },
        'Invalid backup: environments[1].json: Extra variables must be a JSON object',
      ],
      [
        'a repository without its URL',
        (b) => {
          delete b.repositories[1]!.git_url;
        },
        'Invalid backup: repositories[1].git_url: URL is required',
      ],
      [
        'a template without a name',
        (b) => {
          delete b.templates[4]!.name;
        },
        'Invalid backup: templates[4].name: Name is required',
      ],
      [
        'an ansible template without an inventory',
        (b) => {
          delete b.templates[7]!.inventory;
        },
        'Invalid backup: templates[7].inventory: Inventory is required',
      ],
      [
        'a build template without its start version',
        (b) => {
          delete b.templates[1]!.start_version;
        },
        'Invalid backup: templates[1].start_version: Start version is required',
      ],
      [
        'a template named like an earlier one',
        (b) => {
          b.templates[7]!.name = 'Site';
        },
        'Invalid backup: templates[7].name: "Site" is already the name of templates[0]',
      ],
      [
        'a key named like an earlier one',
        (b) => {
          b.keys[6]!.name = 'Vault password';
        },
        'Invalid backup: keys[6].name: "Vault password" is already the name of keys[4]',
      ],
      [
        'a view titled like an earlier one',
        (b) => {
          b.views![3]!.title = 'Deploy';
        },
        'Invalid backup: views[3].title: "Deploy" is already the name of views[1]',
      ],
      [
        'a cron that never parses',
        (b) => {
          b.schedules![0]!.cron_format = '61 * * * *';
        },
        'Invalid backup: schedules[0].cron_format: Invalid cron expression "61 * * * *"',
      ],
      [
        'a workspace name that would read as an option',
        (b) => {
          b.inventories[3]!.inventory = '-chdir=/etc';
        },
        'Invalid backup: inventories[3].inventory: Workspace name may contain only letters, digits',
      ],
      [
        'an inventory that is not YAML',
        (b) => {
          b.inventories[1]!.inventory = 'all: [unclosed';
        },
        'Invalid backup: inventories[1].inventory: Inventory must be valid YAML',
      ],
      [
        'a script vault leaving the repository',
        (b) => {
          b.templates[0]!.vaults = [{ type: 'script', script: '../vault.sh' }];
        },
        'Invalid backup: templates[0].vaults[0].script: Vault script must not leave the repository with ".."',
      ],
      [
        'a vault name Ansible would cut at "@"',
        (b) => {
          b.templates[0]!.vaults = [{ name: 'me@prod', type: 'password', vault_key: 'Vault password' }];
        },
        'Invalid backup: templates[0].vaults[0].name: Vault name must not contain "@" or control characters',
      ],
      [
        'two vault passwords',
        (b) => {
          b.templates[0]!.vaults = [
            { type: 'password', vault_key: 'Vault password' },
            { type: 'password', vault_key: 'Become root' },
          ];
        },
        'Invalid backup: templates[0].vaults: a template holds one vault here, not several',
      ],
      [
        'a run-once schedule without a time zone',
        (b) => {
          Object.assign(b.schedules![2]!, { type: 'run_at', run_at: '2030-01-01 09:00' });
        },
        'Invalid backup: schedules[2].run_at: Run at must be a date and time with a time zone',
      ],
      [
        'secret storages',
        (b) => {
          b.secret_storages = [{ name: 'Vault', type: 'vault' }];
        },
        'Invalid backup: secret_storages: secret storages cannot be restored here',
      ],
      [
        'an alias that is no URL segment',
        (b) => {
          b.integrations![0]!.aliases = ['../admin'];
        },
        'Invalid backup: integrations[0].aliases[0]: Alias may contain only letters, digits, "_" and "-"',
      ],
      [
        'an integration secret that is no password',
        (b) => {
          b.integrations![0]!.auth_secret = 'Ops SSH';
        },
        'Invalid backup: integrations[0].auth_secret: Auth secret must be a login_password key',
      ],
      [
        'a matcher without a value',
        (b) => {
          ((b.integrations![0]!.matchers as Json[])[1] as Json).value = '';
        },
        'Invalid backup: integrations[0].matchers[1].value: Value is required',
      ],
      [
        // Two problems: the first object in restore order (keys before templates) is the one named.
        'two bad objects',
        (b) => {
          b.templates[1]!.autorun = 1;
          b.keys[5]!.type = 'password';
        },
        'Invalid backup: keys[5].type: Type must be one of none, ssh, login_password',
      ],
      [
        'a bad playbook before a reused name',
        (b) => {
          b.templates[7]!.name = 'Site';
          b.templates[1]!.playbook = '../../etc/passwd';
        },
        'Invalid backup: templates[1].playbook: Playbook filename must not leave the repository with ".."',
      ],
      [
        'a bad repository and a dangling template',
        (b) => {
          b.templates[0]!.inventory = 'Nowhere';
          b.repositories[0]!.git_url = '--upload-pack=touch /tmp/x';
        },
        'Invalid backup: repositories[0].git_url: Incorrect URL',
      ],
    ];

    let projectsBefore: unknown;
    let countsBefore: Record<string, number>;
    beforeAll(async () => {
      projectsBefore = (await owner.get('/api/projects')).json();
      countsBefore = await counts(h);
    });

    it.each(cases)('%s: 400 naming the first bad object, nothing written', async (_label, change, error) => {
      const backup = fixture('semaphore-2.17-full.json');
      change(backup);
      const res = await restore(backup);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.startsWith(error), res.json().error).toBe(true);
      expect(res.body).not.toContain('secret-2.17');
      expect(await counts(h)).toEqual(countsBefore);
      expect((await owner.get('/api/projects')).json()).toEqual(projectsBefore);
    });

    it('leaves nothing behind when the database refuses a row late in the restore', async () => {
      // Schedules are written last: the database itself refuses the last one, after everything else was written.
      const create: Record<typeof dialect.name, string[]> = {
        sqlite: [
          `CREATE TRIGGER refuse_schedule BEFORE INSERT ON schedule WHEN NEW.name = 'Friday plan'
           BEGIN SELECT RAISE(ABORT, 'schedule refused by the test'); END`,
        ],
        postgres: [
          `CREATE FUNCTION refuse_schedule() RETURNS trigger AS $$ BEGIN
             IF NEW.name = 'Friday plan' THEN RAISE EXCEPTION 'schedule refused by the test'; END IF;
             RETURN NEW; END $$ LANGUAGE plpgsql`,
          `CREATE TRIGGER refuse_schedule BEFORE INSERT ON schedule FOR EACH ROW EXECUTE FUNCTION refuse_schedule()`,
        ],
        mysql: [
          `CREATE TRIGGER refuse_schedule BEFORE INSERT ON schedule FOR EACH ROW BEGIN
             IF NEW.name = 'Friday plan' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'schedule refused by the test';
             END IF; END`,
        ],
      };
      const drop: Record<typeof dialect.name, string[]> = {
        sqlite: ['DROP TRIGGER refuse_schedule'],
        postgres: ['DROP TRIGGER refuse_schedule ON schedule', 'DROP FUNCTION refuse_schedule()'],
        mysql: ['DROP TRIGGER refuse_schedule'],
      };
      for (const statement of create[dialect.name]) await sql.raw(statement).execute(h.deps.db);
      try {
        const res = await restore(fixture('semaphore-2.17-full.json'));
        expect(res.statusCode).toBe(500);
        expect(res.json()).toMatchObject({ error: 'Internal server error' });
      } finally {
        for (const statement of drop[dialect.name]) await sql.raw(statement).execute(h.deps.db);
      }
      expect(await counts(h)).toEqual(countsBefore);
      expect((await owner.get('/api/projects')).json()).toEqual(projectsBefore);
      // The same backup restores once the database takes it.
      const res = await restore(fixture('semaphore-2.17-full.json'));
      expect(res.statusCode, res.body).toBe(200);
    });

    it('restores a vault password script for an administrator only, with its name', async () => {
      const backup = fixture('semaphore-2.17-full.json');
      backup.templates[0]!.vaults = [{ name: 'prod', type: 'script', script: 'scripts/vault-client.py' }];
      const before = await counts(h);
      const refused = await restore(backup);
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json().error).toBe(
        'Only administrators can set or change a vault password script: it runs on the machine that runs the task (template "Site")',
      );
      expect(await counts(h)).toEqual(before);
      const admin = await h.userClient({ admin: true });
      const restored = await admin.post('/api/projects/restore', backup);
      expect(restored.statusCode, restored.body).toBe(200);
      const base = `/api/project/${restored.json().id}`;
      const site = (await admin.get(`${base}/templates`))
        .json()
        .find((t: { name: string }) => t.name === 'Site');
      expect(site).toMatchObject({
        vault_key_id: null,
        vaults: [{ name: 'prod', type: 'script', vault_key_id: null, script: 'scripts/vault-client.py' }],
      });
      // The project's own backup writes the vault back as Semaphore does.
      const again = (await admin.get(`${base}/backup`)).json();
      expect(again.templates.find((t: { name: string }) => t.name === 'Site').vaults).toEqual([
        { name: 'prod', type: 'script', vault_key: null, script: 'scripts/vault-client.py' },
      ]);
    });
  });
});
