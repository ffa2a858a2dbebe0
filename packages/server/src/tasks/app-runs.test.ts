import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { recordingStandIn } from '../../test/support/hostile-repo';
import {
  insertInventory,
  insertTemplate,
  toolsOnPath,
  waitForStatus,
} from '../../test/support/task-fixtures';
import { insertGitRepository, runTask, useHarnessWithProject } from '../../test/support/task-runs';

/**
 * One run of each script and Terraform-family app added beside bash and terraform (python with the real python3,
 * powershell and terragrunt with stand-ins) on every configured database: the statuses, output and plan
 * confirmation of these apps are stored like those of the others. The executors' own tests (python.test.ts,
 * powershell.test.ts, terragrunt.test.ts) cover what the apps run, on SQLite.
 */
describe.each(testDialects())('python, powershell and terragrunt runs stored on $name', (dialect) => {
  const p = useHarnessWithProject(dialect, { maxParallelTasks: 10 });
  let repoId: number;
  let record: string;
  let restorePath = () => {};

  beforeAll(async () => {
    ({ record, restore: restorePath } = toolsOnPath({
      pwsh: recordingStandIn,
      // Plans with changes (it never says "No changes."): the run waits for confirmation.
      // Plans into the -out file and shows it, as terragrunt passes both through to Terraform.
      terragrunt: (log) =>
        `#!/bin/bash\necho "terragrunt $*" >> ${log}\necho "Plan: 1 to add"\n` +
        `for a in "$@"; do case "$a" in -out=*) echo '{"format_version":"1.2","resource_changes":[]}' > "\${a#-out=}" ;; esac; done\n` +
        `[ "$1" = show ] && [ -f "\${@: -1}" ] && cat "\${@: -1}"\nexit 0\n`,
    }));
    ({ id: repoId } = await insertGitRepository(p.h.deps, p.projectId, {
      'hello.py': 'import sys\nprint("hello from python", *sys.argv[1:])\n',
      'fail.py': 'import sys\nprint("failing")\nsys.exit(2)\n',
      'hello.ps1': 'Write-Output "hello"\n',
      'live/terragrunt.hcl': '# stack\n',
    }));
  });
  afterAll(() => restorePath());

  const template = (values: Parameters<typeof insertTemplate>[2]) =>
    insertTemplate(p.h.deps, p.projectId, { repository_id: repoId, allow_parallel_tasks: 1, ...values });

  it('python: output and the success or error of the script', async () => {
    const ok = await runTask(p.h, p.owner, p.projectId, {
      template_id: await template({ app: 'python', playbook: 'hello.py', arguments: '["ünïcode ✓"]' }),
    });
    expect(ok.done.status).toBe('success');
    expect(ok.out).toContain('hello from python ünïcode ✓');
    const bad = await runTask(p.h, p.owner, p.projectId, {
      template_id: await template({ app: 'python', playbook: 'fail.py' }),
    });
    expect(bad.done.status).toBe('error');
    expect(bad.out.slice(-2)).toEqual(['failing', 'python3 failed with exit code 2']);
  });

  it('powershell: pwsh -File with the script', async () => {
    const { done } = await runTask(p.h, p.owner, p.projectId, {
      template_id: await template({ app: 'powershell', playbook: 'hello.ps1' }),
    });
    expect(done.status).toBe('success');
    expect(readFileSync(record, 'utf8')).toMatch(
      /^pwsh \[.*\] -NoProfile -NonInteractive -File \/.*hello\.ps1$/m,
    );
  });

  it('terragrunt: waits for confirmation, then applies', async () => {
    const workspace = await insertInventory(p.h.deps, p.projectId, {
      type: 'terragrunt-workspace',
      inventory: 'prod',
    });
    const res = await p.owner.post(`/api/project/${p.projectId}/tasks`, {
      template_id: await template({ app: 'terragrunt', playbook: 'live', inventory_id: workspace }),
    });
    const id = res.json().id as number;
    await waitForStatus(p.h.deps, id, ['waiting_confirmation']);
    const task = await p.owner.get(`/api/project/${p.projectId}/tasks/${id}`);
    expect(task.json()).toMatchObject({ status: 'waiting_confirmation' });
    expect((await p.owner.post(`/api/project/${p.projectId}/tasks/${id}/confirm`, {})).statusCode).toBe(204);
    expect((await waitForStatus(p.h.deps, id, ['success', 'error', 'stopped'])).status).toBe('success');
    expect(readFileSync(record, 'utf8')).toContain('-- workspace select -or-create=true prod');
    expect(readFileSync(record, 'utf8')).toMatch(
      /^terragrunt apply --tf-path=terraform -lock-timeout=5m -auto-approve /m,
    );
  });
});
