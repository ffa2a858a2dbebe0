import { readFileSync } from 'node:fs';
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
import type { LiveMessage } from '../live/bus';

/** A terraform/tofu stand-in: records argv, prints realistic output, writes and checks the saved plan. */
const tfScript = (record: string) => `#!/bin/bash
echo "$(basename "$0") $*" >> ${record}
case "$1" in
  init) echo "Initializing the backend..."; echo "Terraform has been successfully initialized!" ;;
  workspace)
    if [ "$2" = list ]; then [ -f hang ] && exec sleep 98765; echo "* default"; else echo "Switched to workspace \\"$4\\"."; fi ;;
  plan)
    env | grep '^TF_VAR_' | sort
    out=""
    for a in "$@"; do case "$a" in -out=*) out="\${a#-out=}" ;; esac; done
    if [ -f nochanges ]; then
      echo "No changes. Your infrastructure matches the configuration."
    else
      echo "  # null_resource.example will be created"
      echo "Plan: 1 to add, 0 to change, 0 to destroy."
      echo "saved plan" > "$out"
    fi ;;
  apply)
    plan="\${@: -1}"
    [ -f "$plan" ] || { echo "no saved plan at $plan"; exit 1; }
    echo "Apply complete! Resources: 1 added, 0 changed, 0 destroyed." ;;
esac
`;

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
      terraform: tfScript,
      tofu: tfScript,
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
  const planCommands = (app: 'terraform' | 'tofu') => [
    `${app} init -lock=false -migrate-state`,
    `${app} workspace list`,
    `${app} workspace select -or-create=true staging`,
    `${app} plan -lock=false -var region=eu-1 -out=<plan>`,
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
      'terraform apply -lock=false -auto-approve <plan>',
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
    expect(commandsSince(m)).toEqual(planCommands('tofu'));
    expect((await statuses(id)).slice(-3)).toEqual(['waiting_confirmation', 'rejected', 'error']);
    expect(await outputOf(h.deps, id)).toContain('The plan was rejected');
  });

  it('applies at once with auto-approve, honours plan-only, destroy and init params', async () => {
    let m = mark();
    const auto = await run({ playbook: 'change', task_params: { auto_approve: true } });
    expect((await waitForStatus(h.deps, auto, ['success', 'error'])).status).toBe('success');
    expect(commandsSince(m).at(-1)).toBe('terraform apply -lock=false -auto-approve <plan>');
    expect(await statuses(auto)).not.toContain('waiting_confirmation');

    m = mark();
    const planOnly = await run(
      { playbook: 'change', task_params: { allow_destroy: true } },
      { params: { plan: true, destroy: true, upgrade: true, reconfigure: true } },
    );
    expect((await waitForStatus(h.deps, planOnly, ['success', 'error'])).status).toBe('success');
    expect(commandsSince(m)).toEqual([
      'terraform init -lock=false -upgrade -reconfigure',
      'terraform workspace list',
      'terraform workspace select -or-create=true staging',
      'terraform plan -lock=false -destroy -var region=eu-1 -out=<plan>',
    ]);
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
