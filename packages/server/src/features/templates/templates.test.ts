import { coded, emptySurveyVar, errorMessage, issue, readIssue, vaultMessages } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import {
  expectStatusByCaller,
  manageResourceStatusTests,
  readCodes,
} from '../../../test/support/permission-matrix';
import {
  ansibleBody,
  createTemplatesProject,
  expectBodiesRefused,
  expectUpdateDeleteEvents,
  insertTask,
  snapshot,
  type TemplateFixtures,
  type TemplatesProject,
  templateFixtures,
} from '../../../test/support/template-fixtures';
import { insertReturningId } from '../../db/values';
import { getTemplate } from './templates.service';

const MB = 'x'.repeat(1024 * 1024);

describe.each(testDialects())('templates on $name', (dialect) => {
  let h: Harness;
  let project: TemplatesProject;
  let foreign: TemplateFixtures;
  let otherProjectId: number;
  let foreignTemplateId: number;
  let foreignViewId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    project = await createTemplatesProject(h);
    const other = project.other;
    otherProjectId = other.projectId;
    foreign = await templateFixtures(h, otherProjectId);
    const otherBase = `/api/project/${otherProjectId}`;
    const tpl = await other.owner.post(`${otherBase}/templates`, {
      ...ansibleBody(foreign),
      type: 'build',
      start_version: '1.0.0',
    });
    expect(tpl.statusCode).toBe(201);
    foreignTemplateId = tpl.json().id;
    foreignViewId = (await other.owner.post(`${otherBase}/views`, { title: 'Foreign' })).json().id;
  });
  afterAll(async () => h?.close());

  const create = async (extra: Record<string, unknown> = {}) => {
    const res = await project.admin.post(`${project.base}/templates`, ansibleBody(project.fx, extra));
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };
  const expectError = async (body: unknown, error: string, field?: string) => {
    const res = await project.admin.request('POST', `${project.base}/templates`, body);
    expect(res.statusCode, res.body).toBe(400);
    // A schema's refusal is given by its code (its English wording names the field), any other by its text.
    const carried = readIssue(error);
    if (carried) {
      expect(res.json().code).toBe(carried.code);
      if (field) expect(res.json().field_errors?.[field]?.code).toBe(carried.code);
    } else {
      expect(res.json().error).toBe(error);
      if (field) expect(res.json().fields?.[field]).toBe(error);
    }
    return res;
  };

  it('creates a template with every field and reads it back', async () => {
    const view = (await project.admin.post(`${project.base}/views`, { title: 'Main' })).json().id;
    // Options the template answers as they were sent.
    const options = {
      suppress_success_alerts: true,
      arguments: '["--check", "-v"]',
      allow_override_args_in_task: true,
      allow_override_branch_in_task: true,
      allow_parallel_tasks: true,
      git_branch: 'develop',
    };
    const body = ansibleBody(project.fx, {
      name: '  Full  ',
      description: 'Does everything',
      vault_key_id: project.fx.key,
      view_id: view,
      ...options,
      survey_vars: [
        {
          name: ' region ',
          title: 'Region',
          type: 'enum',
          required: true,
          values: [{ name: 'EU', value: 'eu' }],
        },
        { name: 'count', title: 'Count', type: 'int', description: 'How many' },
      ],
      task_params: { allow_debug: true, tags: ['web'] },
      runner_tag: '  gpu  ',
    });
    const res = await project.clients.manager.post(`${project.base}/templates`, body);
    expect(res.statusCode).toBe(201);
    const t = res.json();
    expect(t).toEqual({
      id: expect.any(Number),
      project_id: project.projectId,
      name: 'Full',
      description: 'Does everything',
      type: '',
      app: 'ansible',
      playbook: 'site.yml',
      inventory_id: project.fx.inventory,
      repository_id: project.fx.repository,
      environment_id: project.fx.environment,
      vault_key_id: project.fx.key,
      vaults: [{ name: 'default', type: 'password', vault_key_id: project.fx.key, script: '' }],
      view_id: view,
      build_template_id: null,
      start_version: null,
      autorun: false,
      ...options,
      survey_vars: [
        {
          ...emptySurveyVar,
          name: 'region',
          title: 'Region',
          description: '',
          type: 'enum',
          required: true,
          values: [{ name: 'EU', value: 'eu' }],
          default_value: '',
        },
        {
          ...emptySurveyVar,
          name: 'count',
          title: 'Count',
          description: 'How many',
          type: 'int',
          required: false,
          values: [],
          default_value: '',
        },
      ],
      task_params: { allow_debug: true, tags: ['web'] },
      check_new_commits: false,
      cron_format: '* * * * *',
      check_new_commits_repository_id: null,
      last_task_id: null,
      last_task: null,
      tasks: 0,
      runner_tag: 'gpu',
      drift: null,
    });
    const one = await project.clients.guest.get(`${project.base}/templates/${t.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(t);
    expect(await getTemplate(h.deps.db, project.projectId, t.id)).toEqual(t);
    await expect(getTemplate(h.deps.db, otherProjectId, t.id)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('keeps a trimmed runner tag; empty or null means none; refuses a long one or control characters', async () => {
    expect((await create({ runner_tag: '' })).runner_tag).toBeNull();
    expect((await create({ runner_tag: null })).runner_tag).toBeNull();
    expect((await create({})).runner_tag).toBeNull();
    const t = await create({ runner_tag: ' arm64 ' });
    expect(t.runner_tag).toBe('arm64');
    const { id, last_task, last_task_id, vaults, ...rest } = t;
    const put = await project.admin.put(`${project.base}/templates/${id}`, { ...rest, id, runner_tag: '' });
    expect(put.statusCode, put.body).toBe(204);
    expect((await project.admin.get(`${project.base}/templates/${id}`)).json().runner_tag).toBeNull();
    await expectError(
      ansibleBody(project.fx, { runner_tag: 'x'.repeat(65) }),
      'Runner tag must be at most 64 characters',
      'runner_tag',
    );
    await expectError(
      ansibleBody(project.fx, { runner_tag: 'a\u0001b' }),
      'Runner tag must not contain control characters',
      'runner_tag',
    );
    await expectError(
      ansibleBody(project.fx, { runner_tag: 5 }),
      'Runner tag must be a string',
      'runner_tag',
    );
  });

  it('keeps a Terraform lock timeout in its duration syntax; refuses any other naming the field', async () => {
    for (const lock_timeout of ['30s', '5m', '1h', '1m30s', '500ms', ''])
      expect((await create({ task_params: { lock_timeout } })).task_params.lock_timeout).toBe(lock_timeout);
    expect((await create({ task_params: { lock_timeout: ' 45s ' } })).task_params.lock_timeout).toBe('45s');
    for (const lock_timeout of [
      '5',
      '5 minutes',
      '-1s',
      '2h',
      '61m',
      '1d',
      '5m;rm',
      300,
      true,
      'x'.repeat(2000),
    ]) {
      const res = await expectError(
        ansibleBody(project.fx, { task_params: { lock_timeout } }),
        issue('lock_timeout_invalid', { max: '1h' }),
        'task_params.lock_timeout',
      );
      expect(res.json().error).toBe('Lock timeout must be a duration such as 30s, 5m or 1h, at most 1h');
    }
  });

  it('treats an empty app as ansible and maps Swagger vaults and limit', async () => {
    const t = await create({
      app: '',
      vaults: [{ name: 'default', type: 'password', vault_key_id: project.fx.key }],
      limit: 'web1, web2',
    });
    expect(t.app).toBe('ansible');
    expect(t.vault_key_id).toBe(project.fx.key);
    expect(t.task_params).toEqual({ limit: ['web1', 'web2'] });
  });

  it('refuses a vault it could not keep: one without a key or script, a second vault, a key and a script', async () => {
    const other = (
      await project.admin.post(`${project.base}/keys`, {
        name: 'Second vault',
        type: 'login_password',
        login_password: { login: '', password: 'v' },
      })
    ).json().id as number;
    const before = await snapshot(h);
    await expectError(
      ansibleBody(project.fx, { vaults: [{ name: 'default', type: 'password' }] }),
      'Vault key is required',
      'vaults.0.vault_key_id',
    );
    await expectError(
      ansibleBody(project.fx, { vaults: [{ name: 'prod', type: 'script', script: ' ' }] }),
      'Vault script is required',
      'vaults.0.script',
    );
    await expectError(
      ansibleBody(project.fx, {
        vaults: [
          { name: 'default', vault_key_id: project.fx.key },
          { name: 'prod', vault_key_id: other },
        ],
      }),
      vaultMessages.oneKey,
      'vaults',
    );
    await expectError(
      ansibleBody(project.fx, {
        vaults: [
          { name: 'dev', vault_key_id: project.fx.key },
          { name: 'prod', vault_key_id: project.fx.key },
        ],
      }),
      vaultMessages.one,
      'vaults',
    );
    await expectError(
      ansibleBody(project.fx, {
        vault_key_id: project.fx.key,
        vaults: [{ name: 'prod', vault_key_id: other }],
      }),
      vaultMessages.oneKey,
      'vaults',
    );
    await expectError(
      ansibleBody(project.fx, {
        vault_key_id: project.fx.key,
        vaults: [{ name: 'prod', type: 'script', script: 'vault-client.py' }],
      }),
      vaultMessages.keyOrScript,
      'vaults',
    );
    for (const [name, field, message] of [
      ['a@b', 'name', vaultMessages.name],
      ['line\nbreak', 'name', vaultMessages.name],
    ] as const)
      await expectError(
        ansibleBody(project.fx, { vaults: [{ name, vault_key_id: project.fx.key }] }),
        message,
        `vaults.0.${field}`,
      );
    for (const [script, message] of [
      ['../outside.sh', vaultMessages.scriptOutside],
      ['bin/../../outside.sh', vaultMessages.scriptOutside],
      ['vault\n-client.py', vaultMessages.scriptControl],
      ['x'.repeat(256), 'Vault script must be at most 255 characters'],
    ] as const)
      await expectError(
        ansibleBody(project.fx, { vaults: [{ type: 'script', script }] }),
        message,
        'vaults.0.script',
      );
    await expectError(
      ansibleBody(project.fx, { vaults: [{ type: 'gpg', vault_key_id: project.fx.key }] }),
      '@not_one_of',
      'vaults.0.type',
    );
    expect(await snapshot(h)).toEqual(before);
    // The same key named twice is one key.
    const t = await create({
      vault_key_id: other,
      vaults: [{ name: 'default', type: 'password', vault_key_id: other, script: '' }],
    });
    expect(t.vaults).toEqual([{ name: 'default', type: 'password', vault_key_id: other, script: '' }]);
  });

  it('keeps the vault name, and a password script set by an administrator', async () => {
    const url = (id: number) => `${project.base}/templates/${id}`;
    const named = await create({
      vaults: [{ name: ' prod ', type: 'password', vault_key_id: project.fx.key }],
    });
    expect(named).toMatchObject({
      vault_key_id: project.fx.key,
      vaults: [{ name: 'prod', type: 'password', vault_key_id: project.fx.key, script: '' }],
    });
    const scriptVault = {
      name: 'prod',
      type: 'script',
      vault_key_id: null,
      script: 'scripts/vault-client.py',
    };
    const scripted = await create({ vaults: [scriptVault] });
    expect(scripted).toMatchObject({ vault_key_id: null, vaults: [scriptVault] });
    const absolute = await create({ vaults: [{ type: 'script', script: '/usr/local/bin/vault-pass' }] });
    expect(absolute.vaults).toEqual([
      { name: 'default', type: 'script', vault_key_id: null, script: '/usr/local/bin/vault-pass' },
    ]);
    expect((await project.clients.guest.get(url(scripted.id))).json().vaults).toEqual([scriptVault]);

    // A project owner or manager (no administrator) may not set a script, nor change one; keeping it as it is, or
    // removing it, is fine.
    const before = await snapshot(h);
    for (const role of ['owner', 'manager'] as const) {
      const client = project.clients[role];
      const made = await client.post(
        `${project.base}/templates`,
        ansibleBody(project.fx, { vaults: [scriptVault] }),
      );
      expect([made.statusCode, made.json().error], role).toEqual([
        403,
        errorMessage(coded('vault_script_admin_only')),
      ]);
      expect(made.json().fields).toEqual({
        'vaults.0.script': errorMessage(coded('vault_script_admin_only')),
      });
      const onto = await client.put(
        url(named.id),
        ansibleBody(project.fx, { vaults: [{ ...scriptVault, script: 'other.py' }] }),
      );
      expect(onto.statusCode, role).toBe(403);
      const changed = await client.put(
        url(scripted.id),
        ansibleBody(project.fx, { name: scripted.name, vaults: [{ ...scriptVault, script: 'other.py' }] }),
      );
      expect(changed.statusCode, role).toBe(403);
    }
    expect(await snapshot(h)).toEqual(before);
    const kept = await project.clients.manager.put(
      url(scripted.id),
      ansibleBody(project.fx, { name: scripted.name, description: 'Kept', vaults: [scriptVault] }),
    );
    expect(kept.statusCode, kept.body).toBe(204);
    expect((await project.admin.get(url(scripted.id))).json()).toMatchObject({
      description: 'Kept',
      vaults: [scriptVault],
    });
    const removed = await project.clients.manager.put(
      url(scripted.id),
      ansibleBody(project.fx, { name: scripted.name, vaults: [] }),
    );
    expect(removed.statusCode, removed.body).toBe(204);
    expect((await project.admin.get(url(scripted.id))).json()).toMatchObject({
      vault_key_id: null,
      vaults: [],
    });
    // The short form keeps working: vault_key_id alone is a password vault named default.
    const short = await project.admin.put(
      url(scripted.id),
      ansibleBody(project.fx, { name: scripted.name, vault_key_id: project.fx.key }),
    );
    expect(short.statusCode, short.body).toBe(204);
    expect((await project.admin.get(url(scripted.id))).json().vaults).toEqual([
      { name: 'default', type: 'password', vault_key_id: project.fx.key, script: '' },
    ]);
  });

  it("answers survey variables and task params a restored backup kept as written in the form's shape", async () => {
    const t = await create({ name: 'As restored' });
    await h.deps.db
      .updateTable('template')
      .set({
        survey_vars: JSON.stringify([
          { name: 'host', title: null, type: 'enum', required: 1, extra: true },
          {
            name: 'port',
            title: 'Port',
            type: 'float',
            default_value: 22,
            values: [{ name: 'a', value: 1 }],
          },
        ]),
        task_params: JSON.stringify({
          allow_debug: true,
          limit: 'web1, web2',
          nested: { a: 1 },
          custom: 'kept',
        }),
      })
      .where('id', '=', t.id)
      .execute();
    const res = await project.admin.get(`${project.base}/templates/${t.id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().survey_vars).toEqual([
      {
        ...emptySurveyVar,
        name: 'host',
        title: '',
        description: '',
        type: 'enum',
        required: false,
        values: [],
        default_value: '',
      },
      {
        ...emptySurveyVar,
        name: 'port',
        title: 'Port',
        description: '',
        type: '',
        required: false,
        values: [{ name: 'a', value: '1' }],
        default_value: '22',
      },
    ]);
    expect(res.json().task_params).toEqual({ allow_debug: true, limit: ['web1', 'web2'], custom: 'kept' });
  });

  it('lists templates by name with the last task, never its secret', async () => {
    const b = await create({ name: 'zz second' });
    const a = await create({ name: 'zz first' });
    await insertTask(h, project.projectId, a.id, { status: 'error' });
    const latest = await insertTask(h, project.projectId, a.id, {
      status: 'running',
      user_id: project.admin.userId,
    });
    const res = await project.clients.guest.get(`${project.base}/templates`);
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('should-never-be-shown');
    const list = res.json() as Array<{
      id: number;
      name: string;
      last_task_id: number | null;
      last_task: unknown;
    }>;
    const names = list.map((t) => t.name);
    expect(names).toEqual([...names].sort((x, y) => x.localeCompare(y)));
    const first = list.find((t) => t.id === a.id)!;
    expect(first.last_task_id).toBe(latest);
    expect(first.last_task).toMatchObject({
      id: latest,
      template_id: a.id,
      status: 'running',
      user_id: project.admin.userId,
      user_name: `Name ${project.admin.username}`,
      tpl_alias: 'zz first',
      tpl_type: '',
      params: {},
      debug: false,
    });
    // Semaphore's `secret` field, never its value (the stored one is should-never-be-shown).
    expect(first.last_task).toMatchObject({ secret: '' });
    expect(list.find((t) => t.id === b.id)!.last_task).toBeNull();
    expect(list.find((t) => t.id === a.id)).toMatchObject({ tasks: 2 });
    expect(list.find((t) => t.id === b.id)).toMatchObject({ tasks: 0 });
    const one = await project.admin.get(`${project.base}/templates/${a.id}`);
    expect(one.json().last_task_id).toBe(latest);
    expect(one.body).not.toContain('should-never-be-shown');

    const desc = (await project.admin.get(`${project.base}/templates?sort=name&order=desc`)).json() as Array<{
      name: string;
    }>;
    expect(desc.map((t) => t.name)).toEqual([...names].reverse());
    expect((await project.admin.get(`${project.base}/templates?sort=bogus`)).statusCode).toBe(400);
  });

  it('follows its tasks as they are added and deleted: the count and the newest task', async () => {
    const a = await create({ name: 'counted' });
    const other = await create({ name: 'counted other' });
    const first = await insertTask(h, project.projectId, a.id, { status: 'success' });
    const second = await insertTask(h, project.projectId, a.id, { status: 'error' });
    await insertTask(h, project.projectId, other.id, { status: 'success' });
    const view = async (id: number) => {
      const res = await project.admin.get(`${project.base}/templates/${id}`);
      expect(res.statusCode).toBe(200);
      const t = res.json() as {
        tasks: number;
        last_task_id: number | null;
        last_task: { id: number } | null;
      };
      const listed = (
        (await project.admin.get(`${project.base}/templates`)).json() as (typeof t & { id: number })[]
      ).find((x) => x.id === id)!;
      expect({ tasks: listed.tasks, last_task_id: listed.last_task_id }).toEqual({
        tasks: t.tasks,
        last_task_id: t.last_task_id,
      });
      return { tasks: t.tasks, last: t.last_task_id, lastTask: t.last_task?.id ?? null };
    };
    expect(await view(a.id)).toEqual({ tasks: 2, last: second, lastTask: second });

    // The newest goes: the one before it is the newest again.
    expect((await project.admin.del(`${project.base}/tasks/${second}`)).statusCode).toBe(204);
    expect(await view(a.id)).toEqual({ tasks: 1, last: first, lastTask: first });
    // An older one goes: the newest stays.
    const third = await insertTask(h, project.projectId, a.id, { status: 'success' });
    expect((await project.admin.del(`${project.base}/tasks/${first}`)).statusCode).toBe(204);
    expect(await view(a.id)).toEqual({ tasks: 1, last: third, lastTask: third });
    expect((await project.admin.del(`${project.base}/tasks/${third}`)).statusCode).toBe(204);
    expect(await view(a.id)).toEqual({ tasks: 0, last: null, lastTask: null });
    // Another template's tasks are its own.
    expect((await view(other.id)).tasks).toBe(1);
  });

  it('updates a template with 204', async () => {
    const t = await create({ name: 'Before' });
    const res = await project.clients.owner.put(
      `${project.base}/templates/${t.id}`,
      ansibleBody(project.fx, {
        name: 'After',
        description: 'changed',
        id: t.id,
        project_id: project.projectId,
      }),
    );
    expect(res.statusCode).toBe(204);
    const after = (await project.admin.get(`${project.base}/templates/${t.id}`)).json();
    expect(after).toMatchObject({ name: 'After', description: 'changed' });
  });

  it('supports terraform, tofu, bash and pulumi with their inventory and playbook rules', async () => {
    const tf = await create({ app: 'terraform', playbook: '', inventory_id: project.fx.workspace });
    expect(tf).toMatchObject({ app: 'terraform', playbook: '' });
    const noInv = await create({ app: 'terraform', playbook: 'infra', inventory_id: null });
    expect(noInv.inventory_id).toBeNull();
    await create({ app: 'tofu', playbook: '', inventory_id: project.fx.tofuWorkspace });
    await create({ app: 'pulumi', playbook: '', inventory_id: null });
    await create({ app: 'bash', playbook: 'run.sh', inventory_id: null });

    await expectError(
      ansibleBody(project.fx, { app: 'terraform', inventory_id: project.fx.inventory }),
      'The terraform app needs an inventory of type terraform-workspace',
      'inventory_id',
    );
    await expectError(
      ansibleBody(project.fx, { app: 'tofu', inventory_id: project.fx.workspace }),
      'The tofu app needs an inventory of type tofu-workspace',
    );
    await expectError(
      ansibleBody(project.fx, { inventory_id: project.fx.workspace }),
      'The ansible app needs an inventory of type static, static-yaml, file',
    );
    await expectError(
      ansibleBody(project.fx, { app: 'bash', playbook: '' }),
      'Playbook filename is required',
      'playbook',
    );
    await expectError(
      ansibleBody(project.fx, { app: 'ruby' }),
      'App must be one of ansible, terraform, tofu, bash, pulumi, terragrunt, powershell, python',
    );
  });

  it('answers every template validation message', async () => {
    const before = await snapshot(h);
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ name: undefined }, 'Name is required', 'name'],
      [{ name: '   ' }, 'Name is required', 'name'],
      [{ playbook: '' }, 'Playbook filename is required', 'playbook'],
      [{ repository_id: null }, 'Repository is required', 'repository_id'],
      [{ repository_id: 0 }, 'Repository is required', 'repository_id'],
      [{ environment_id: undefined }, 'Environment is required', 'environment_id'],
      [{ inventory_id: null }, 'Inventory is required', 'inventory_id'],
      [{ type: 'build' }, 'Start version is required', 'start_version'],
      [{ type: 'build', start_version: '  ' }, 'Start version is required', 'start_version'],
      [{ type: 'deploy' }, 'Build template is required', 'build_template_id'],
      [{ arguments: '{"a": 1}' }, 'CLI args must be a JSON array', 'arguments'],
      [{ arguments: '[1, 2]' }, 'CLI args must be a JSON array', 'arguments'],
      [{ arguments: 'not json' }, 'CLI args must be a JSON array', 'arguments'],
      [{ arguments: ['--a'] }, 'CLI args must be a JSON array', 'arguments'],
      [{ check_new_commits: true }, 'Repository is required', 'check_new_commits_repository_id'],
      [{ type: 'other' }, 'Type must be one of build, deploy', 'type'],
    ];
    for (const [extra, message, field] of cases)
      await expectError(ansibleBody(project.fx, extra), message, field);
    expect(await snapshot(h)).toEqual(before);
  });

  it('validates survey variables', async () => {
    const before = await snapshot(h);
    const v = (extra: Record<string, unknown>) =>
      ansibleBody(project.fx, { survey_vars: [{ name: 'x', title: 'X', ...extra }] });
    await expectError(v({ name: '  ' }), 'Name is required', 'survey_vars.0.name');
    await expectError(v({ name: undefined }), 'Name is required');
    await expectError(v({ title: '' }), 'Title is required', 'survey_vars.0.title');
    await expectError(
      v({ type: 'float' }),
      'Type must be one of string, int, secret, enum, text, number, boolean, multiselect, date, datetime, kv',
    );
    await expectError(v({ type: 'enum' }), 'Enumeration must have values.', 'survey_vars.0.values');
    // The server matches a pattern against other people's answers: one that cannot compile, or that nests
    // repetitions (exponential time on a crafted answer), is refused when the template is saved.
    await expectError(
      v({ regex: '(unclosed' }),
      'The pattern is not a valid regular expression.',
      'survey_vars.0.regex',
    );
    await expectError(
      v({ regex: '^(a+)+$' }),
      'The pattern repeats a repetition (like (a+)+): it could take too long to check. Simplify it.',
      'survey_vars.0.regex',
    );
    await expectError(v({ type: 'enum', values: [] }), 'Enumeration must have values.');
    await expectError(
      v({ type: 'enum', values: [{ name: ' ', value: '1' }] }),
      'Value name cannot be empty.',
      'survey_vars.0.values',
    );
    await expectError(
      v({
        type: 'enum',
        values: [
          { name: 'a', value: '1' },
          { name: 'a', value: '2' },
        ],
      }),
      'Enumeration values must have unique names.',
    );
    await expectError(ansibleBody(project.fx, { survey_vars: 'x' }), 'Survey variables must be a list');
    expect(await snapshot(h)).toEqual(before);
    expect(
      (await project.admin.post(`${project.base}/templates`, v({ regex: '^[a-z0-9-]+$' }))).statusCode,
    ).toBe(201);
    for (const type of ['', 'string', 'int', 'secret']) {
      expect((await project.admin.post(`${project.base}/templates`, v({ type }))).statusCode).toBe(201);
    }
  });

  it('refuses ids of another project with 400 and changes nothing', async () => {
    const t = await create({ name: 'Guarded' });
    const before = await snapshot(h);
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { repository_id: foreign.repository },
        `Repository ${foreign.repository} does not exist in this project`,
      ],
      [
        { environment_id: foreign.environment },
        `Environment ${foreign.environment} does not exist in this project`,
      ],
      [{ inventory_id: foreign.inventory }, `Inventory ${foreign.inventory} does not exist in this project`],
      [{ vault_key_id: foreign.key }, `Vault key ${foreign.key} does not exist in this project`],
      [{ view_id: foreignViewId }, `View ${foreignViewId} does not exist in this project`],
      [
        { type: 'deploy', build_template_id: foreignTemplateId },
        `Build template ${foreignTemplateId} does not exist in this project`,
      ],
      [
        { check_new_commits: true, check_new_commits_repository_id: foreign.repository },
        `Repository ${foreign.repository} does not exist in this project`,
      ],
      [
        { build_template_id: foreignTemplateId },
        `Build template ${foreignTemplateId} does not exist in this project`,
      ],
      [{ repository_id: 999999 }, 'Repository 999999 does not exist in this project'],
      [{ project_id: otherProjectId }, 'Project ID in body and URL are different'],
    ];
    for (const [extra, message] of cases) {
      await expectError(ansibleBody(project.fx, extra), message);
      const put = await project.admin.put(
        `${project.base}/templates/${t.id}`,
        ansibleBody(project.fx, extra),
      );
      expect(put.statusCode).toBe(400);
      expect(put.json().error).toBe(message);
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('answers 404 for a template of another project or an unknown id', async () => {
    const before = await snapshot(h);
    for (const id of [foreignTemplateId, 999999]) {
      expect((await project.admin.get(`${project.base}/templates/${id}`)).json()).toMatchObject({
        error: 'Template not found',
      });
      expect((await project.admin.get(`${project.base}/templates/${id}/refs`)).statusCode).toBe(404);
      expect((await project.admin.get(`${project.base}/templates/${id}/schedules`)).statusCode).toBe(404);
      expect(
        (await project.admin.put(`${project.base}/templates/${id}`, ansibleBody(project.fx))).statusCode,
      ).toBe(404);
      expect((await project.admin.del(`${project.base}/templates/${id}`)).statusCode).toBe(404);
    }
    expect((await project.admin.get(`${project.base}/templates/0`)).statusCode).toBe(400);
    expect(await snapshot(h)).toEqual(before);
  });

  it('refuses wrong types, malformed JSON and 1 MB strings, changing nothing', async () => {
    const t = await create({ name: 'Solid' });
    const before = await snapshot(h);
    const bodies: unknown[] = [
      ansibleBody(project.fx, { name: 42 }),
      ansibleBody(project.fx, { inventory_id: 'one' }),
      ansibleBody(project.fx, { repository_id: 1.5 }),
      ansibleBody(project.fx, { environment_id: -3 }),
      ansibleBody(project.fx, { autorun: 'yes' }),
      ansibleBody(project.fx, { survey_vars: [{ name: 'a', title: 'A', values: 'x' }] }),
      ansibleBody(project.fx, { task_params: 'x' }),
      ansibleBody(project.fx, { task_params: { allow_debug: 'yes' } }),
      ansibleBody(project.fx, { check_new_commits: 'on' }),
      ansibleBody(project.fx, { name: MB }),
      ansibleBody(project.fx, { description: MB }),
      ansibleBody(project.fx, { playbook: MB }),
      ansibleBody(project.fx, { arguments: MB }),
      ansibleBody(project.fx, { git_branch: MB }),
      ansibleBody(project.fx, { start_version: MB }),
      ansibleBody(project.fx, { cron_format: MB }),
      ansibleBody(project.fx, { survey_vars: [{ name: MB, title: 'A' }] }),
      ansibleBody(project.fx, { task_params: { tags: [MB] } }),
      '{"name": "broken",',
      'null',
      '"text"',
    ];
    await expectBodiesRefused(
      project.admin,
      `${project.base}/templates`,
      `${project.base}/templates/${t.id}`,
      bodies,
    );
    expect(
      (await project.admin.post(`${project.base}/templates`, ansibleBody(project.fx, { name: MB }))).json()
        .error,
    ).toBe('Name must be at most 100 characters');
    expect(await snapshot(h)).toEqual(before);
  });

  describe('build and deploy', () => {
    it('requires a build template of this project for deploy', async () => {
      const build = await create({ name: 'Build', type: 'build', start_version: '0.0.0' });
      expect(build).toMatchObject({ type: 'build', start_version: '0.0.0' });
      const plain = await create({ name: 'Plain task' });
      await expectError(
        ansibleBody(project.fx, { type: 'deploy', build_template_id: plain.id }),
        'Build template must be a build template of this project',
        'build_template_id',
      );
      const deploy = await create({
        name: 'Deploy',
        type: 'deploy',
        build_template_id: build.id,
        autorun: true,
      });
      expect(deploy).toMatchObject({ type: 'deploy', build_template_id: build.id, autorun: true });

      // A deploy template cannot follow itself.
      const self = await project.admin.put(
        `${project.base}/templates/${deploy.id}`,
        ansibleBody(project.fx, { type: 'deploy', build_template_id: deploy.id }),
      );
      expect(self.statusCode).toBe(400);

      // The build template cannot stop being one while deploys follow it.
      const demote = await project.admin.put(
        `${project.base}/templates/${build.id}`,
        ansibleBody(project.fx, { name: 'Build' }),
      );
      expect(demote.statusCode).toBe(400);
      expect(demote.json().error).toMatch(/must stay a build template/);

      const refs = await project.clients.guest.get(`${project.base}/templates/${build.id}/refs`);
      expect(refs.statusCode).toBe(200);
      expect(refs.json().templates).toEqual([{ id: deploy.id, name: 'Deploy' }]);

      const before = await snapshot(h);
      const del = await project.admin.del(`${project.base}/templates/${build.id}`);
      expect(del.statusCode).toBe(409);
      expect(del.json()).toMatchObject({
        error: "Can't delete the template because it is used by the resources below",
        refs: { templates: [{ id: deploy.id, name: 'Deploy' }] },
      });
      expect(await snapshot(h)).toEqual(before);
    });

    it('refuses to delete a template used by an integration', async () => {
      const t = await create({ name: 'Hooked' });
      await insertReturningId(h.deps.db, h.deps.dialect, 'integration', {
        project_id: project.projectId,
        name: 'GitHub push',
        template_id: t.id,
        auth_method: '',
        auth_header: '',
        auth_secret_id: null,
        searchable: 0,
        task_params: '{}',
      });
      const del = await project.admin.del(`${project.base}/templates/${t.id}`);
      expect(del.statusCode).toBe(409);
      expect(del.json().refs.integrations).toEqual([{ id: expect.any(Number), name: 'GitHub push' }]);
      expect(
        (await project.admin.get(`${project.base}/templates/${t.id}/refs`)).json().integrations,
      ).toHaveLength(1);
    });
  });

  it('deletes a template with its schedules, tasks and task output', async () => {
    const t = await create({ name: 'Short lived' });
    const keep = await create({ name: 'Keeper' });
    const taskId = await insertTask(h, project.projectId, t.id);
    const keptTask = await insertTask(h, project.projectId, keep.id);
    await h.deps.db
      .insertInto('task_output')
      .values([
        { task_id: taskId, time: new Date().toISOString(), output: 'gone' },
        { task_id: keptTask, time: new Date().toISOString(), output: 'kept' },
      ])
      .execute();
    const sched = await project.admin.post(`${project.base}/schedules`, {
      template_id: t.id,
      cron_format: '@daily',
    });
    expect(sched.statusCode).toBe(201);
    const waiting = await insertTask(h, project.projectId, t.id, { status: 'waiting' });
    const refresh = vi.spyOn(h.deps.scheduler, 'refresh');
    const stop = vi.spyOn(h.deps.tasks, 'stop');
    expect((await project.clients.manager.del(`${project.base}/templates/${t.id}`)).statusCode).toBe(204);
    expect(refresh).toHaveBeenCalled();
    expect(stop).toHaveBeenCalledWith(project.projectId, waiting, true);
    expect(stop).toHaveBeenCalledTimes(1);
    refresh.mockRestore();
    stop.mockRestore();
    expect((await project.admin.get(`${project.base}/templates/${t.id}`)).statusCode).toBe(404);
    const db = h.deps.db;
    expect(await db.selectFrom('task').select('id').where('template_id', '=', t.id).execute()).toEqual([]);
    expect(await db.selectFrom('task_output').select('id').where('task_id', '=', taskId).execute()).toEqual(
      [],
    );
    expect(await db.selectFrom('schedule').select('id').where('template_id', '=', t.id).execute()).toEqual(
      [],
    );
    expect(
      await db.selectFrom('task_output').select('output').where('task_id', '=', keptTask).execute(),
    ).toEqual([{ output: 'kept' }]);
  });

  describe('check-new-commits schedule', () => {
    const schedulesOf = (id: number) =>
      h.deps.db.selectFrom('schedule').selectAll().where('template_id', '=', id).orderBy('id').execute();

    it('is created with the option on, updated, then deleted with the option off', async () => {
      const refresh = vi.spyOn(h.deps.scheduler, 'refresh');
      const t = await create({
        name: 'Watcher',
        check_new_commits: true,
        check_new_commits_repository_id: project.fx.repository,
      });
      expect(t).toMatchObject({
        check_new_commits: true,
        cron_format: '* * * * *',
        check_new_commits_repository_id: project.fx.repository,
      });
      expect(refresh).toHaveBeenCalledTimes(1);
      const [created] = await schedulesOf(t.id);
      expect(created).toMatchObject({
        project_id: project.projectId,
        cron_format: '* * * * *',
        repository_id: project.fx.repository,
      });

      const upd = await project.admin.put(
        `${project.base}/templates/${t.id}`,
        ansibleBody(project.fx, {
          name: 'Watcher',
          check_new_commits: true,
          cron_format: '@hourly',
          check_new_commits_repository_id: project.fx.otherRepository,
        }),
      );
      expect(upd.statusCode).toBe(204);
      expect(refresh).toHaveBeenCalledTimes(2);
      const updated = await schedulesOf(t.id);
      expect(updated).toHaveLength(1);
      expect(updated[0]).toMatchObject({
        id: created!.id,
        cron_format: '@hourly',
        repository_id: project.fx.otherRepository,
      });
      expect((await project.admin.get(`${project.base}/templates/${t.id}`)).json()).toMatchObject({
        check_new_commits: true,
        cron_format: '@hourly',
        check_new_commits_repository_id: project.fx.otherRepository,
      });

      // Without the option in the body the schedule stays.
      await project.admin.put(
        `${project.base}/templates/${t.id}`,
        ansibleBody(project.fx, { name: 'Watcher' }),
      );
      expect(await schedulesOf(t.id)).toHaveLength(1);

      await project.admin.put(
        `${project.base}/templates/${t.id}`,
        ansibleBody(project.fx, { name: 'Watcher', check_new_commits: false }),
      );
      expect(await schedulesOf(t.id)).toEqual([]);
      expect(refresh).toHaveBeenCalledTimes(3);
      expect((await project.admin.get(`${project.base}/templates/${t.id}`)).json().check_new_commits).toBe(
        false,
      );
      refresh.mockRestore();

      const events = await h.deps.db
        .selectFrom('event')
        .select('description')
        .where('object_type', '=', 'schedule')
        .where('description', 'like', '%Watcher%')
        .orderBy('id')
        .execute();
      expect(events.map((e) => e.description)).toEqual([
        'Check-new-commits schedule of template Watcher created',
        'Check-new-commits schedule of template Watcher updated',
        'Check-new-commits schedule of template Watcher deleted',
      ]);
    });

    it('accepts the preset intervals and any valid cron, refuses an invalid one', async () => {
      for (const cron of ['* * * * *', '*/5 * * * *', '*/10 * * * *', '@hourly', '@daily', '0 3 * * 1-5']) {
        const t = await create({
          name: `Every ${cron}`,
          check_new_commits: true,
          cron_format: cron,
          check_new_commits_repository_id: project.fx.repository,
        });
        expect(t.cron_format).toBe(cron);
      }
      const before = await snapshot(h);
      const bad = await expectError(
        ansibleBody(project.fx, {
          check_new_commits: true,
          cron_format: '0 0 * * * *',
          check_new_commits_repository_id: project.fx.repository,
        }),
        'Invalid cron expression "0 0 * * * *": expected 5 fields (minute hour day month weekday), got 6',
      );
      expect(bad.json().fields.cron_format).toBeDefined();
      expect(await snapshot(h)).toEqual(before);
    });

    it('leaves several commit-check schedules and plain cron schedules alone', async () => {
      const t = await create({ name: 'Many' });
      for (const repo of [project.fx.repository, project.fx.otherRepository]) {
        const res = await project.admin.post(`${project.base}/schedules`, {
          template_id: t.id,
          cron_format: '@daily',
          repository_id: repo,
        });
        expect(res.statusCode).toBe(201);
      }
      expect((await project.admin.get(`${project.base}/templates/${t.id}`)).json().check_new_commits).toBe(
        false,
      );
      await project.admin.put(
        `${project.base}/templates/${t.id}`,
        ansibleBody(project.fx, { name: 'Many', check_new_commits: false }),
      );
      expect(await schedulesOf(t.id)).toHaveLength(2);

      const plain = await create({ name: 'Plain cron' });
      await project.admin.post(`${project.base}/schedules`, {
        template_id: plain.id,
        cron_format: '0 0 * * *',
      });
      await project.admin.put(
        `${project.base}/templates/${plain.id}`,
        ansibleBody(project.fx, {
          name: 'Plain cron',
          check_new_commits: true,
          check_new_commits_repository_id: project.fx.repository,
        }),
      );
      const list = await project.admin.get(`${project.base}/templates/${plain.id}/schedules`);
      expect(list.statusCode).toBe(200);
      expect(list.json()).toEqual([
        expect.objectContaining({ cron_format: '0 0 * * *', repository_id: null, tpl_name: 'Plain cron' }),
        expect.objectContaining({
          cron_format: '* * * * *',
          repository_id: project.fx.repository,
          tpl_name: 'Plain cron',
        }),
      ]);
      await project.admin.put(
        `${project.base}/templates/${plain.id}`,
        ansibleBody(project.fx, { name: 'Plain cron', check_new_commits: false }),
      );
      expect((await schedulesOf(plain.id)).map((s) => s.cron_format)).toEqual(['0 0 * * *']);
    });
  });

  it('records an event for every change', async () => {
    const t = await create({ name: 'Logged' });
    await expectUpdateDeleteEvents(
      h,
      project.admin,
      'template',
      `${project.base}/templates/${t.id}`,
      t.id,
      ansibleBody(project.fx, { name: 'Logged 2' }),
      ['Template Logged 2 deleted', 'Template Logged 2 updated', 'Template Logged created'],
    );
  });

  describe('permission matrix', () => {
    it('reads: members only', async () => {
      const t = await create({ name: 'Readable' });
      for (const path of [
        '/templates',
        `/templates/${t.id}`,
        `/templates/${t.id}/refs`,
        `/templates/${t.id}/schedules`,
      ]) {
        await expectStatusByCaller(
          project.clients,
          readCodes(),
          (c) => c.get(`${project.base}${path}`),
          path,
        );
      }
    });

    manageResourceStatusTests(() => project, 'templates', {
      body: (caller, method) =>
        ansibleBody(project.fx, { name: method === 'POST' ? `By ${caller}` : caller }),
      updated: async () => (await create({ name: 'Editable' })).id,
      deleted: async (caller) => (await create({ name: `Del ${caller}` })).id,
    });
  });
});
