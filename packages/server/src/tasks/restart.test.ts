import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { freePort } from '../../test/support/net';
import {
  cookieApi,
  localUrl,
  serverBin,
  serverProcessEnv,
  signInAdmin,
  waitForServer,
} from '../../test/support/server-process';
import {
  alive,
  gitRepo,
  insertRepository,
  insertTemplate,
  waitFor,
  waitForStatus,
} from '../../test/support/task-fixtures';
import { openDb } from '../db';

/** A real `signalbox server` process on a temp data dir, killed with SIGKILL mid-run and started again. */
describe('server restart during a run', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-restart-'));
  let server: ChildProcess | null = null;
  let port = 0;
  const env = serverProcessEnv(dataDir);
  const url = (path: string) => localUrl(port, path);

  async function startServer() {
    server = spawn(process.execPath, [serverBin, 'server'], {
      env: { ...env, SIGNALBOX_PORT: String(port) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitForServer(port);
  }

  /** A server on a fresh port, and the admin's session cookie. */
  async function startAndSignIn() {
    port = await freePort();
    await startServer();
    return signInAdmin(port);
  }

  afterAll(async () => {
    if (server?.pid && server.exitCode === null) server.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('leaves no task running, keeps every delivered line and re-queues waiting tasks', async () => {
    const cookie = await startAndSignIn();
    const api = cookieApi(port, cookie);
    const projectId = (
      (await (await api('POST', '/api/projects', { name: 'Restart' })).json()) as { id: number }
    ).id;

    const handle = openDb(`sqlite://${join(dataDir, 'signalbox.db')}`);
    const deps = { db: handle.db, dialect: handle.dialect } as Parameters<typeof insertTemplate>[0];
    const repo = gitRepo({
      'loop.sh': 'echo "pid $$"\ni=0\nwhile true; do i=$((i+1)); echo "line $i"; sleep 0.005; done\n',
      'probe.sh': 'echo probe\n',
    });
    const repoId = await insertRepository(deps, projectId, { git_url: `file://${repo}` });
    const tpl = await insertTemplate(deps, projectId, { repository_id: repoId, playbook: 'loop.sh' });
    const probeTpl = await insertTemplate(deps, projectId, { repository_id: repoId, playbook: 'probe.sh' });

    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/ws`, { headers: { cookie } });
    const received: { task_id: number; output: string }[] = [];
    const heardOf = new Set<number>();
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      heardOf.add(m.task_id);
      if (m.type === 'log') received.push(m);
    });
    ws.on('error', () => {});
    await new Promise((r) => ws.on('open', r));

    const newTask = async (template_id = tpl) =>
      (
        (await (await api('POST', `/api/project/${projectId}/tasks`, { template_id })).json()) as {
          id: number;
        }
      ).id;
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
    server!.kill('SIGKILL');
    await new Promise((r) => server!.once('exit', r));
    const delivered = linesOf(first);
    ws.terminate();
    const pid = Number(delivered.find((l) => l.startsWith('pid '))!.split(' ')[1]);

    await startServer();
    const rows = await handle.db.selectFrom('task').selectAll().where('project_id', '=', projectId).execute();
    expect(
      rows.filter((r) => ['starting', 'running', 'stopping'].includes(r.status) && r.id === first),
    ).toEqual([]);
    const t1 = rows.find((r) => r.id === first)!;
    expect(t1.status).toBe('error');
    expect(t1.message).toBe('Interrupted by server restart');
    expect(t1.end).toBeTruthy();
    // The orphaned script was killed on start.
    await waitFor(async () => !alive(pid) || undefined, 3000, 'the orphaned task process to end');

    const output = (
      await handle.db
        .selectFrom('task_output')
        .select('output')
        .where('task_id', '=', first)
        .orderBy('id')
        .execute()
    ).map((r) => r.output);
    expect(output.slice(0, delivered.length)).toEqual(delivered);
    expect(output.at(-1)).toBe('Interrupted by server restart');

    // The waiting task was queued again and runs now; stop it.
    await waitForStatus(deps, second, ['running'], 20_000);
    expect(
      (await api('POST', `/api/project/${projectId}/tasks/${second}/stop`, { force: true })).status,
    ).toBe(204);
    await waitForStatus(deps, second, ['stopped'], 5000);
    await handle.destroy();
    server!.kill('SIGTERM');
    await new Promise((r) => server!.once('exit', r));
  });

  it('a second server on the same data directory refuses to start and leaves the running task alone', async () => {
    const cookie = await startAndSignIn();
    const handle = openDb(`sqlite://${join(dataDir, 'signalbox.db')}`);
    const project = await handle.db.selectFrom('project').select('id').executeTakeFirstOrThrow();
    const tpl = await handle.db
      .selectFrom('template')
      .select('id')
      .where('project_id', '=', project.id)
      .executeTakeFirstOrThrow();
    const api = cookieApi(port, cookie);
    const post = (path: string, body: unknown) => api('POST', path, body);
    const task = (await (await post(`/api/project/${project.id}/tasks`, { template_id: tpl.id })).json()) as {
      id: number;
    };
    const statusOf = async () =>
      (await handle.db.selectFrom('task').select('status').where('id', '=', task.id).executeTakeFirst())
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
      `Signalbox cannot start: Another Signalbox server (pid ${server!.pid} on ${hostname()}) is running`,
    );
    expect(stderr).not.toMatch(/\n\s+at /);
    // The first server and its task are untouched.
    expect(await statusOf()).toBe('running');
    expect((await fetch(url('/api/ping'))).ok).toBe(true);

    expect((await post(`/api/project/${project.id}/tasks/${task.id}/stop`, { force: true })).status).toBe(
      204,
    );
    await waitFor(async () => (await statusOf()) === 'stopped' || undefined, 5000);
    await handle.destroy();
    server!.kill('SIGTERM');
    await new Promise((r) => server!.once('exit', r));
  });
});
