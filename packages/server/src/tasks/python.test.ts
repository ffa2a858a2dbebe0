import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import {
  alive,
  insertTemplate,
  outputOf,
  standIn,
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
import { appRegistry } from '../lib/apps';

/** Python scripts of the repository the tasks run (the real python3). */
const scripts = {
  'show.py': [
    'import os, sys',
    'print("hello from python")',
    'print("script:", sys.argv[0])',
    'print("args:", sys.argv[1:])',
    'print("env:", os.environ.get("GREETING"), os.environ.get("API_TOKEN"), os.environ.get("DB_PASSWORD"))',
    'print("task type:", repr(os.environ.get("SEMAPHORE_TASK_TYPE")))',
    'print("cwd:", os.getcwd())',
    '',
  ].join('\n'),
  'fail.py': 'import sys\nprint("about to fail", flush=True)\nsys.exit(3)\n',
  'raise.py': 'raise RuntimeError("boom from python")\n',
  // A child in the script's process group, both sleeping until the task is stopped.
  'sleep.py': [
    'import os, subprocess, time',
    'child = subprocess.Popen(["sleep", "1000"])',
    'print("child", child.pid)',
    'print("main", os.getpid())',
    'time.sleep(1000)',
    '',
  ].join('\n'),
  // Unbuffered output: each line is in the log while the script still runs.
  'slow.py': 'import time\nprint("first line")\ntime.sleep(1000)\n',
};

describe.each(testDialects())('python tasks with the real python3 on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let repoId: number;
  let repoDir: string;
  let envId: number;
  let record: string;
  let restorePath = () => {};

  beforeAll(async () => {
    // A wrapper the registry names as python's binary: records its argv, then runs the real python3.
    const tools = toolsOnPath({});
    ({ record } = tools);
    restorePath = tools.restore;
    const python = standIn(
      tools.bin,
      'python-wrapper',
      `#!/bin/bash\necho "python-wrapper $*" >> ${record}\nexec python3 "$@"\n`,
    );
    ({ h, owner, projectId } = await harnessWithProject(dialect, {
      maxParallelTasks: 10,
      apps: appRegistry({ python: { path: python, args: ['-X', 'utf8'] } }),
    }));
    ({ id: repoId, dir: repoDir } = await insertGitRepository(h.deps, projectId, scripts));
    envId = await insertSecretEnvironment(
      h.deps,
      projectId,
      { json: { region: 'eu-1', replicas: 3 }, env: { GREETING: 'hi-there' } },
      { vars: { DB_PASSWORD: 'py-var-s3cret' }, env: { API_TOKEN: 'py-env-s3cret' } },
    );
  });
  afterAll(async () => {
    restorePath();
    await h?.close();
  });

  const template = (playbook: string, values: Parameters<typeof insertTemplate>[2] = {}) =>
    insertTemplate(h.deps, projectId, {
      app: 'python',
      playbook,
      repository_id: repoId,
      environment_id: envId,
      allow_parallel_tasks: 1,
      ...values,
    });

  it('runs the script with the configured binary, the peer’s argument order, env vars and masked secrets', async () => {
    const tpl = await template('show.py', { arguments: '["--one"]', allow_override_args_in_task: 1 });
    const { done, out } = await runTask(h, owner, projectId, {
      template_id: tpl,
      arguments: '["--two", "-c", "import os"]',
      environment: '{"from_task": "yes"}',
    });
    expect(done.status, out.join('\n')).toBe('success');
    const script = join(realpathSync(repoDir), 'show.py');
    expect(out).toContain('hello from python');
    expect(out).toContain(`script: ${script}`);
    // Template args, NAME=VALUE for each environment JSON key, then task args: all the script's own arguments.
    expect(out).toContain(
      "args: ['--one', 'region=eu-1', 'replicas=3', 'from_task=yes', '--two', '-c', 'import os']",
    );
    // Environment variables, and both kinds of secret as environment variables, masked in the log.
    expect(out).toContain('env: hi-there ********** **********');
    expect(out).toContain("task type: ''");
    expect(out).toContain(`cwd: ${realpathSync(repoDir)}`);
    const text = out.join('\n');
    expect(text).not.toContain('py-env-s3cret');
    expect(text).not.toContain('py-var-s3cret');
    // The registry's binary and leading options, then the script: nothing from the task comes before it.
    const line = readFileSync(record, 'utf8').trim().split('\n').at(-1);
    expect(line).toBe(
      `python-wrapper -X utf8 ${script} --one region=eu-1 replicas=3 from_task=yes --two -c import os`,
    );
    expect(readFileSync(record, 'utf8')).not.toContain('s3cret');
  });

  it('ends as error with the exit code, or with the traceback of an exception', async () => {
    const fail = await runTask(h, owner, projectId, { template_id: await template('fail.py') });
    expect(fail.done.status).toBe('error');
    expect(fail.out).toContain('about to fail');
    expect(fail.out.at(-1)).toBe('python3 failed with exit code 3');

    const raised = await runTask(h, owner, projectId, { template_id: await template('raise.py') });
    expect(raised.done.status).toBe('error');
    expect(raised.out).toContain('RuntimeError: boom from python');
    expect(raised.out.at(-1)).toBe('python3 failed with exit code 1');
  });

  it('a script that is not in the repository fails before python runs', async () => {
    const before = readFileSync(record, 'utf8');
    const { done, out } = await runTask(h, owner, projectId, { template_id: await template('missing.py') });
    expect(done.status).toBe('error');
    expect(out.at(-1)).toBe('Playbook "missing.py" does not exist in the repository: nothing was run');
    expect(readFileSync(record, 'utf8')).toBe(before);
  });

  it('streams output while the script runs', async () => {
    const res = await owner.post(`/api/project/${projectId}/tasks`, {
      template_id: await template('slow.py'),
    });
    const id = res.json().id as number;
    await waitFor(async () => (await outputOf(h.deps, id)).includes('first line') || undefined);
    expect((await owner.post(`/api/project/${projectId}/tasks/${id}/stop`, {})).statusCode).toBe(204);
    expect((await waitForStatus(h.deps, id, ['stopped', 'error', 'success'])).status).toBe('stopped');
  });

  for (const force of [false, true]) {
    it(`${force ? 'force stop' : 'stop'} ends the script and its child process within 2 s`, async () => {
      const res = await owner.post(`/api/project/${projectId}/tasks`, {
        template_id: await template('sleep.py'),
      });
      const id = res.json().id as number;
      const pids = await waitFor(async () => {
        // The pids the script prints are those of its PID namespace when it runs confined.
        return hostPidsOf(id, await outputOf(h.deps, id), ['child ', 'main ']);
      });
      expect(pids.every(alive)).toBe(true);
      const started = Date.now();
      const stop = await owner.post(`/api/project/${projectId}/tasks/${id}/stop`, { force });
      expect(stop.statusCode).toBe(204);
      await waitFor(async () => pids.every((p) => !alive(p)), 10_000, 'processes to end');
      expect(Date.now() - started).toBeLessThan(2000);
      expect((await waitForStatus(h.deps, id, ['stopped', 'error', 'success'], 10_000)).status).toBe(
        'stopped',
      );
    });
  }
});
