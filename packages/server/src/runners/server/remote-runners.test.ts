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
  alive,
  insertEnvironment,
  insertTemplate,
  outputOf,
  waitFor,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { hostPidsOf } from '../../../test/support/task-pids';
import {
  ENDED,
  harnessWithProject,
  insertGitRepository,
  insertSecretEnvironment,
} from '../../../test/support/task-runs';
import { sharedTempDir, taskSharedEnv } from '../../../test/support/task-shared';

const run = promisify(execFile);

/**
 * Real `signalbox runner` processes on loopback against a server: registered with the CLI, started, given
 * tasks by tag, stopped.
 */
describe.each(testDialects())('remote runner processes on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let url: string;
  let repoId: number;
  let work: string;
  let marksDir: string;
  const processes: ChildProcess[] = [];
  const runnerIds = new Map<string, number>();

  /** Registers a runner with the CLI (its folder under `work`), starts it and waits until it is online. */
  async function startRunner(name: string, tags: string[], maxParallel = 4) {
    const dir = join(work, name);
    const args = [
      'runner',
      'register',
      '--url',
      url,
      '--name',
      name,
      '--max-parallel',
      String(maxParallel),
      '--dir',
      dir,
    ];
    for (const tag of tags) args.push('--tag', tag);
    await run(process.execPath, [serverBin, ...args], {
      env: { ...process.env, SIGNALBOX_RUNNER_REGISTRATION_TOKEN: GLOBAL_REGISTRATION_TOKEN },
    });
    const row = await h.deps.db
      .selectFrom('remote_runner')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    runnerIds.set(name, row.id);
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
            .where('id', '=', row.id)
            .executeTakeFirst()
        )?.instance_id,
      30_000,
      `runner ${name} to connect`,
    );
    return row.id;
  }

  beforeAll(async () => {
    ({ h, owner, projectId } = await harnessWithProject(dialect, {
      runnerRegistrationToken: GLOBAL_REGISTRATION_TOKEN,
    }));
    url = (await h.app.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
    work = mkdtempSync(join(tmpdir(), 'signalbox-runners-'));
    // The tasks write their marks where the runners share a directory with their sandboxed tasks.
    marksDir = sharedTempDir('signalbox-runner-marks-');
    ({ id: repoId } = await insertGitRepository(h.deps, projectId, {
      // Extra variables arrive as NAME=VALUE arguments.
      'mark.sh': [
        'for a in "$@"; do case $a in RUNS_FILE=*) f=$(printf %s "$a" | cut -d= -f2-) ;; esac; done',
        'for a in "$@"; do case $a in MARK=*) echo "ran $a"; echo "$a" >> "$f" ;; esac; done',
        '',
      ].join('\n'),
      'nap.sh': 'sleep 300 &\necho "child $!"\necho "self $$"\nwait\n',
      'env.sh': 'echo "greeting=$GREETING token=$API_TOKEN vars=$*"\n',
    }));
    await Promise.all([
      startRunner('alpha', ['alpha', 'shared']),
      startRunner('beta', ['beta', 'shared']),
      startRunner('gamma', ['gamma', 'shared']),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(
      processes.map(
        (p) =>
          new Promise((resolve) => {
            if (p.exitCode !== null) return resolve(null);
            p.once('exit', resolve);
            p.kill('SIGTERM');
          }),
      ),
    );
    await h?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const postTask = async (templateId: number, environment: Record<string, string> = {}) => {
    const res = await owner.post(`/api/project/${projectId}/tasks`, {
      template_id: templateId,
      environment: JSON.stringify(environment),
    });
    expect(res.statusCode).toBe(201);
    return res.json().id as number;
  };
  const markTemplate = (tag: string, parallel = false) =>
    insertTemplate(h.deps, projectId, {
      repository_id: repoId,
      playbook: 'mark.sh',
      runner_tag: tag,
      allow_parallel_tasks: parallel ? 1 : 0,
    });

  it('runs a tagged template on the runner with that tag and nowhere else', async () => {
    const runsFile = join(marksDir, 'tagged-runs');
    for (const tag of ['alpha', 'beta', 'gamma']) {
      const taskId = await postTask(await markTemplate(tag), { RUNS_FILE: runsFile, MARK: tag });
      const task = await waitForStatus(h.deps, taskId, ENDED, 60_000);
      expect(task.status, (await outputOf(h.deps, taskId)).join('\n')).toBe('success');
      expect(task.remote_runner_id).toBe(runnerIds.get(tag));
      expect(await outputOf(h.deps, taskId)).toContain(`ran MARK=${tag}`);
    }
  }, 120_000);

  it("gives the runner the task's own environment when it overrides the template's", async () => {
    const template = await insertEnvironment(h.deps, projectId, {
      name: 'tpl-env',
      env: { GREETING: 'tpl' },
    });
    const override = await insertSecretEnvironment(
      h.deps,
      projectId,
      { name: 'override-env', json: { region: 'eu-9' }, env: { GREETING: 'overridden' } },
      { env: { API_TOKEN: 'runner-token-very-secret' } },
    );
    const tpl = await insertTemplate(h.deps, projectId, {
      repository_id: repoId,
      playbook: 'env.sh',
      runner_tag: 'alpha',
      environment_id: template,
      task_params: { allow_override_environment: true },
    });
    const res = await owner.post(`/api/project/${projectId}/tasks`, {
      template_id: tpl,
      environment_id: override,
    });
    expect(res.statusCode, res.body).toBe(201);
    const task = await waitForStatus(h.deps, res.json().id, ENDED, 60_000);
    const out = (await outputOf(h.deps, task.id)).join('\n');
    expect(task.status, out).toBe('success');
    expect(task.remote_runner_id).toBe(runnerIds.get('alpha'));
    expect(out).toContain('greeting=overridden token=********** vars=region=eu-9');
    expect(out).not.toContain('runner-token-very-secret');
  }, 120_000);

  it('keeps a task for a tag no runner has waiting with its reason, and runs it once one registers', async () => {
    const taskId = await postTask(await markTemplate('late'), {
      RUNS_FILE: join(marksDir, 'late-runs'),
      MARK: 'late',
    });
    await waitFor(
      async () =>
        (await owner.get(`/api/project/${projectId}/tasks/${taskId}`)).json().status_detail ===
        'Waiting: no runner with tag "late" is online',
      20_000,
      'the waiting reason',
    );
    const lateId = await startRunner('late', ['late']);
    const task = await waitForStatus(h.deps, taskId, ENDED, 60_000);
    expect(task).toMatchObject({ status: 'success', remote_runner_id: lateId });
  }, 120_000);

  it('runs 50 short tasks over three runners, each exactly once', async () => {
    const runsFile = join(marksDir, 'many-runs');
    const templateId = await markTemplate('shared', true);
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) ids.push(await postTask(templateId, { RUNS_FILE: runsFile, MARK: `m${i}` }));
    const ended = await Promise.all(ids.map((id) => waitForStatus(h.deps, id, ENDED, 180_000)));
    expect(ended.map((t) => t.status)).toEqual(ids.map(() => 'success'));
    const marks = readFileSync(runsFile, 'utf8').trim().split('\n').sort();
    expect(marks).toEqual(ids.map((_, i) => `MARK=m${i}`).sort());
    expect(marks.filter((m, i) => marks.indexOf(m) !== i)).toEqual([]);
    const used = new Set(ended.map((t) => t.remote_runner_id));
    expect(used.size).toBeGreaterThanOrEqual(2);
    for (const t of ended) expect([...runnerIds.values()]).toContain(t.remote_runner_id);
  }, 240_000);

  it('stops a remote sleep and its children within two seconds', async () => {
    const templateId = await insertTemplate(h.deps, projectId, {
      repository_id: repoId,
      playbook: 'nap.sh',
      runner_tag: 'alpha',
    });
    const taskId = await postTask(templateId);
    // The pids the script prints are those of its PID namespace when the runner runs it confined.
    const pids = await waitFor(
      async () => hostPidsOf(taskId, await outputOf(h.deps, taskId), ['child ', 'self ']),
      60_000,
      'the task to print its pids',
    );
    expect(pids.every((p) => alive(p))).toBe(true);
    const asked = Date.now();
    expect((await owner.post(`/api/project/${projectId}/tasks/${taskId}/stop`)).statusCode).toBe(204);
    await waitFor(async () => pids.every((p) => !alive(p)), 5000, 'the processes to end');
    expect(Date.now() - asked).toBeLessThan(2000);
    expect((await waitForStatus(h.deps, taskId, ENDED, 20_000)).status).toBe('stopped');
  }, 120_000);
});
