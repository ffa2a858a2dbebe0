import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { GLOBAL_REGISTRATION_TOKEN } from '../../../test/support/fake-runner';
import type { Client, Harness } from '../../../test/support/harness';
import { serverBin } from '../../../test/support/server-process';
import {
  insertTemplate,
  outputOf,
  toolsOnPath,
  waitFor,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { ENDED, harnessWithProject, insertGitRepository } from '../../../test/support/task-runs';
import { everyActionPlan, PLAN_SECRET, terraformScript } from '../../../test/support/terraform-stand-in';

const run = promisify(execFile);

/** Big logs through a real `signalbox runner` process: every line stored, in order, the runner never taken for lost. */
describe.each(testDialects())('big logs through a remote runner on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let repoId: number;
  let work: string;
  let runner: ChildProcess | undefined;
  let restorePath = () => {};

  beforeAll(async () => {
    // The runner's PATH holds a terraform stand-in (it takes the PATH it starts with).
    let bin: string;
    ({ bin, restore: restorePath } = toolsOnPath({ terraform: terraformScript }));
    ({ h, owner, projectId } = await harnessWithProject(dialect, {
      runnerRegistrationToken: GLOBAL_REGISTRATION_TOKEN,
      runnerLostTimeout: 10,
    }));
    const url = (await h.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
    work = mkdtempSync(join(tmpdir(), 'signalbox-runner-output-'));
    ({ id: repoId } = await insertGitRepository(h.deps, projectId, {
      'many-lines.sh': "seq -f 'line %.0f' 1 300000\n",
      'long-line.sh': "head -c 64M /dev/zero | tr '\\0' a; echo; echo after-the-line\n",
      'outputs.sh': 'echo \'{"build": "7.2", "images": ["web", "worker"]}\' > "$SIGNALBOX_OUTPUTS"\n',
      'infra/main.tf': '# every kind of change\n',
      'infra/plan.json': JSON.stringify(everyActionPlan),
    }));
    const dir = join(work, 'runner');
    await run(
      process.execPath,
      [serverBin, 'runner', 'register', '--url', url, '--name', 'big', '--tag', 'big', '--dir', dir],
      { env: { ...process.env, SIGNALBOX_RUNNER_REGISTRATION_TOKEN: GLOBAL_REGISTRATION_TOKEN } },
    );
    runner = spawn(process.execPath, [serverBin, 'runner', 'start', '--dir', dir], {
      // Its confined tasks see the stand-in's directory.
      env: { ...process.env, SIGNALBOX_LOG_LEVEL: 'warn', SIGNALBOX_TASK_SANDBOX_PATHS: bin },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitFor(
      async () =>
        (
          await h.deps.db
            .selectFrom('remote_runner')
            .select('instance_id')
            .where('name', '=', 'big')
            .executeTakeFirst()
        )?.instance_id,
      // A runner process starts through tsx: slow on a busy machine.
      90_000,
      'the runner to connect',
    );
  }, 180_000);

  afterAll(async () => {
    restorePath();
    const child = runner;
    if (child && child.exitCode === null)
      await new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      });
    await h?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const startOnRunner = async (playbook: string, tpl: Record<string, unknown> = {}, body = {}) => {
    const templateId = await insertTemplate(h.deps, projectId, {
      repository_id: repoId,
      playbook,
      runner_tag: 'big',
      ...tpl,
    });
    const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: templateId, ...body });
    expect(res.statusCode).toBe(201);
    return res.json().id as number;
  };
  const runOnRunner = async (playbook: string) =>
    waitForStatus(h.deps, await startOnRunner(playbook), ENDED, 150_000);

  it('keeps the plan summary of a Terraform task run on the runner, before it waits for confirmation', async () => {
    const id = await startOnRunner('infra', { app: 'terraform' });
    await waitForStatus(h.deps, id, ['waiting_confirmation', ...ENDED], 150_000);
    const plan = await owner.get(`/api/project/${projectId}/tasks/${id}/plan`);
    expect(plan.statusCode, plan.body).toBe(200);
    expect(plan.json().counts).toEqual({ add: 1, change: 1, destroy: 1, replace: 2, read: 1, no_op: 1 });
    expect(
      plan.json().changes.find((c: { address: string }) => c.address === 'aws_db_instance.main'),
    ).toEqual({
      address: 'aws_db_instance.main',
      action: 'update',
      actions: ['update'],
      attributes: ['instance_class', 'password'],
      sensitive: ['password'],
    });
    expect(plan.body).not.toContain(PLAN_SECRET);
    expect((await owner.post(`/api/project/${projectId}/tasks/${id}/confirm`, {})).statusCode).toBe(204);
    expect((await waitForStatus(h.deps, id, ENDED, 150_000)).status).toBe('success');

    // A plan-only run waits for nobody: its summary comes with the end of the run.
    const dry = await startOnRunner('infra', { app: 'terraform' }, { dry_run: true });
    expect((await waitForStatus(h.deps, dry, ENDED, 150_000)).status).toBe('success');
    const dryPlan = await owner.get(`/api/project/${projectId}/tasks/${dry}/plan`);
    expect(dryPlan.statusCode, dryPlan.body).toBe(200);
    expect(dryPlan.json().counts.replace).toBe(2);
    const stored = await h.deps.db
      .selectFrom('task_plan')
      .select('summary')
      .where('task_id', 'in', [id, dry])
      .execute();
    expect(stored).toHaveLength(2);
    for (const row of stored) expect(row.summary).not.toContain(PLAN_SECRET);
  }, 180_000);

  it('keeps the outputs a task published on the runner', async () => {
    const done = await runOnRunner('outputs.sh');
    expect(done.status).toBe('success');
    expect(done.remote_runner_id).not.toBeNull();
    const answer = await owner.get(`/api/project/${projectId}/tasks/${done.id}`);
    expect(answer.json().outputs).toEqual({ build: '7.2', images: ['web', 'worker'] });
  }, 180_000);

  it('stores every line of a 300,000-line log in order', async () => {
    const task = await runOnRunner('many-lines.sh');
    const lines = (await outputOf(h.deps, task.id)).filter((line) => line.startsWith('line '));
    expect(task.status, `${task.message}`).toBe('success');
    expect(lines).toHaveLength(300_000);
    expect(lines.findIndex((line, i) => line !== `line ${i + 1}`)).toBe(-1);
  }, 180_000);

  it('stores a 64 MiB line in pieces and the line after it', async () => {
    const task = await runOnRunner('long-line.sh');
    expect(task.status, `${task.message}`).toBe('success');
    const lines = await outputOf(h.deps, task.id);
    const first = lines.findIndex((line) => /^a+$/.test(line));
    expect(first).toBeGreaterThan(-1);
    expect(lines.at(-1)).toBe('after-the-line');
    const pieces = lines.slice(first, -1);
    expect(pieces.every((line) => /^a*$/.test(line))).toBe(true);
    expect(pieces.join('')).toHaveLength(64 * 1024 * 1024);
  }, 180_000);
});
