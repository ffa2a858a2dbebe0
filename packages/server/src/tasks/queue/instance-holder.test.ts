import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { rows } from '../../../test/support/scheduler-rows';
import { insertRepository, insertTemplate } from '../../../test/support/task-fixtures';
import { now } from '../../db/values';
import { createTaskEngine } from '../engine';
import { InstanceInUseError, runnerTimings } from './instances';
import { findRunner } from './instances.store';

// A short heartbeat keeps the other-host check (it watches one heartbeat period) quick; the next file of this
// worker (they share their modules) gets the server's again.
const serverHeartbeatMs = runnerTimings.heartbeatMs;
runnerTimings.heartbeatMs = 400;
afterAll(() => {
  runnerTimings.heartbeatMs = serverHeartbeatMs;
});

/**
 * Two servers under one instance id (two `npm start` in one folder, or containers with the same data-dir path):
 * the second must refuse to start rather than end the first one's running tasks as interrupted.
 */
describe.each(testDialects())('instance id held by another server on $name', (dialect) => {
  let h: Harness;
  let other: ChildProcess | null = null;
  let projectId: number;
  let templateId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    // The harness's own engine steps aside: the row of the id is set by each test.
    await h.deps.tasks.close();
    const owner = await h.userClient({ username: 'holder-owner', can_create_project: true });
    ({ projectId } = await h.projectWithTeam(owner));
    const repo = await insertRepository(h.deps, projectId, { git_url: '/tmp' });
    templateId = await insertTemplate(h.deps, projectId, { repository_id: repo });
  });
  afterEach(async () => {
    if (other && other.exitCode === null && other.signalCode === null) {
      other.kill('SIGKILL');
      await once(other, 'exit');
    }
    other = null;
  });
  afterAll(async () => h?.close());

  /** A task another server with this instance id is running. */
  const runningTaskOf = (instanceId: string) =>
    rows(h.deps.db, h.deps.dialect).task(projectId, templateId, {
      status: 'running',
      start: now(),
      runner: instanceId,
    });

  const statusOf = async (id: number) =>
    (await h.deps.db.selectFrom('task').select('status').where('id', '=', id).executeTakeFirstOrThrow())
      .status;

  async function holdRow(instanceId: string, holder: { host: string; pid: number }, heartbeat = now()) {
    await h.deps.db.deleteFrom('task_runner').where('id', '=', instanceId).execute();
    await h.deps.db
      .insertInto('task_runner')
      .values({ id: instanceId, heartbeat, ...holder })
      .execute();
  }

  it('refuses while a live process on this host holds the id, and starts once that process is gone', async () => {
    other = spawn('sleep', ['60']);
    const engine = createTaskEngine(h.deps);
    const id = engine.instanceId;
    await holdRow(id, { host: hostname(), pid: other.pid! });
    const task = await runningTaskOf(id);

    const refused = engine.start();
    await expect(refused).rejects.toBeInstanceOf(InstanceInUseError);
    await expect(refused).rejects.toThrow(
      `Another Signalbox server (pid ${other.pid} on ${hostname()}) is running with instance id "${id}"`,
    );
    // Nothing of the live server was touched: its task runs on, its row still names it.
    expect(await statusOf(task)).toBe('running');
    await engine.close();
    expect(await findRunner(h.deps.db, id)).toMatchObject({ host: hostname(), pid: other.pid });

    // The holder dies (a crash): the next start takes over at once and ends the task it left behind.
    other.kill('SIGKILL');
    await once(other, 'exit');
    const next = createTaskEngine(h.deps);
    // At once: not after the holder's heartbeat goes stale (60 s). Measured over start() alone, with headroom
    // for a busy machine.
    const t0 = Date.now();
    await next.start();
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(await statusOf(task)).toBe('error');
    expect(await findRunner(h.deps.db, id)).toMatchObject({ host: hostname(), pid: process.pid });
    await next.close();
  });

  it('ignores a live pid whose heartbeat is old (a reused pid after a crash long ago)', async () => {
    other = spawn('sleep', ['60']);
    const engine = createTaskEngine(h.deps);
    await holdRow(
      engine.instanceId,
      { host: hostname(), pid: other.pid! },
      new Date(Date.now() - 60_000).toISOString(),
    );
    await engine.start();
    await engine.close();
  });

  it('watches a holder on another host for one heartbeat: refuses if it still beats, starts if it is silent', async () => {
    const engine = createTaskEngine(h.deps);
    const id = engine.instanceId;
    const away = { host: 'other-machine.example', pid: 4242 };
    await holdRow(id, away);
    const beating = setInterval(() => {
      void h.deps.db.updateTable('task_runner').set({ heartbeat: now() }).where('id', '=', id).execute();
    }, 100);
    try {
      await expect(engine.start()).rejects.toThrow(`(pid 4242 on other-machine.example)`);
    } finally {
      clearInterval(beating);
    }
    await engine.close();

    await holdRow(id, away);
    const silent = createTaskEngine(h.deps);
    await silent.start();
    expect(await findRunner(h.deps.db, id)).toMatchObject({ host: hostname(), pid: process.pid });
    await silent.close();
  });
});
