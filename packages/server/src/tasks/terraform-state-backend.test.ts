import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { GLOBAL_REGISTRATION_TOKEN } from '../../test/support/fake-runner';
import type { Client, Harness } from '../../test/support/harness';
import { freePort } from '../../test/support/net';
import { serverBin } from '../../test/support/server-process';
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
import { harnessWithProject } from '../../test/support/task-runs';
import { taskSharedEnv } from '../../test/support/task-shared';
import { terraformScript } from '../../test/support/terraform-stand-in';

const run = promisify(execFile);

/**
 * Terraform runs against the built-in state backend, with the terraform stand-in speaking Terraform's http backend
 * through curl (LOCK, GET, POST ?ID=, UNLOCK) with the TF_HTTP_* variables the run injects: two runs on one
 * workspace take turns through the lock, and a run on a remote runner reaches the backend with its own credentials.
 */
describe.each(testDialects())('the built-in state backend with real task runs on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let repoId: number;
  let invId: number;
  let record: string;
  let hold: string;
  let work: string;
  let restorePath = () => {};
  const processes: ChildProcess[] = [];

  beforeAll(async () => {
    ({ record, restore: restorePath } = toolsOnPath({ terraform: terraformScript }));
    hold = join(dirname(record), 'hold-lock');
    // Tasks reach the server at its own listening address (no public URL set).
    const port = await freePort();
    ({ h, owner, projectId } = await harnessWithProject(dialect, {
      port,
      runnerRegistrationToken: GLOBAL_REGISTRATION_TOKEN,
    }));
    await h.app.listen({ port, host: '127.0.0.1' });
    work = mkdtempSync(join(tmpdir(), 'signalbox-state-runner-'));
    const repo = gitRepo({ 'infra/main.tf': 'terraform {\n  backend "http" {}\n}\n' });
    repoId = await insertRepository(h.deps, projectId, { git_url: `file://${repo}` });
    invId = await insertInventory(h.deps, projectId, { type: 'terraform-workspace', inventory: 'staging' });
  });
  afterAll(async () => {
    for (const child of processes) child.kill('SIGTERM');
    restorePath();
    rmSync(hold, { force: true });
    await h?.close();
    rmSync(work, { recursive: true, force: true });
  });

  /** A Terraform template on the built-in backend that applies without confirmation. */
  const template = (name: string, extra: Record<string, unknown> = {}) =>
    insertTemplate(h.deps, projectId, {
      name,
      app: 'terraform',
      playbook: 'infra',
      repository_id: repoId,
      inventory_id: invId,
      ...extra,
      task_params: { state_backend: 'builtin', auto_approve: true, lock_timeout: '2m' },
    });
  async function start(templateId: number) {
    const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: templateId });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  }
  const states = async () => (await owner.get(`/api/project/${projectId}/terraform/states`)).json();
  const versionsOf = async (name: string) =>
    (await owner.get(`/api/project/${projectId}/terraform/states/${name}/versions`)).json();
  /** The current state as Terraform reads it, through an API token as the basic-auth password. */
  async function currentState(name: string) {
    const token = (await owner.post('/api/user/tokens', {})).json().token as string;
    const res = await h.app.inject({
      method: 'GET',
      url: `/api/project/${projectId}/terraform/states/${name}`,
      headers: { authorization: `Basic ${Buffer.from(`laptop:${token}`).toString('base64')}` },
    });
    expect(res.statusCode).toBe(200);
    return JSON.parse(res.body);
  }
  const attributesOf = (state: { resources: { instances: { attributes: Record<string, string> }[] }[] }) =>
    state.resources[0]?.instances[0]?.attributes;

  it('serializes two runs on one workspace through the lock: the second waits, then applies on the first', async () => {
    const first = await template('first');
    const second = await template('second');
    writeFileSync(hold, '');
    const a = await start(first);
    // The first run holds the lock through its apply while the hold file lies there (its plan's lock comes and
    // goes before).
    await waitFor(
      async () => {
        const lock = (await states()).find((s: { name: string }) => s.name === 'staging')?.lock;
        return lock?.task_id === a && lock.operation === 'OperationTypeApply' ? true : undefined;
      },
      60_000,
      'the first run to lock the state for its apply',
    );
    const b = await start(second);
    // The second run asks for the lock and is refused (423) over and over: it waits, still running.
    await waitFor(
      async () =>
        (await outputOf(h.deps, b)).some((l) => l.includes('Acquiring state lock')) ? true : undefined,
      60_000,
      'the second run to wait for the lock',
    );
    const lockNow = (await states()).find((s: { name: string }) => s.name === 'staging').lock;
    expect(lockNow).toMatchObject({ task_id: a, operation: 'OperationTypeApply', who: `task${a}@stand-in` });
    expect(
      (await h.deps.db.selectFrom('task').select('status').where('id', '=', b).executeTakeFirstOrThrow())
        .status,
    ).toBe('running');
    rmSync(hold);

    const doneA = await waitForStatus(h.deps, a, ['success', 'error'], 60_000);
    expect(doneA.status, (await outputOf(h.deps, a)).join('\n')).toBe('success');
    const doneB = await waitForStatus(h.deps, b, ['success', 'error'], 60_000);
    const outB = await outputOf(h.deps, b);
    expect(doneB.status, outB.join('\n')).toBe('success');
    // The second run planned and applied on the state the first wrote.
    expect(outB).toContain('Read the state at serial 1');

    const { state, versions } = await versionsOf('staging');
    expect(state.lock).toBeNull();
    expect(versions.map((v: { serial: number; task_id: number }) => [v.serial, v.task_id])).toEqual([
      [2, b],
      [1, a],
    ]);
    expect(attributesOf(await currentState('staging'))).toEqual({ id: `task-${b}`, applied_on_serial: '1' });

    // The credentials went through the environment: never in a command line, the log, or after the run.
    const outA = await outputOf(h.deps, a);
    expect(outA.join('\n')).toContain(`State: the built-in state backend, state "staging"`);
    expect(outA).toContain('backend password: **********');
    const argv = readFileSync(record, 'utf8');
    expect(argv).not.toMatch(/TF_HTTP|task-\d+:/);
    const creds = await h.deps.db
      .selectFrom('task_state_credential')
      .selectAll()
      .where('task_id', 'in', [a, b])
      .execute();
    expect(creds).toEqual([]);
    // No workspace commands: the http backend has one workspace, and each workspace is a state of its own.
    expect(argv).not.toContain('terraform workspace');
  });

  it('releases the lock of a run that is stopped while it holds it, audited; the next run takes the lock', async () => {
    const held = await template('held');
    writeFileSync(hold, '');
    try {
      const a = await start(held);
      await waitFor(
        async () => {
          const lock = (await states()).find((s: { name: string }) => s.name === 'staging')?.lock;
          return lock?.task_id === a && lock.operation === 'OperationTypeApply' ? lock : undefined;
        },
        60_000,
        'the run to lock the state for its apply',
      );
      // A forced stop kills the stand-in in the middle of its apply: it never says UNLOCK.
      const stop = await owner.post(`/api/project/${projectId}/tasks/${a}/stop`, { force: true });
      expect(stop.statusCode, stop.body).toBe(204);
      expect((await waitForStatus(h.deps, a, ['stopped', 'error'], 60_000)).status).toBe('stopped');
      const after = (await states()).find((s: { name: string }) => s.name === 'staging');
      expect(after.lock).toBeNull();
      const events = (await owner.get(`/api/project/${projectId}/events?limit=50`)).json() as {
        kind: string;
        params: Record<string, unknown>;
      }[];
      expect(events.find((e) => e.kind === 'terraform_state.lock_released')?.params).toMatchObject({
        name: 'staging',
        task_id: a,
      });
    } finally {
      rmSync(hold, { force: true });
    }
    // The next run is not held up by the stopped one's lock.
    const b = await start(held);
    const doneB = await waitForStatus(h.deps, b, ['success', 'error'], 60_000);
    expect(doneB.status, (await outputOf(h.deps, b)).join('\n')).toBe('success');
  });

  it('gives a task on a remote runner credentials that reach the backend where the runner reaches the server', {
    timeout: 150_000,
  }, async () => {
    const url = `http://127.0.0.1:${h.config.port}`;
    const dir = join(work, 'tf-runner');
    await run(
      process.execPath,
      [serverBin, 'runner', 'register', '--url', url, '--name', 'tf-runner', '--tag', 'tf', '--dir', dir],
      {
        env: { ...process.env, SIGNALBOX_RUNNER_REGISTRATION_TOKEN: GLOBAL_REGISTRATION_TOKEN },
      },
    );
    const child = spawn(process.execPath, [serverBin, 'runner', 'start', '--dir', dir], {
      env: { ...process.env, ...taskSharedEnv, SIGNALBOX_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    processes.push(child);
    await waitFor(
      async () =>
        (
          await h.deps.db
            .selectFrom('remote_runner')
            .select('instance_id')
            .where('name', '=', 'tf-runner')
            .executeTakeFirst()
        )?.instance_id ?? undefined,
      30_000,
      'the runner to connect',
    );
    const remote = await template('remote', { runner_tag: 'tf' });
    await h.deps.db
      .updateTable('template')
      .set({
        task_params: JSON.stringify({
          state_backend: 'builtin',
          state_name: 'remote-net',
          auto_approve: true,
        }),
      })
      .where('id', '=', remote)
      .execute();
    const id = await start(remote);
    const done = await waitForStatus(h.deps, id, ['success', 'error'], 90_000);
    const out = await outputOf(h.deps, id);
    expect(done.status, out.join('\n')).toBe('success');
    expect(out.join('\n')).toContain(`${url}/api/project/${projectId}/terraform/states/remote-net`);
    expect(out).toContain('backend password: **********');
    const { versions } = await versionsOf('remote-net');
    expect(versions).toEqual([expect.objectContaining({ serial: 1, task_id: id, source: 'write' })]);
    expect(existsSync(hold)).toBe(false);
  });
});
