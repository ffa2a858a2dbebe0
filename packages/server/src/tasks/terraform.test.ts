import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import {
  gitRepo,
  insertInventory,
  insertRepository,
  insertTemplate,
  outputOf,
  toolsOnPath,
  waitFor,
  waitForStatus,
} from '../../test/support/task-fixtures';
import { descendantArgs } from '../../test/support/task-pids';
import {
  ENDED,
  harnessWithProject,
  insertSecretEnvironment,
  liveMessagesOf,
  updatesOf,
} from '../../test/support/task-runs';
import {
  everyActionPlan,
  LOCK_HOLDER,
  PLAN_SECRET,
  terraformScript,
} from '../../test/support/terraform-stand-in';
import type { LiveMessage } from '../live/bus';

describe.each(testDialects())('terraform, tofu and pulumi stand-ins on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let repoId: number;
  let envId: number;
  let invId: number;
  let record: string;
  let messages: LiveMessage[];
  let restorePath = () => {};

  beforeAll(async () => {
    ({ record, restore: restorePath } = toolsOnPath({
      terraform: terraformScript,
      tofu: terraformScript,
      pulumi: (log) => `#!/bin/bash\necho "pulumi $*" >> ${log}\necho "Resources: 2 unchanged"\n`,
    }));
    ({ h, owner, projectId } = await harnessWithProject(dialect));
    messages = liveMessagesOf(h);
    const repo = gitRepo({
      'nochange/main.tf': '# nothing\n',
      'nochange/nochanges': '',
      'change/main.tf': 'resource "null_resource" "example" {}\n',
      'hang/main.tf': '# workspace list never answers\n',
      'hang/hang': '',
      'locked/main.tf': 'resource "null_resource" "example" {}\n',
      'locked/locked': `${LOCK_HOLDER}\n`,
      'everything/main.tf': '# every kind of change\n',
      'everything/plan.json': JSON.stringify(everyActionPlan),
      'secret-key/main.tf': '# a for_each keyed by a secret\n',
      'secret-key/plan.json': JSON.stringify({
        format_version: '1.2',
        resource_changes: [
          {
            address: 'aws_ssm_parameter.p["tf-s3cret-value"]',
            change: { actions: ['create'], before: null, after: { value: 'tf-s3cret-value' } },
          },
        ],
      }),
      'infra/Pulumi.yaml': 'name: demo\n',
    });
    repoId = await insertRepository(h.deps, projectId, { git_url: `file://${repo}` });
    envId = await insertSecretEnvironment(
      h.deps,
      projectId,
      { json: { region: 'eu-1' } },
      { vars: { db_password: 'tf-s3cret-value' } },
    );
    invId = await insertInventory(h.deps, projectId, { type: 'terraform-workspace', inventory: 'staging' });
  });
  afterAll(async () => {
    restorePath();
    await h?.close();
  });

  /** The commands one task ran, with the per-task plan path normalised. */
  function commandsSince(mark: number): string[] {
    return readFileSync(record, 'utf8')
      .split('\n')
      .slice(mark)
      .filter(Boolean)
      .map((l) => l.replace(/\/\S*\/signalbox\.tfplan/g, '<plan>'));
  }
  const mark = () => readFileSync(record, 'utf8').split('\n').filter(Boolean).length;

  async function run(tpl: Record<string, unknown>, body: Record<string, unknown> = {}) {
    const id = await insertTemplate(h.deps, projectId, {
      app: 'terraform',
      repository_id: repoId,
      environment_id: envId,
      inventory_id: invId,
      allow_parallel_tasks: 1,
      ...tpl,
    });
    const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: id, ...body });
    expect(res.statusCode).toBe(201);
    return res.json().id as number;
  }

  /** The published statuses once the final one (saved just before it is published) has arrived. */
  const statuses = (id: number) =>
    waitFor(async () => {
      const list = updatesOf(messages, id);
      return ENDED.includes(list.at(-1) ?? '') ? list : undefined;
    });
  /** The commands a terraform or tofu run ran up to its plan (init, workspace, plan). */
  const planCommands = (app: 'terraform' | 'tofu', lock = '5m') => [
    `${app} init -lock-timeout=${lock} -migrate-state`,
    `${app} workspace list`,
    `${app} workspace select -or-create=true staging`,
    `${app} plan -lock-timeout=${lock} -var region=eu-1 -out=<plan>`,
  ];
  /** Waits until the task waits for confirmation, then confirms or rejects its plan (expects 204). */
  async function decide(id: number, decision: 'confirm' | 'reject') {
    await waitForStatus(h.deps, id, ['waiting_confirmation']);
    const res = await owner.post(`/api/project/${projectId}/tasks/${id}/${decision}`, {});
    expect(res.statusCode).toBe(204);
  }

  it('ends with success on "No changes." after init, workspace and plan', async () => {
    const m = mark();
    const id = await run({ playbook: 'nochange' });
    const done = await waitForStatus(h.deps, id, ['success', 'error']);
    expect(done.status, (await outputOf(h.deps, id)).join('\n')).toBe('success');
    expect(commandsSince(m)).toEqual(planCommands('terraform'));
    const out = await outputOf(h.deps, id);
    expect(out).toContain('TF_VAR_db_password=**********');
    expect(out.join('\n')).not.toContain('tf-s3cret-value');
    expect(readFileSync(record, 'utf8')).not.toContain('tf-s3cret-value');
  });

  it('waits for confirmation on a plan with changes, then applies the saved plan', async () => {
    const m = mark();
    const id = await run({ playbook: 'change' });
    await decide(id, 'confirm');
    const done = await waitForStatus(h.deps, id, ['success', 'error']);
    expect(done.status).toBe('success');
    expect(commandsSince(m)).toEqual([
      ...planCommands('terraform'),
      'terraform show -json <plan>',
      'terraform apply -lock-timeout=5m -auto-approve <plan>',
    ]);
    expect(await statuses(id)).toEqual([
      'waiting',
      'starting',
      'running',
      'waiting_confirmation',
      'confirmed',
      'running',
      'success',
    ]);
    expect(await outputOf(h.deps, id)).toContain(
      'Apply complete! Resources: 1 added, 0 changed, 0 destroyed.',
    );
    const again = await owner.post(`/api/project/${projectId}/tasks/${id}/confirm`, {});
    expect(again.statusCode).toBe(400);
    expect(again.json().error).toBe('The task is not waiting for confirmation');
  });

  it('ends as error without applying when the plan is rejected', async () => {
    const m = mark();
    const id = await run({ app: 'tofu', playbook: 'change' });
    await decide(id, 'reject');
    const done = await waitForStatus(h.deps, id, ['success', 'error']);
    expect(done.status).toBe('error');
    expect(commandsSince(m)).toEqual([...planCommands('tofu'), 'tofu show -json <plan>']);
    // Never through `rejected` (a finished status) on the way: the task ends once, as an error saying why.
    expect((await statuses(id)).slice(-2)).toEqual(['waiting_confirmation', 'error']);
    expect(done.message).toBe('The plan was rejected');
    expect(await outputOf(h.deps, id)).toContain('The plan was rejected');
  });

  it('applies at once with auto-approve, honours plan-only, destroy and init params', async () => {
    let m = mark();
    const auto = await run({ playbook: 'change', task_params: { auto_approve: true } });
    expect((await waitForStatus(h.deps, auto, ['success', 'error'])).status).toBe('success');
    expect(commandsSince(m).at(-1)).toBe('terraform apply -lock-timeout=5m -auto-approve <plan>');
    expect(await statuses(auto)).not.toContain('waiting_confirmation');

    m = mark();
    const planOnly = await run(
      { playbook: 'change', task_params: { allow_destroy: true } },
      { params: { plan: true, destroy: true, upgrade: true, reconfigure: true } },
    );
    expect((await waitForStatus(h.deps, planOnly, ['success', 'error'])).status).toBe('success');
    expect(commandsSince(m)).toEqual([
      'terraform init -lock-timeout=5m -upgrade -reconfigure',
      'terraform workspace list',
      'terraform workspace select -or-create=true staging',
      'terraform plan -lock-timeout=5m -destroy -var region=eu-1 -out=<plan>',
      'terraform show -json <plan>',
    ]);
  });

  it('passes the template lock timeout to init, plan and apply, and never turns locking off', async () => {
    const m = mark();
    const id = await run({ playbook: 'change', task_params: { auto_approve: true, lock_timeout: '90s' } });
    expect((await waitForStatus(h.deps, id, ['success', 'error'])).status).toBe('success');
    expect(commandsSince(m)).toEqual([
      ...planCommands('terraform', '90s'),
      'terraform show -json <plan>',
      'terraform apply -lock-timeout=90s -auto-approve <plan>',
    ]);
    // Every command of every run so far (init, plan, apply, show of terraform and tofu) locks the state.
    expect(readFileSync(record, 'utf8')).not.toContain('-lock=false');
  });

  it('a run that cannot get the state lock ends saying the state is locked and by whom', async () => {
    const m = mark();
    const id = await run({ playbook: 'locked', task_params: { lock_timeout: '1s' } });
    const done = await waitForStatus(h.deps, id, ['success', 'error']);
    expect(done.status).toBe('error');
    const reason = `The state is locked by ${LOCK_HOLDER} (OperationTypeApply): the lock was not released within the lock timeout (1s)`;
    expect(done.message).toBe(reason);
    expect((await owner.get(`/api/project/${projectId}/tasks/${id}`)).json().message).toBe(reason);
    const out = await outputOf(h.deps, id);
    expect(out).toContain('│ Error: Error acquiring the state lock');
    expect(out.at(-1)).toBe(reason);
    expect(commandsSince(m).at(-1)).toBe('terraform plan -lock-timeout=1s -var region=eu-1 -out=<plan>');
    expect((await owner.get(`/api/project/${projectId}/tasks/${id}/plan`)).statusCode).toBe(404);
  });

  it('a lock released within the lock timeout lets the run go on', async () => {
    const m = mark();
    const id = await run({ playbook: 'locked', task_params: { auto_approve: true, lock_timeout: '2m' } });
    // The plan waits for the lock (the stand-in's `locked` file in the task's checkout) until it is released.
    const lockFile = join(h.dataDir, 'tasks', String(id), 'repo', 'locked', 'locked');
    await waitFor(
      async () =>
        (commandsSince(m).some((c) => c.startsWith('terraform plan')) && existsSync(lockFile)) || undefined,
    );
    expect(
      (await h.deps.db.selectFrom('task').select('status').where('id', '=', id).executeTakeFirst())?.status,
    ).toBe('running');
    rmSync(lockFile);
    const done = await waitForStatus(h.deps, id, ['success', 'error']);
    expect(done.status, (await outputOf(h.deps, id)).join('\n')).toBe('success');
    expect(commandsSince(m).at(-1)).toBe('terraform apply -lock-timeout=2m -auto-approve <plan>');
  });

  it('keeps a summary of the plan with every action, sensitive attributes by name only', async () => {
    const id = await run({ playbook: 'everything' });
    await waitForStatus(h.deps, id, ['waiting_confirmation']);
    // Kept before the task waits for confirmation: whoever is asked to confirm can read it at once.
    const res = await owner.get(`/api/project/${projectId}/tasks/${id}/plan`);
    expect(res.statusCode).toBe(200);
    const { plan_file, ...summary } = res.json();
    // The plan file's digest and where it was made; a run that waits for confirmation keeps no file to apply later.
    expect(plan_file).toMatchObject({
      digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      workspace: 'staging',
      stored: false,
      expires_at: null,
      state_lineage: expect.any(String),
      state_serial: expect.any(Number),
      approved_by: null,
      applied_by_task: null,
    });
    expect(summary).toEqual({
      format_version: '1.2',
      counts: { add: 1, change: 1, destroy: 1, replace: 2, read: 1, no_op: 1 },
      drift: 1,
      omitted: 0,
      changes: [
        {
          address: 'aws_instance.web',
          action: 'create',
          actions: ['create'],
          attributes: ['ami', 'arn', 'id', 'instance_type'],
          sensitive: [],
        },
        {
          address: 'aws_db_instance.main',
          action: 'update',
          actions: ['update'],
          attributes: ['instance_class', 'password'],
          sensitive: ['password'],
        },
        {
          address: 'aws_security_group.old',
          action: 'delete',
          actions: ['delete'],
          attributes: ['description', 'name'],
          sensitive: [],
        },
        {
          address: 'aws_instance.db',
          action: 'replace',
          actions: ['delete', 'create'],
          attributes: ['ami', 'id'],
          sensitive: [],
        },
        {
          address: 'aws_lb.front',
          action: 'replace',
          actions: ['create', 'delete'],
          attributes: ['subnets'],
          sensitive: [],
        },
        {
          address: 'data.aws_ami.latest',
          action: 'read',
          actions: ['read'],
          attributes: ['id', 'most_recent'],
          sensitive: [],
        },
      ],
    });
    await decide(id, 'reject');
    expect((await waitForStatus(h.deps, id, ['success', 'error'])).status).toBe('error');
    // The sensitive value is nowhere: not in the answer, the stored row or the log.
    expect(res.body).not.toContain(PLAN_SECRET);
    const row = await h.deps.db
      .selectFrom('task_plan')
      .selectAll()
      .where('task_id', '=', id)
      .executeTakeFirst();
    expect(row?.project_id).toBe(projectId);
    expect(row?.summary).toContain('aws_db_instance.main');
    expect(row?.summary).not.toContain(PLAN_SECRET);
    expect((await outputOf(h.deps, id)).join('\n')).not.toContain(PLAN_SECRET);
  });

  it("masks the task's secrets in the addresses of its plan summary, as in its log", async () => {
    const id = await run({ playbook: 'secret-key', task_params: { auto_approve: true } });
    expect((await waitForStatus(h.deps, id, ['success', 'error'])).status).toBe('success');
    const res = await owner.get(`/api/project/${projectId}/tasks/${id}/plan`);
    expect(res.json().changes).toEqual([
      {
        address: 'aws_ssm_parameter.p["**********"]',
        action: 'create',
        actions: ['create'],
        attributes: ['value'],
        sensitive: [],
      },
    ]);
    expect(res.body).not.toContain('tf-s3cret-value');
  });

  it('stopping a task that waits for confirmation ends it as stopped', async () => {
    const id = await run({ playbook: 'change' });
    await waitForStatus(h.deps, id, ['waiting_confirmation']);
    expect((await owner.post(`/api/project/${projectId}/tasks/${id}/stop`, {})).statusCode).toBe(204);
    expect((await waitForStatus(h.deps, id, ['stopped', 'error', 'success'], 3000)).status).toBe('stopped');
  });

  it('a stop request ends a helper command that hangs (workspace list) within 2 s', async () => {
    const id = await run({ playbook: 'hang' });
    await waitFor(async () => {
      return descendantArgs().some((a) => /sleep 98765/.test(a)) || undefined;
    });
    // Measured from the stop request to the stored end only (the helper is already hanging); the helper is killed
    // at once, so 2 s leaves ample headroom on a busy machine. The wait itself is longer, to report the status.
    const started = Date.now();
    expect((await owner.post(`/api/project/${projectId}/tasks/${id}/stop`, {})).statusCode).toBe(204);
    expect((await waitForStatus(h.deps, id, ['stopped', 'error', 'success'], 10_000)).status).toBe('stopped');
    expect(Date.now() - started).toBeLessThan(2000);
    await waitFor(async () => !descendantArgs().some((a) => /sleep 98765/.test(a)) || undefined, 2000);
  });

  it('runs pulumi up with the stack, and preview for a dry run', async () => {
    let m = mark();
    const tpl = { app: 'pulumi', playbook: 'infra', inventory_id: null, arguments: '["--refresh"]' };
    const up = await run(tpl);
    expect((await waitForStatus(h.deps, up, ['success', 'error'])).status).toBe('success');
    expect(commandsSince(m)).toEqual([
      'pulumi stack select --create --non-interactive dev',
      'pulumi up --yes --stack dev --refresh',
    ]);
    m = mark();
    const preview = await run(tpl, { dry_run: true, params: { stack: 'prod' } });
    expect((await waitForStatus(h.deps, preview, ['success', 'error'])).status).toBe('success');
    expect(commandsSince(m)).toEqual([
      'pulumi stack select --create --non-interactive prod',
      'pulumi preview --stack prod --refresh',
    ]);
  });
});
