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
import {
  ENDED,
  harnessWithProject,
  insertSecretEnvironment,
  liveMessagesOf,
  updatesOf,
} from '../../test/support/task-runs';
import { terraformCommands } from '../../test/support/terraform-stand-in';
import { appRegistry } from '../lib/apps';
import type { LiveMessage } from '../live/bus';

/** The Terraform binary the registry names; terragrunt is told to drive it. */
const TF_PATH = '/opt/terraform/bin/terraform';

/**
 * A terragrunt stand-in: records its argv (and whether it was told not to prompt), then answers as terragrunt
 * does over Terraform: init, `run -- workspace …`, plan into the saved plan file, show and apply of that file.
 */
const terragruntScript = (record: string) => `#!/bin/bash
echo "terragrunt $* [TG_NON_INTERACTIVE=$TG_NON_INTERACTIVE]" >> ${record}
cmd="$1"; shift
case "$1" in --tf-path=*) ;; *) echo "terragrunt stand-in: --tf-path must follow the command"; exit 64 ;; esac
shift
if [ "$cmd" = run ]; then
  while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
  shift; cmd="$1"; shift
fi
case "$cmd" in
  init) echo "Terraform has been successfully initialized!" ;;
  workspace)
    if [ "$1" = list ]; then echo "* default"; else echo "Switched to workspace \\"$3\\"."; fi ;;
  plan|show|apply) ;;
  *) echo "terragrunt stand-in: unexpected command $cmd"; exit 64 ;;
esac
${terraformCommands}
`;

describe.each(testDialects())('terragrunt with a stand-in on $name', (dialect) => {
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
    ({ record, restore: restorePath } = toolsOnPath({ terragrunt: terragruntScript }));
    ({ h, owner, projectId } = await harnessWithProject(dialect, {
      apps: appRegistry({ terraform: { path: TF_PATH } }),
    }));
    messages = liveMessagesOf(h);
    const repo = gitRepo({
      'live/nochange/terragrunt.hcl': '# nothing\n',
      'live/nochange/nochanges': '',
      'live/change/terragrunt.hcl': 'terraform { source = "../modules/null" }\n',
    });
    repoId = await insertRepository(h.deps, projectId, { git_url: `file://${repo}` });
    envId = await insertSecretEnvironment(
      h.deps,
      projectId,
      { json: { region: 'eu-1' } },
      { vars: { db_password: 'tg-s3cret-value' } },
    );
    invId = await insertInventory(h.deps, projectId, { type: 'terragrunt-workspace', inventory: 'staging' });
  });
  afterAll(async () => {
    restorePath();
    await h?.close();
  });

  const lines = () => readFileSync(record, 'utf8').split('\n').filter(Boolean);
  const mark = () => lines().length;
  /** The commands one task ran, with the per-task plan path normalised. */
  const commandsSince = (from: number) =>
    lines()
      .slice(from)
      .map((l) => l.replace(/\/\S*\/signalbox\.tfplan/g, '<plan>'));

  async function run(tpl: Record<string, unknown>, body: Record<string, unknown> = {}) {
    const id = await insertTemplate(h.deps, projectId, {
      app: 'terragrunt',
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

  const tg = (args: string) => `terragrunt ${args} [TG_NON_INTERACTIVE=true]`;
  /** What a run does up to its plan: init, the workspace commands through `run --`, plan. */
  const planCommands = [
    tg(`init --tf-path=${TF_PATH} -lock-timeout=5m -migrate-state`),
    tg(`run --tf-path=${TF_PATH} -- workspace list`),
    tg(`run --tf-path=${TF_PATH} -- workspace select -or-create=true staging`),
    tg(`plan --tf-path=${TF_PATH} -lock-timeout=5m -var region=eu-1 -out=<plan>`),
  ];
  const showCommand = tg(`show --tf-path=${TF_PATH} -json <plan>`);
  const applyCommand = tg(`apply --tf-path=${TF_PATH} -lock-timeout=5m -auto-approve <plan>`);

  async function decide(id: number, decision: 'confirm' | 'reject') {
    await waitForStatus(h.deps, id, ['waiting_confirmation']);
    const res = await owner.post(`/api/project/${projectId}/tasks/${id}/${decision}`, {});
    expect(res.statusCode).toBe(204);
  }
  const statuses = (id: number) =>
    waitFor(async () => {
      const list = updatesOf(messages, id);
      return ENDED.includes(list.at(-1) ?? '') ? list : undefined;
    });

  it('ends with success on "No changes.", secrets as masked TF_VAR_ variables', async () => {
    const m = mark();
    const id = await run({ playbook: 'live/nochange' });
    const done = await waitForStatus(h.deps, id, ['success', 'error']);
    const out = await outputOf(h.deps, id);
    expect(done.status, out.join('\n')).toBe('success');
    expect(commandsSince(m)).toEqual(planCommands);
    expect(out).toContain('TF_VAR_db_password=**********');
    expect(out.join('\n')).not.toContain('tg-s3cret-value');
    expect(readFileSync(record, 'utf8')).not.toContain('tg-s3cret-value');
  });

  it('waits for confirmation on a plan with changes, then applies the saved plan', async () => {
    const m = mark();
    const id = await run({ playbook: 'live/change' });
    await decide(id, 'confirm');
    expect((await waitForStatus(h.deps, id, ['success', 'error'])).status).toBe('success');
    expect(commandsSince(m)).toEqual([...planCommands, showCommand, applyCommand]);
    expect(readFileSync(record, 'utf8')).not.toContain('-lock=false');
    const plan = await owner.get(`/api/project/${projectId}/tasks/${id}/plan`);
    expect(plan.json().counts).toEqual({ add: 1, change: 0, destroy: 0, replace: 0, read: 0, no_op: 0 });
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
  });

  it('ends as error without applying when the plan is rejected', async () => {
    const m = mark();
    const id = await run({ playbook: 'live/change' });
    await decide(id, 'reject');
    const done = await waitForStatus(h.deps, id, ['success', 'error']);
    expect(done.status).toBe('error');
    expect(commandsSince(m)).toEqual([...planCommands, showCommand]);
    // Never through `rejected` (a finished status) on the way: the task ends once, as an error saying why.
    expect((await statuses(id)).slice(-2)).toEqual(['waiting_confirmation', 'error']);
    expect(done.message).toBe('The plan was rejected');
    expect(await outputOf(h.deps, id)).toContain('The plan was rejected');
  });

  it('applies at once with auto-approve; plan-only and dry runs end after the plan', async () => {
    let m = mark();
    const auto = await run({ playbook: 'live/change', task_params: { auto_approve: true } });
    expect((await waitForStatus(h.deps, auto, ['success', 'error'])).status).toBe('success');
    expect(commandsSince(m).at(-1)).toBe(applyCommand);
    expect(await statuses(auto)).not.toContain('waiting_confirmation');

    for (const body of [{ params: { plan: true, upgrade: true } }, { dry_run: true }]) {
      m = mark();
      const planOnly = await run({ playbook: 'live/change' }, body);
      expect((await waitForStatus(h.deps, planOnly, ['success', 'error'])).status).toBe('success');
      const commands = commandsSince(m);
      expect(commands.slice(-2)).toEqual([planCommands.at(-1), showCommand]);
      expect(commands).not.toContain(applyCommand);
    }
  });

  it('stopping a task that waits for confirmation ends it as stopped', async () => {
    const id = await run({ playbook: 'live/change' });
    await waitForStatus(h.deps, id, ['waiting_confirmation']);
    expect((await owner.post(`/api/project/${projectId}/tasks/${id}/stop`, {})).statusCode).toBe(204);
    expect((await waitForStatus(h.deps, id, ['stopped', 'error', 'success'], 3000)).status).toBe('stopped');
  });
});
