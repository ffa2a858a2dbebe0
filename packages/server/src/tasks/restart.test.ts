import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { freePort } from '../../test/support/net';
import { dataDirDbUrl, postForId, serverChild, serverDb } from '../../test/support/server-child';
import { cookieApi, localUrl, serverBin, serverProcessEnv } from '../../test/support/server-process';
import { alive, insertTemplate, waitFor, waitForStatus } from '../../test/support/task-fixtures';
import { hostPidsOf } from '../../test/support/task-pids';
import { insertGitRepository } from '../../test/support/task-runs';

/** A real `signalbox server` process on a temp data dir, killed with SIGKILL mid-run and started again. */
describe('server restart during a run', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-restart-'));
  const env = serverProcessEnv(dataDir);
  const server = serverChild(env);
  const url = (path: string) => localUrl(server.port, path);

  afterAll(async () => {
    if (server.running()) server.process!.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('leaves no task running, keeps every delivered line and re-queues waiting tasks', async () => {
    const cookie = await server.startAndSignIn();
    const api = cookieApi(server.port, cookie);
    const projectId = await postForId(api, '/api/projects', { name: 'Restart' });

    const { handle, rows: deps, outputOf } = serverDb(dataDirDbUrl(dataDir));
    const files = {
      'loop.sh': 'echo "pid $$"\ni=0\nwhile true; do i=$((i+1)); echo "line $i"; sleep 0.005; done\n',
      'probe.sh': 'echo probe\n',
    };
    const { id: repoId } = await insertGitRepository(deps, projectId, files, { fileUrl: true });
    const tpl = await insertTemplate(deps, projectId, { repository_id: repoId, playbook: 'loop.sh' });
    const probeTpl = await insertTemplate(deps, projectId, { repository_id: repoId, playbook: 'probe.sh' });

    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/ws`, { headers: { cookie } });
    const received: { task_id: number; output: string }[] = [];
    const heardOf = new Set<number>();
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      heardOf.add(m.task_id);
      if (m.type === 'log') received.push(m);
    });
    ws.on('error', () => {});
    await new Promise((r) => ws.on('open', r));

    const newTask = (template_id = tpl) => postForId(api, `/api/project/${projectId}/tasks`, { template_id });
    const statusOf = async (id: number) =>
      (await handle.db.selectFrom('task').select('status').where('id', '=', id).executeTakeFirst())?.status;
    // The socket gets the project's messages once the server has read its memberships: a short task run after
    // that is heard of. Run one (again, if one ended unheard) until the socket hears of it, so that the run below
    // is delivered from its first line.
    let probe = await newTask(probeTpl);
    await waitFor(
      async () => {
        if (heardOf.has(probe)) return true;
        if (['success', 'error'].includes((await statusOf(probe)) ?? '')) probe = await newTask(probeTpl);
        return undefined;
      },
      20_000,
      'the socket to hear of a task',
    );
    await waitFor(
      async () => ['success', 'error'].includes((await statusOf(probe)) ?? '') || undefined,
      20_000,
      'the probe task to end',
    );
    const first = await newTask();
    const linesOf = (id: number) => received.filter((m) => m.task_id === id).map((m) => m.output);
    const second = await newTask();
    await waitFor(
      async () => linesOf(first).filter((l) => l.startsWith('line ')).length >= 200 || undefined,
      20_000,
    );
    // The script's pid on this machine (it printed the one of its PID namespace when it runs confined).
    const pid = hostPidsOf(first, linesOf(first), ['pid '])?.[0];
    expect(pid).toBeDefined();
    await server.stop('SIGKILL');
    const delivered = linesOf(first);
    ws.terminate();

    await server.start();
    const rows = await handle.db.selectFrom('task').selectAll().where('project_id', '=', projectId).execute();
    expect(
      rows.filter((r) => ['starting', 'running', 'stopping'].includes(r.status) && r.id === first),
    ).toEqual([]);
    const t1 = rows.find((r) => r.id === first)!;
    expect(t1.status).toBe('error');
    expect(t1.message).toBe('Interrupted by server restart');
    expect(t1.end).toBeTruthy();
    // The orphaned script was killed on start.
    await waitFor(async () => !alive(pid!) || undefined, 3000, 'the orphaned task process to end');

    const output = await outputOf(first);
    expect(output.slice(0, delivered.length)).toEqual(delivered);
    expect(output.at(-1)).toBe('Interrupted by server restart');

    // The waiting task was queued again and runs now; stop it.
    await waitForStatus(deps, second, ['running'], 20_000);
    expect(
      (await api('POST', `/api/project/${projectId}/tasks/${second}/stop`, { force: true })).status,
    ).toBe(204);
    await waitForStatus(deps, second, ['stopped'], 5000);
    await handle.destroy();
    await server.stop('SIGTERM');
  });

  it('a second server on the same data directory refuses to start and leaves the running task alone', async () => {
    const cookie = await server.startAndSignIn();
    const { handle } = serverDb(dataDirDbUrl(dataDir));
    const project = await handle.db.selectFrom('project').select('id').executeTakeFirstOrThrow();
    const tpl = await handle.db
      .selectFrom('template')
      .select('id')
      .where('project_id', '=', project.id)
      .executeTakeFirstOrThrow();
    const api = cookieApi(server.port, cookie);
    const post = (path: string, body: unknown) => api('POST', path, body);
    const taskId = await postForId(api, `/api/project/${project.id}/tasks`, { template_id: tpl.id });
    const statusOf = async () =>
      (await handle.db.selectFrom('task').select('status').where('id', '=', taskId).executeTakeFirst())
        ?.status;
    await waitFor(async () => (await statusOf()) === 'running' || undefined, 20_000);

    // `npm start` again in the same folder, on another port.
    const second = spawn(process.execPath, [serverBin, 'server'], {
      env: { ...env, SIGNALBOX_PORT: String(await freePort()) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    second.stderr!.on('data', (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise((r) => second.once('exit', r));
    expect(code).toBe(1);
    expect(stderr).toContain(
      `Signalbox cannot start: Another Signalbox server (pid ${server.process!.pid} on ${hostname()}) is running`,
    );
    expect(stderr).not.toMatch(/\n\s+at /);
    // The first server and its task are untouched.
    expect(await statusOf()).toBe('running');
    expect((await fetch(url('/api/ping'))).ok).toBe(true);

    expect((await post(`/api/project/${project.id}/tasks/${taskId}/stop`, { force: true })).status).toBe(204);
    await waitFor(async () => (await statusOf()) === 'stopped' || undefined, 5000);
    await handle.destroy();
    await server.stop('SIGTERM');
  });
});
