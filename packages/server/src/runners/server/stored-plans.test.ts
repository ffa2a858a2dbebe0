import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { GLOBAL_REGISTRATION_TOKEN } from '../../../test/support/fake-runner';
import type { Client, Harness } from '../../../test/support/harness';
import { serverBin } from '../../../test/support/server-process';
import {
  insertInventory,
  insertTemplate,
  toolsOnPath,
  waitFor,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { ENDED, harnessWithProject, insertGitRepository } from '../../../test/support/task-runs';
import { everyActionPlan, terraformScript } from '../../../test/support/terraform-stand-in';

const run = promisify(execFile);

/**
 * Stored plans across runners: a plan made on one `signalbox runner` process reaches the server (its file sealed
 * at rest), is approved in the console and applied, exactly, by a task on another runner, which gets the file in
 * its sealed job. A drift check on a runner reports what it found.
 */
describe.each(testDialects())('stored plans on remote runners on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let repoId: number;
  let invId: number;
  let record: string;
  let work: string;
  const runners: ChildProcess[] = [];
  let restorePath = () => {};

  beforeAll(async () => {
    let bin: string;
    ({ bin, record, restore: restorePath } = toolsOnPath({ terraform: terraformScript }));
    ({ h, owner, projectId } = await harnessWithProject(dialect, {
      runnerRegistrationToken: GLOBAL_REGISTRATION_TOKEN,
      runnerLostTimeout: 10,
    }));
    const url = (await h.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
    work = mkdtempSync(join(tmpdir(), 'signalbox-runner-plans-'));
    ({ id: repoId } = await insertGitRepository(h.deps, projectId, {
      'infra/main.tf': '# every kind of change\n',
      'infra/plan.json': JSON.stringify(everyActionPlan),
      'infra/drift.json': JSON.stringify({
        format_version: '1.2',
        resource_drift: [
          {
            address: 'aws_s3_bucket.logs',
            change: { actions: ['update'], before: { tags: { a: '1' } }, after: { tags: { a: '2' } } },
          },
        ],
      }),
    }));
    invId = await insertInventory(h.deps, projectId, { type: 'terraform-workspace', inventory: 'prod' });
    for (const name of ['planner', 'applier']) {
      const dir = join(work, name);
      await run(
        process.execPath,
        [serverBin, 'runner', 'register', '--url', url, '--name', name, '--tag', name, '--dir', dir],
        { env: { ...process.env, SIGNALBOX_RUNNER_REGISTRATION_TOKEN: GLOBAL_REGISTRATION_TOKEN } },
      );
      runners.push(
        spawn(process.execPath, [serverBin, 'runner', 'start', '--dir', dir], {
          env: { ...process.env, SIGNALBOX_LOG_LEVEL: 'warn', SIGNALBOX_TASK_SANDBOX_PATHS: `${bin}:rw` },
          stdio: ['ignore', 'ignore', 'inherit'],
        }),
      );
    }
    for (const name of ['planner', 'applier'])
      await waitFor(
        async () =>
          (
            await h.deps.db
              .selectFrom('remote_runner')
              .select('instance_id')
              .where('name', '=', name)
              .executeTakeFirst()
          )?.instance_id,
        90_000,
        `the runner ${name} to connect`,
      );
  }, 240_000);

  afterAll(async () => {
    restorePath();
    for (const child of runners)
      if (child.exitCode === null)
        await new Promise((resolve) => {
          child.once('exit', resolve);
          child.kill('SIGTERM');
        });
    await h?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const runnerId = async (name: string) =>
    (
      await h.deps.db
        .selectFrom('remote_runner')
        .select('id')
        .where('name', '=', name)
        .executeTakeFirstOrThrow()
    ).id;

  it('a plan made on one runner, approved in the console, is applied from the stored file on another', async () => {
    const templateId = await insertTemplate(h.deps, projectId, {
      app: 'terraform',
      repository_id: repoId,
      inventory_id: invId,
      playbook: 'infra',
      runner_tag: 'planner',
    });
    const base = `/api/project/${projectId}`;
    const started = await owner.post(`${base}/tasks`, { template_id: templateId, params: { plan: true } });
    expect(started.statusCode).toBe(201);
    const planTask = started.json().id as number;
    const planned = await waitForStatus(h.deps, planTask, ENDED, 150_000);
    expect(planned.status).toBe('success');
    expect(planned.remote_runner_id).toBe(await runnerId('planner'));
    const plan = (await owner.get(`${base}/tasks/${planTask}/plan`)).json();
    expect(plan.plan_file).toMatchObject({
      stored: true,
      workspace: 'prod',
      state_lineage: expect.any(String),
    });
    const digest = plan.plan_file.digest as string;

    // The template's tasks now go to the other runner.
    await h.deps.db
      .updateTable('template')
      .set({ runner_tag: 'applier' })
      .where('id', '=', templateId)
      .execute();
    const res = await owner.post(`${base}/tasks/${planTask}/apply_plan`, { plan_digest: digest });
    expect(res.statusCode, res.body).toBe(201);
    const applyTask = res.json().id as number;
    const applied = await waitForStatus(h.deps, applyTask, ENDED, 150_000);
    expect(applied.status, applied.message ?? '').toBe('success');
    expect(applied.remote_runner_id).toBe(await runnerId('applier'));
    const digests = readFileSync(`${record}.tfstate.applied`, 'utf8').split('\n').filter(Boolean);
    expect(digests.at(-1)).toBe(digest);
    expect(readFileSync(record, 'utf8').split('\n').filter(Boolean).slice(-1)[0]).toMatch(
      /^terraform apply -lock-timeout=5m -auto-approve \S+signalbox\.tfplan$/,
    );
    expect((await owner.get(`${base}/tasks/${planTask}/plan`)).json().plan_file.applied_by_task).toBe(
      applyTask,
    );
  }, 360_000);

  it('a drift check on a runner reports its drift to the server', async () => {
    const templateId = await insertTemplate(h.deps, projectId, {
      app: 'terraform',
      repository_id: repoId,
      inventory_id: invId,
      playbook: 'infra',
      runner_tag: 'planner',
    });
    const base = `/api/project/${projectId}`;
    const started = await owner.post(`${base}/tasks`, {
      template_id: templateId,
      params: { drift_check: true },
    });
    expect(started.statusCode).toBe(201);
    const done = await waitForStatus(h.deps, started.json().id, ENDED, 150_000);
    expect(done.status).toBe('success');
    const drift = (await owner.get(`${base}/templates/${templateId}/drift`)).json();
    expect(drift).toMatchObject({ status: 'drifted', task_id: done.id });
    expect(drift.resources[0]).toEqual({
      address: 'aws_s3_bucket.logs',
      kind: 'drift',
      action: 'update',
      paths: ['tags.a'],
    });
  }, 240_000);
});
