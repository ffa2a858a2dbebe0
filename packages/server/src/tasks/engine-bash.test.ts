import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import {
  alive,
  commitFiles,
  insertRepository,
  insertTemplate,
  outputOf,
  waitFor,
  waitForStatus,
} from '../../test/support/task-fixtures';
import { descendantArgs, hostPidsOf } from '../../test/support/task-pids';
import {
  harnessWithProject,
  insertGitRepository,
  insertSecretEnvironment,
  liveMessagesOf,
  updatesOf,
} from '../../test/support/task-runs';
import type { LiveMessage } from '../live/bus';

describe.each(testDialects())('task engine with real bash tasks on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let repoDir: string;
  let repoId: number;
  let fileRepoId: number;
  let headHash: string;
  let messages: LiveMessage[];

  beforeAll(async () => {
    ({ h, owner, projectId } = await harnessWithProject(dialect, { maxParallelTasks: 10 }));
    messages = liveMessagesOf(h);
    const local = await insertGitRepository(
      h.deps,
      projectId,
      {
        'run.sh':
          'echo "hello from bash"\necho "args: $*"\necho "env: $GREETING $API_TOKEN"\necho "task type: $SEMAPHORE_TASK_TYPE"\necho "origin: $(git remote get-url origin 2>/dev/null)"\n',
        'fail.sh': 'echo "about to fail"\nexit 3\n',
        'sleep.sh': 'bash -c "sleep 1000" &\necho "child $!"\necho "main $$"\nsleep 1000\n',
        'nap.sh': 'sleep 0.6\necho done\n',
        'long.sh': 'head -c 2500000 /dev/zero | tr "\\0" "x"; echo; echo after\n',
      },
      { name: 'local' },
    );
    ({ id: repoId, dir: repoDir } = local);
    headHash = execFileSync('git', ['-C', repoDir, 'rev-parse', 'HEAD']).toString().trim();
    fileRepoId = await insertRepository(h.deps, projectId, { git_url: `file://${repoDir}`, name: 'file' });
  });
  afterAll(async () => h?.close());

  async function post(body: Record<string, unknown>, client = owner) {
    return client.post(`/api/project/${projectId}/tasks`, body);
  }

  it('runs a script from a file:// repository with arguments, env vars and masked secrets', async () => {
    const envId = await insertSecretEnvironment(
      h.deps,
      projectId,
      { json: { region: 'eu-1' }, env: { GREETING: 'hi-there' } },
      { env: { API_TOKEN: 'tok-very-secret-123' } },
    );
    const tpl = await insertTemplate(h.deps, projectId, {
      name: 'hello',
      repository_id: fileRepoId,
      environment_id: envId,
      arguments: '["--one"]',
      allow_override_args_in_task: 1,
    });
    const res = await post({ template_id: tpl, message: 'first run', arguments: '["--two"]' });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toMatchObject({ template_id: tpl, status: 'waiting', message: 'first run' });
    // Semaphore's `secret` field is answered, never a value.
    expect(created.secret).toBe('');
    const done = await waitForStatus(h.deps, created.id, ['success', 'error']);
    const out = await outputOf(h.deps, created.id);
    expect(done.status, out.join('\n')).toBe('success');
    // The log opens saying which task started, in words.
    expect(out[0]).toBe(`Task ${created.id} started`);
    expect(out).toContain('hello from bash');
    expect(out).toContain('args: --one region=eu-1 --two');
    expect(out).toContain('env: hi-there **********');
    // The task's working copy points at the repository itself, not at the server's cache.
    expect(out).toContain(`origin: file://${repoDir}`);
    expect(out.join('\n')).not.toContain('tok-very-secret-123');
    expect(done.commit_hash).toBe(headHash);
    expect(done.commit_message).toBe('initial commit');
    expect(done.start).toBeTruthy();
    expect(done.end).toBeTruthy();
    const updates = () => updatesOf(messages, created.id);
    // The update is published just after the row is saved.
    const statuses = await waitFor(async () => (updates().includes(done.status) ? updates() : undefined));
    expect(statuses).toEqual(['waiting', 'starting', 'running', 'success']);
    const logs = messages.filter((m) => m.type === 'log' && m.task_id === created.id).map((m) => m.output);
    expect(logs).toEqual(out);
    // The working copy and temp dir are gone.
    // (Compare names exactly: the random data-dir path itself may contain the id's digits.)
    expect(existsSync(join(h.dataDir, 'tasks'))).toBe(true);
    expect(readdirSync(join(h.dataDir, 'tasks'))).toEqual([]);
  });

  it("runs with the task's own environment in place of the template's, its secrets masked", async () => {
    const templateEnv = await insertSecretEnvironment(
      h.deps,
      projectId,
      { name: 'template-env', json: { region: 'tpl-region' }, env: { GREETING: 'from-template' } },
      { env: { API_TOKEN: 'template-token-secret' } },
    );
    const override = await insertSecretEnvironment(
      h.deps,
      projectId,
      { name: 'override-env', json: { region: 'eu-2' }, env: { GREETING: 'from-override' } },
      { env: { API_TOKEN: 'override-token-secret' } },
    );
    const tpl = await insertTemplate(h.deps, projectId, {
      name: 'env override',
      repository_id: fileRepoId,
      environment_id: templateEnv,
      task_params: { allow_override_environment: true },
    });
    const res = await post({ template_id: tpl, environment_id: override });
    expect(res.statusCode, res.body).toBe(201);
    const done = await waitForStatus(h.deps, res.json().id, ['success', 'error']);
    const out = await outputOf(h.deps, done.id);
    expect(done.status, out.join('\n')).toBe('success');
    expect(done.environment_id).toBe(override);
    expect(out).toContain('args: region=eu-2');
    expect(out).toContain('env: from-override **********');
    expect(out.join('\n')).not.toMatch(
      /from-template|tpl-region|override-token-secret|template-token-secret/,
    );
    // The template stops allowing it: a waiting or re-run task runs with the template's environment again.
    await h.deps.db.updateTable('template').set({ task_params: '{}' }).where('id', '=', tpl).execute();
    const rerun = await owner.post(`/api/project/${projectId}/tasks/${done.id}/rerun`, {});
    expect(rerun.statusCode, rerun.body).toBe(201);
    const again = await waitForStatus(h.deps, rerun.json().id, ['success', 'error']);
    expect(again.environment_id).toBeNull();
    expect(await outputOf(h.deps, again.id)).toContain('env: from-template **********');
  });

  it('uses a local-path repository in place and fails a non-zero exit as error', async () => {
    const tpl = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook: 'fail.sh' });
    const res = await post({ template_id: tpl });
    const done = await waitForStatus(h.deps, res.json().id, ['success', 'error']);
    expect(done.status).toBe('error');
    const out = await outputOf(h.deps, done.id);
    expect(out).toContain('about to fail');
    expect(out).toContain('bash failed with exit code 3');
  });

  it('splits a line longer than 1 MB instead of failing', async () => {
    const tpl = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook: 'long.sh' });
    const res = await post({ template_id: tpl });
    const done = await waitForStatus(h.deps, res.json().id, ['success', 'error']);
    expect(done.status).toBe('success');
    const out = await outputOf(h.deps, done.id);
    const xs = out.filter((l) => l.startsWith('xxx'));
    expect(xs.map((l) => l.length)).toEqual([1048576, 1048576, 2500000 - 2 * 1048576]);
    expect(out[out.length - 1]).toBe('after');
  });

  for (const force of [false, true]) {
    it(`${force ? 'force stop' : 'stop'} ends a running sleep 1000 and its child within 2 s`, async () => {
      const tpl = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook: 'sleep.sh' });
      const id = (await post({ template_id: tpl })).json().id;
      const pids = await waitFor(async () => {
        // The pids the script prints are those of its PID namespace when it runs confined.
        return hostPidsOf(id, await outputOf(h.deps, id), ['child ', 'main ']);
      });
      expect(pids.every(alive)).toBe(true);
      // Stop ends the processes well inside 2 s: measured from the stop request to the last process's exit only.
      // The waits run longer than that so that a miss reports what is still running rather than a timeout.
      const started = Date.now();
      const stop = await owner.post(`/api/project/${projectId}/tasks/${id}/stop`, { force });
      expect(stop.statusCode).toBe(204);
      await waitFor(async () => pids.every((p) => !alive(p)), 10_000, 'processes to end');
      expect(Date.now() - started).toBeLessThan(2000);
      const done = await waitForStatus(h.deps, id, ['stopped', 'error', 'success'], 10_000);
      expect(done.status).toBe('stopped');
      expect(descendantArgs().filter((a) => /sleep 1000/.test(a))).toEqual([]);
    });
  }

  it('stops a waiting task at once', async () => {
    const tpl = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook: 'sleep.sh' });
    const first = (await post({ template_id: tpl })).json().id;
    const second = (await post({ template_id: tpl })).json().id;
    await waitForStatus(h.deps, first, ['running']);
    // The queue gives the reason on the claiming pass after the second task's creation, which may end after the
    // first task is running: wait for it rather than read it once.
    const waiting = await waitFor(async () => {
      const answer = (await owner.get(`/api/project/${projectId}/tasks/${second}`)).json();
      return answer.status_detail === null ? undefined : answer;
    });
    expect(waiting).toMatchObject({ status: 'waiting', message: '' });
    expect(waiting.status_detail).toMatch(/^Waiting: task #\d+ of this template has not finished$/);
    expect((await owner.post(`/api/project/${projectId}/tasks/${second}/stop`, {})).statusCode).toBe(204);
    expect((await waitForStatus(h.deps, second, ['stopped'])).status).toBe('stopped');
    const all = await owner.post(`/api/project/${projectId}/templates/${tpl}/stop_all_tasks`, {
      force: true,
    });
    expect(all.statusCode).toBe(204);
    expect((await waitForStatus(h.deps, first, ['stopped'], 2000)).status).toBe('stopped');
  });

  it('never runs more than max_parallel_tasks=2 of 5 and finishes all', async () => {
    const { projectId: pid } = await h.projectWithTeam(owner, 'Limited');
    await h.deps.db.updateTable('project').set({ max_parallel_tasks: 2 }).where('id', '=', pid).execute();
    const repo = await insertRepository(h.deps, pid, { git_url: repoDir });
    const tpl = await insertTemplate(h.deps, pid, {
      repository_id: repo,
      playbook: 'nap.sh',
      allow_parallel_tasks: 1,
    });
    const ids: number[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await owner.post(`/api/project/${pid}/tasks`, { template_id: tpl })).json().id);
    const detail = await waitFor(async () => {
      const t = (await owner.get(`/api/project/${pid}/tasks/${ids[4]}`)).json();
      return t.status_detail as string | null;
    });
    expect(detail).toBe('Waiting: project limit of 2 running tasks reached');
    const rows = [];
    for (const id of ids) rows.push(await waitForStatus(h.deps, id, ['success', 'error'], 30_000));
    expect(rows.map((r) => r.status)).toEqual(Array(5).fill('success'));
    const events = rows.flatMap((r) => [
      { t: Date.parse(r.start!), d: 1 },
      { t: Date.parse(r.end!), d: -1 },
    ]);
    events.sort((a, b) => a.t - b.t || a.d - b.d);
    let running = 0;
    let peak = 0;
    for (const e of events) {
      running += e.d;
      peak = Math.max(peak, running);
    }
    expect(peak).toBe(2);
    // Creation order: the first two start before the later ones.
    const starts = rows.map((r) => Date.parse(r.start!));
    expect(Math.max(starts[0]!, starts[1]!)).toBeLessThanOrEqual(
      Math.min(starts[2]!, starts[3]!, starts[4]!),
    );
  });

  it('re-runs a task on its original commit', async () => {
    const { id: rid, dir: repo } = await insertGitRepository(
      h.deps,
      projectId,
      { 'run.sh': 'echo version one\n' },
      { fileUrl: true },
    );
    const first = commitFiles(repo, { 'run.sh': 'echo version two\n' }, 'second');
    void first;
    const tpl = await insertTemplate(h.deps, projectId, { repository_id: rid });
    const a = (await post({ template_id: tpl })).json().id;
    const doneA = await waitForStatus(h.deps, a, ['success', 'error']);
    expect(await outputOf(h.deps, a)).toContain('version two');
    commitFiles(repo, { 'run.sh': 'echo version three\n' }, 'third');
    const rerun = await owner.post(`/api/project/${projectId}/tasks/${a}/rerun`, {});
    expect(rerun.statusCode).toBe(201);
    const doneB = await waitForStatus(h.deps, rerun.json().id, ['success', 'error']);
    expect(doneB.commit_hash).toBe(doneA.commit_hash);
    expect(await outputOf(h.deps, doneB.id)).toContain('version two');
    const c = (await post({ template_id: tpl })).json().id;
    await waitForStatus(h.deps, c, ['success', 'error']);
    expect(await outputOf(h.deps, c)).toContain('version three');
  });

  it('numbers builds from start_version, deploys the build version and autoruns deploys', async () => {
    const build = await insertTemplate(h.deps, projectId, {
      repository_id: repoId,
      playbook: 'run.sh',
      type: 'build',
      start_version: '1.0.0',
      allow_parallel_tasks: 1,
    });
    const deploy = await insertTemplate(h.deps, projectId, {
      repository_id: repoId,
      playbook: 'run.sh',
      type: 'deploy',
      build_template_id: build,
      autorun: 1,
    });
    const b1 = (await post({ template_id: build })).json();
    const b2 = (await post({ template_id: build })).json();
    expect([b1.version, b2.version]).toEqual(['1.0.0', '1.0.1']);
    await waitForStatus(h.deps, b1.id, ['success']);
    const auto = await waitFor(async () =>
      h.deps.db
        .selectFrom('task')
        .selectAll()
        .where('template_id', '=', deploy)
        .where('build_task_id', '=', b1.id)
        .executeTakeFirst(),
    );
    expect(auto.version).toBe('1.0.0');
    expect(auto.user_id).toBe(owner.userId);
    expect((await waitForStatus(h.deps, auto.id, ['success', 'error'])).status).toBe('success');
    expect(await outputOf(h.deps, auto.id)).toContain('task type: deploy');
    const noBuild = await post({ template_id: deploy });
    expect(noBuild.statusCode).toBe(400);
    expect(noBuild.json().error).toBe('Build version is required');
  });
});
