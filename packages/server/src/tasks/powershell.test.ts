import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import {
  alive,
  insertTemplate,
  outputOf,
  toolsOnPath,
  waitFor,
  waitForStatus,
} from '../../test/support/task-fixtures';
import { hostPidsOf } from '../../test/support/task-pids';
import {
  harnessWithProject,
  insertGitRepository,
  insertSecretEnvironment,
  runTask,
} from '../../test/support/task-runs';

/**
 * A pwsh stand-in (PowerShell cannot be installed here): records its argv, then behaves as pwsh does with
 * `-File <script> <args>`: the script gets the arguments after it. The script's text says what it does: `exit N`
 * ends with that code, `Start-Sleep` sleeps with a child process until it is stopped, anything else is printed.
 */
const pwshStandIn = (record: string) => `#!/bin/bash
echo "pwsh $*" >> ${record}
opts=()
while [ $# -gt 0 ] && [ "$1" != -File ]; do opts+=("$1"); shift; done
[ "$1" = -File ] || { echo "pwsh stand-in: no -File"; exit 64; }
script="$2"; shift 2
echo "options: \${opts[*]}"
echo "script: $script"
echo "args: $*"
echo "env: $GREETING $API_TOKEN $DB_PASSWORD"
if grep -q Start-Sleep "$script"; then
  sleep 1000 & echo "child $!"; echo "main $$"; wait
fi
code=$(sed -n 's/^exit \\([0-9]*\\)$/\\1/p' "$script")
while read -r line; do
  case "$line" in Write-Output*) echo "\${line#Write-Output }" | tr -d '"' ;; esac
done < "$script"
exit "\${code:-0}"
`;

describe.each(testDialects())('powershell tasks with a pwsh stand-in on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let repoId: number;
  let repoDir: string;
  let envId: number;
  let record: string;
  let restorePath = () => {};

  beforeAll(async () => {
    ({ record, restore: restorePath } = toolsOnPath({ pwsh: pwshStandIn }));
    ({ h, owner, projectId } = await harnessWithProject(dialect, { maxParallelTasks: 10 }));
    ({ id: repoId, dir: repoDir } = await insertGitRepository(h.deps, projectId, {
      'deploy.ps1': 'Write-Output "deploying"\n',
      'fail.ps1': 'Write-Output "about to fail"\nexit 4\n',
      'sleep.ps1': 'Start-Sleep -Seconds 1000\n',
    }));
    envId = await insertSecretEnvironment(
      h.deps,
      projectId,
      { json: { region: 'eu-1' }, env: { GREETING: 'hi-there' } },
      { vars: { DB_PASSWORD: 'ps-var-s3cret' }, env: { API_TOKEN: 'ps-env-s3cret' } },
    );
  });
  afterAll(async () => {
    restorePath();
    await h?.close();
  });

  const template = (playbook: string, values: Parameters<typeof insertTemplate>[2] = {}) =>
    insertTemplate(h.deps, projectId, {
      app: 'powershell',
      playbook,
      repository_id: repoId,
      environment_id: envId,
      allow_parallel_tasks: 1,
      ...values,
    });
  const lastCall = () => readFileSync(record, 'utf8').trim().split('\n').at(-1);

  it('runs pwsh -File <script> with every template and task value after the script', async () => {
    const tpl = await template('deploy.ps1', {
      arguments: '["-Verbose"]',
      allow_override_args_in_task: 1,
    });
    // Values that pwsh would read as its own options if they came before -File.
    const { done, out } = await runTask(h, owner, projectId, {
      template_id: tpl,
      arguments: '["-Command", "Remove-Item /"]',
      environment: '{"-ExecutionPolicy": "Bypass"}',
    });
    expect(done.status, out.join('\n')).toBe('success');
    const script = join(realpathSync(repoDir), 'deploy.ps1');
    expect(lastCall()).toBe(
      `pwsh -NoProfile -NonInteractive -File ${script} -Verbose region=eu-1 -ExecutionPolicy=Bypass -Command Remove-Item /`,
    );
    expect(out).toContain('options: -NoProfile -NonInteractive');
    expect(out).toContain(`script: ${script}`);
    expect(out).toContain('deploying');
    expect(out).toContain('env: hi-there ********** **********');
    expect(out.join('\n')).not.toMatch(/ps-(env|var)-s3cret/);
    expect(readFileSync(record, 'utf8')).not.toContain('s3cret');
  });

  it('ends as error with the script’s exit code', async () => {
    const { done, out } = await runTask(h, owner, projectId, { template_id: await template('fail.ps1') });
    expect(done.status).toBe('error');
    expect(out).toContain('about to fail');
    expect(out.at(-1)).toBe('pwsh failed with exit code 4');
  });

  it('a stop ends pwsh and what it started', async () => {
    const res = await owner.post(`/api/project/${projectId}/tasks`, {
      template_id: await template('sleep.ps1'),
    });
    const id = res.json().id as number;
    const pids = await waitFor(async () => {
      // The pids the script prints are those of its PID namespace when it runs confined.
      return hostPidsOf(id, await outputOf(h.deps, id), ['child ', 'main ']);
    });
    expect(pids.every(alive)).toBe(true);
    expect((await owner.post(`/api/project/${projectId}/tasks/${id}/stop`, {})).statusCode).toBe(204);
    await waitFor(async () => pids.every((p) => !alive(p)), 10_000, 'processes to end');
    expect((await waitForStatus(h.deps, id, ['stopped', 'error', 'success'], 10_000)).status).toBe('stopped');
  });
});
