import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sharedDatabase, type TestDialect, testDialects } from '../../../test/support/dialects';
import { loopbackGate } from '../../../test/support/gate';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  alive,
  insertTemplate,
  outputOf,
  taskRow,
  toolsOnPath,
  waitFor,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { hostPidsOf } from '../../../test/support/task-pids';
import { insertGitRepository, ownedProject } from '../../../test/support/task-runs';
import { loadConfig } from '../../config';
import { databaseNow, insertReturningId, now } from '../../db/values';
import { liveChannel, redisBridgeOf } from '../../live/redis';
import type { Engine } from '../engine';
import { createOutputWriter } from '../output/output.store';
import { createStatusUpdates } from '../status';
import { interruptedMessage, runnerGoneMessage, runnerTimings } from './instances';
import { killOrphans } from './orphans';

const serverTimings = { ...runnerTimings };
// Short enough for a test run, long enough that a busy machine does not take a live instance for dead.
runnerTimings.heartbeatMs = 250;
runnerTimings.staleMs = 3000;
runnerTimings.sweepMs = 500;
const defaultTimings = { ...runnerTimings };

const REDIS_URL = 'redis://127.0.0.1:6379';
liveChannel.name = `signalbox:test:${randomBytes(8).toString('hex')}`;
// The files of a worker share their modules: the next one gets the server's timings and names its channel by the
// deployment id again.
afterAll(() => {
  Object.assign(runnerTimings, serverTimings);
  liveChannel.name = '';
});

/** A terraform stand-in: a plan with changes (saved to -out), and an apply of that saved plan. */
const tfScript = (record: string) => `#!/bin/bash
echo "terraform $1" >> ${record}
case "$1" in
  workspace) echo "* default" ;;
  plan)
    for a in "$@"; do case "$a" in -out=*) echo "saved plan" > "\${a#-out=}" ;; esac; done
    echo "Plan: 1 to add, 0 to change, 0 to destroy." ;;
  apply)
    [ -f "\${@: -1}" ] || { echo "no saved plan"; exit 1; }
    echo "Apply complete! Resources: 1 added, 0 changed, 0 destroyed." ;;
esac
`;

const engineOf = (h: Harness) => h.deps.tasks as Engine;

/** A request to another instance signed in with the same session (one database, one session table). */
const post = (h: Harness, client: Client, url: string, body: object = {}) =>
  h.app.inject({ method: 'POST', url, headers: { cookie: client.cookie }, payload: body });

const task = (h: Harness, id: number) =>
  h.deps.db.selectFrom('task').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** The statuses an instance publishes for a task from now on (its own events only, none relayed). */
function statusesOn(h: Harness, id: number) {
  const seen: string[] = [];
  h.deps.bus.localListeners(() =>
    h.deps.bus.on('live', (m) => {
      if (m.type === 'update' && m.task_id === id) seen.push(m.status);
    }),
  );
  return seen;
}

/** The host pid of the task's script, which printed its own ("pid <n>": its PID namespace's when confined). */
async function scriptPid(h: Harness, id: number) {
  const [pid] = await waitFor(
    async () => hostPidsOf(id, await outputOf(h.deps, id), ['pid ']),
    20_000,
    `task ${id} to print its pid`,
  );
  return pid!;
}

type Setup = {
  a: Harness;
  b: Harness;
  owner: Client;
  projectId: number;
  repoId: number;
  /** [the instance running the task, the other one] */
  split(id: number): Promise<[Harness, Harness]>;
};

function twoInstances(dialect: TestDialect, redis: boolean) {
  const s = {} as Setup & {
    shared: Awaited<ReturnType<typeof sharedDatabase>>;
    config: object;
    gate: Awaited<ReturnType<typeof loopbackGate>>;
  };
  beforeAll(async () => {
    s.gate = await loopbackGate();
    s.shared = await sharedDatabase(dialect, 'sb-instances-db-');
    s.config = {
      // Instances of one deployment share the secret key (stored secrets decrypt on either).
      secretKey: randomBytes(32).toString('base64'),
      maxParallelTasks: 2,
      ...(redis ? { redisUrl: REDIS_URL } : {}),
    };
    s.a = await createHarness(s.shared.dialect, { ...s.config, instanceId: 'alpha' });
    ({ owner: s.owner, projectId: s.projectId } = await ownedProject(s.a));
    const files = {
      'sleep.sh': 'echo "pid $$"\nsleep 600\necho slept\n',
      'short.sh': 'echo "pid $$"\nsleep 2\necho slept\n',
      // Runs until the test opens the gate.
      'gated.sh': `echo "pid $$"\n${s.gate.waitLine}\necho slept\n`,
      'nap.sh': 'sleep 1.5\necho napped\n',
      'infra/main.tf': 'resource "null_resource" "example" {}\n',
    };
    ({ id: s.repoId } = await insertGitRepository(s.a.deps, s.projectId, files, { fileUrl: true }));
    s.split = async (id) => {
      const runner = (await task(s.a, id)).runner;
      if (runner === engineOf(s.a).instanceId) return [s.a, s.b];
      if (runner === engineOf(s.b).instanceId) return [s.b, s.a];
      throw new Error(`task ${id} has runner ${runner}`);
    };
  });
  afterAll(async () => {
    s.gate?.open();
    await s.b?.close();
    await s.a?.close();
    await s.shared?.drop();
    await s.gate?.close();
  });
  return s;
}

/**
 * Starts a task of `templateId` (its script prints its pid), posts a stop (`body`) to the instance that does not
 * run it and waits until the task's process is gone. The task's id, that instance, the time from the stop request
 * to the process's end, and the statuses the runner published from just before the stop.
 */
async function stopFromOther(s: Setup, templateId: number, body: object, processGoneMs: number) {
  const id = (await s.owner.post(`/api/project/${s.projectId}/tasks`, { template_id: templateId })).json().id;
  await waitForStatus(s.a.deps, id, ['running']);
  const pid = await scriptPid(s.a, id);
  const [runner, other] = await s.split(id);
  const seen = statusesOn(runner, id);
  const t0 = Date.now();
  const res = await post(other, s.owner, `/api/project/${s.projectId}/tasks/${id}/stop`, body);
  expect(res.statusCode).toBe(204);
  await waitFor(async () => !alive(pid) || undefined, processGoneMs, 'the task process to end');
  return { id: id as number, other, seen, elapsed: Date.now() - t0 };
}

async function startB(s: Setup & { shared: { dialect: TestDialect }; config: object }) {
  s.b = await createHarness(s.shared.dialect, s.config);
  if ((s.config as { redisUrl?: string }).redisUrl)
    await waitFor(
      async () => (redisBridgeOf(s.a.deps.bus)!.ready() && redisBridgeOf(s.b.deps.bus)!.ready()) || undefined,
      5000,
      'Redis',
    );
}

describe.each(testDialects())('two instances on one $name database', (dialect) => {
  const s = twoInstances(dialect, false);

  it("a second instance starting leaves the first one's running task alone; it ends with success", async () => {
    const tpl = await insertTemplate(s.a.deps, s.projectId, {
      repository_id: s.repoId,
      playbook: 'gated.sh',
    });
    const res = await s.owner.post(`/api/project/${s.projectId}/tasks`, { template_id: tpl });
    expect(res.statusCode).toBe(201);
    const id = res.json().id as number;
    await waitForStatus(s.a.deps, id, ['running']);
    expect((await task(s.a, id)).runner).toBe('alpha');
    // A row a previous single server left (no runner): a starting instance ends it as before.
    const legacy = await insertLegacyRunningTask(s.a, s.projectId, tpl);

    await startB(s);
    expect(engineOf(s.b).instanceId).toMatch(/^[0-9a-f]{16}$/);
    expect((await task(s.a, id)).status).toBe('running');
    const legacyRow = await task(s.a, legacy);
    expect([legacyRow.status, legacyRow.message]).toEqual(['error', interruptedMessage]);

    s.gate.open();
    const done = await waitForStatus(s.a.deps, id, ['success', 'error', 'stopped']);
    expect(done.status).toBe('success');
    expect(await outputOf(s.a.deps, id)).toContain('slept');
    const runners = await s.a.deps.db.selectFrom('task_runner').select('id').orderBy('id').execute();
    expect(runners.map((r) => r.id).sort()).toEqual(['alpha', engineOf(s.b).instanceId].sort());
  });

  it('a stop posted to the other instance ends the task within a second or so, its process gone', async () => {
    const tpl = await insertTemplate(s.a.deps, s.projectId, {
      repository_id: s.repoId,
      playbook: 'sleep.sh',
    });
    const { id, other, seen, elapsed } = await stopFromOther(s, tpl, {}, 10_000);
    const done = await waitForStatus(s.a.deps, id, ['stopped', 'error', 'success'], 5000);
    expect(done.status).toBe('stopped');
    expect(done.control).toBeNull();
    // The runner itself stopped it gracefully (stopping, SIGTERM), not B writing `stopped` over a live run.
    await waitFor(async () => seen.includes('stopped') || undefined, 3000, 'the stopped update');
    expect(seen).toEqual(['stopping', 'stopped']);
    // Found by A's one-second poll of its tasks' control requests (no Redis here), then SIGTERM. Measured from
    // the stop request to the process's exit only; the headroom over the poll covers a machine with a busy core.
    expect(elapsed).toBeLessThan(3000);
    // A stop of a finished task is still a plain 204 on either instance.
    expect((await post(other, s.owner, `/api/project/${s.projectId}/tasks/${id}/stop`)).statusCode).toBe(204);
  });

  it("confirm posted to the other instance applies the runner's Terraform plan; reject ends the plan", async () => {
    const { bin, record, restore } = toolsOnPath({ terraform: tfScript });
    try {
      const tpl = await insertTemplate(s.a.deps, s.projectId, {
        app: 'terraform',
        repository_id: s.repoId,
        playbook: 'infra',
        allow_parallel_tasks: 1,
      });
      const start = async () => {
        const id = (await s.owner.post(`/api/project/${s.projectId}/tasks`, { template_id: tpl })).json().id;
        await waitForStatus(s.a.deps, id, ['waiting_confirmation']);
        return [id as number, ...(await s.split(id))] as const;
      };

      const [id, , other] = await start();
      const url = `/api/project/${s.projectId}/tasks/${id}`;
      expect((await post(other, s.owner, `${url}/confirm`)).statusCode).toBe(204);
      const done = await waitForStatus(s.a.deps, id, ['success', 'error', 'stopped']);
      expect(done.status).toBe('success');
      expect(await outputOf(s.a.deps, id)).toContain(
        'Apply complete! Resources: 1 added, 0 changed, 0 destroyed.',
      );
      expect(readFileSync(record, 'utf8')).toContain('terraform apply');
      // Same answers as on a single instance once it is no longer waiting.
      const again = await post(other, s.owner, `${url}/confirm`);
      expect([again.statusCode, again.json().error]).toEqual([
        400,
        'The task is not waiting for confirmation',
      ]);

      const [rejected, , other2] = await start();
      expect(
        (await post(other2, s.owner, `/api/project/${s.projectId}/tasks/${rejected}/reject`)).statusCode,
      ).toBe(204);
      const ended = await waitForStatus(s.a.deps, rejected, ['success', 'error', 'stopped']);
      expect(ended.status).toBe('error');
      expect(await outputOf(s.a.deps, rejected)).toContain('The plan was rejected');
    } finally {
      restore();
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('ends the tasks of an instance whose heartbeat stopped, after the staleness window, never before', async () => {
    const tpl = await insertTemplate(s.a.deps, s.projectId, {
      repository_id: s.repoId,
      playbook: 'sleep.sh',
      allow_parallel_tasks: 1,
    });
    // A third instance ("ghost") that claimed two tasks; the test beats for it, then stops as if it died.
    const ghost = 'ghost-instance';
    await s.a.deps.db.insertInto('task_runner').values({ id: ghost, heartbeat: now() }).execute();
    const ids: number[] = [];
    for (const status of ['running', 'waiting_confirmation']) {
      const id = await insertLegacyRunningTask(s.a, s.projectId, tpl);
      await s.a.deps.db.updateTable('task').set({ status, runner: ghost }).where('id', '=', id).execute();
      ids.push(id);
    }
    const beat = () =>
      s.a.deps.db.updateTable('task_runner').set({ heartbeat: now() }).where('id', '=', ghost).execute();
    // Alive for several sweeps of both instances: nothing happens to its tasks. The time is what is tested here
    // (a live heartbeat outlasts the stale limit); the assertion is only that nothing happened, not how fast.
    const aliveUntil = Date.now() + runnerTimings.staleMs + 1000;
    while (Date.now() < aliveUntil) {
      await beat();
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const id of ids) expect((await task(s.a, id)).status).not.toBe('error');
    // A stop of a live instance's task waits for that instance (here it never acts).
    expect((await post(s.b, s.owner, `/api/project/${s.projectId}/tasks/${ids[0]}/stop`)).statusCode).toBe(
      204,
    );
    expect(await task(s.a, ids[0]!)).toMatchObject({ status: 'running', control: 'stop' });

    await beat();
    const lastBeat = Date.now();
    const ended = await Promise.all(ids.map((id) => waitForStatus(s.a.deps, id, ['error'], 10_000)));
    const took = Date.now() - lastBeat;
    expect(took).toBeGreaterThanOrEqual(runnerTimings.staleMs - 100);
    expect(took).toBeLessThan(runnerTimings.staleMs + 3000);
    for (const row of ended) {
      expect(row.message).toBe(runnerGoneMessage);
      expect(row.end).toBeTruthy();
      expect(row.control).toBeNull();
      // The reason is written as the last line just after the status (readers of the bus get the status after it).
      const lines = await waitFor(
        async () => {
          const out = await outputOf(s.a.deps, row.id);
          return out.length > 0 ? out : undefined;
        },
        5000,
        'the interruption line',
      );
      expect(lines).toEqual([runnerGoneMessage]);
    }
    // The dead instance's row is removed by the sweep; the live ones stay.
    await waitFor(
      async () =>
        !(await s.a.deps.db
          .selectFrom('task_runner')
          .select('id')
          .where('id', '=', ghost)
          .executeTakeFirst()) || undefined,
      5000,
      'the stale runner row to go',
    );
    const live = (await s.a.deps.db.selectFrom('task_runner').select('id').execute()).map((r) => r.id);
    expect(live.sort()).toEqual(['alpha', engineOf(s.b).instanceId].sort());
  });

  it('holds the project limit across both instances, each within its own server limit', async () => {
    await s.a.deps.db
      .updateTable('project')
      .set({ max_parallel_tasks: 3 })
      .where('id', '=', s.projectId)
      .execute();
    const tpl = await insertTemplate(s.a.deps, s.projectId, {
      repository_id: s.repoId,
      playbook: 'nap.sh',
      allow_parallel_tasks: 1,
    });
    const url = `/api/project/${s.projectId}/tasks`;
    const ids: number[] = [];
    // Created alternately on A and B, so both instances wake and claim at the same moments.
    for (let i = 0; i < 8; i++) {
      const res = await post(i % 2 ? s.b : s.a, s.owner, url, { template_id: tpl });
      expect(res.statusCode).toBe(201);
      ids.push(res.json().id);
    }
    const rows = await Promise.all(
      ids.map((id) => waitForStatus(s.a.deps, id, ['success', 'error'], 40_000)),
    );
    expect(rows.map((r) => r.status)).toEqual(ids.map(() => 'success'));
    const overlap = (list: typeof rows) => {
      let max = 0;
      for (const r of list) {
        const t = Date.parse(r.start!);
        max = Math.max(max, list.filter((o) => Date.parse(o.start!) <= t && Date.parse(o.end!) > t).length);
      }
      return max;
    };
    // Never more than the project's 3 at once, though the two instances could run 2 each...
    expect(overlap(rows)).toBeLessThanOrEqual(3);
    // ...and each instance never more than its own 2; both took work (3 at once needs both).
    const byRunner = new Map<string, typeof rows>();
    for (const r of rows) byRunner.set(r.runner!, [...(byRunner.get(r.runner!) ?? []), r]);
    expect([...byRunner.keys()].sort()).toEqual(['alpha', engineOf(s.b).instanceId].sort());
    for (const list of byRunner.values()) expect(overlap(list)).toBeLessThanOrEqual(2);
    expect(overlap(rows)).toBe(3);
    await s.a.deps.db
      .updateTable('project')
      .set({ max_parallel_tasks: 0 })
      .where('id', '=', s.projectId)
      .execute();
  });

  it("measures heartbeats by the database's clock: a clock 90 s ahead ends no live instance's task", async () => {
    const tpl = await insertTemplate(s.a.deps, s.projectId, {
      repository_id: s.repoId,
      playbook: 'short.sh',
      allow_parallel_tasks: 1,
    });
    // "steady" is a healthy instance elsewhere: the test beats for it at the database's time. This process's
    // clock (both instances here) runs 90 s ahead, which made its heartbeat look 90 s old. While the clock is
    // ahead each beat is dated 20 s past the database's time, so a stall of this busy machine longer than the
    // 3 s staleness window between two beats does not end it either; measured by this process's clock that beat
    // would still look 70 s old.
    const steady = 'steady-instance';
    const beat = async (aheadMs = 0) => {
      const time = new Date((await databaseNow(s.a.deps.db, s.a.deps.dialect)) + aheadMs).toISOString();
      await s.a.deps.db
        .updateTable('task_runner')
        .set({ heartbeat: time })
        .where('id', '=', steady)
        .execute();
    };
    await s.a.deps.db.insertInto('task_runner').values({ id: steady, heartbeat: now() }).execute();
    await beat(20_000);
    const ids: Record<'running' | 'starting', number> = { running: 0, starting: 0 };
    for (const status of ['running', 'starting'] as const) {
      ids[status] = await insertLegacyRunningTask(s.a, s.projectId, tpl);
      await s.a.deps.db
        .updateTable('task')
        .set({ status, runner: steady })
        .where('id', '=', ids[status])
        .execute();
    }
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 90_000, shouldAdvanceTime: true });
    try {
      // Several sweeps of both instances: a live instance's tasks stay as they are.
      const until = performance.now() + runnerTimings.staleMs + 1000;
      while (performance.now() < until) {
        await beat(20_000);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect((await task(s.a, ids.running)).status).toBe('running');
      expect((await task(s.a, ids.starting)).status).toBe('starting');
    } finally {
      vi.useRealTimers();
    }
    // Its last beat, at the database's time: the silence is measured from here.
    await beat();

    // Once it is silent for the staleness window: its running task ends as error, and the one it had only
    // claimed goes back to the queue and runs on a live instance.
    const ended = await waitForStatus(s.a.deps, ids.running, ['error'], runnerTimings.staleMs + 10_000);
    expect(ended.message).toBe(runnerGoneMessage);
    const rerun = await waitForStatus(
      s.a.deps,
      ids.starting,
      ['success', 'error'],
      runnerTimings.staleMs + 30_000,
    );
    const rerunOutput = await outputOf(s.a.deps, ids.starting);
    expect(rerun.status, `${rerun.message}\n${rerunOutput.join('\n')}`).toBe('success');
    expect(rerun.runner).not.toBe(steady);
    expect(rerunOutput).toContain('slept');
  });

  it("puts a dead instance's claim back in the queue only while that instance still holds it", async () => {
    const { db } = s.a.deps;
    const tpl = await insertTemplate(s.a.deps, s.projectId, {
      repository_id: s.repoId,
      playbook: 'short.sh',
    });
    // The instance that took the task since: alive (its heartbeat fresh), so no sweep touches its claim.
    const taker = `taker-${randomBytes(3).toString('hex')}`;
    await db.insertInto('task_runner').values({ id: taker, heartbeat: now() }).execute();
    await db
      .updateTable('task_runner')
      .set({ heartbeat: new Date(await databaseNow(db, s.a.deps.dialect)).toISOString() })
      .where('id', '=', taker)
      .execute();
    const id = await insertReturningId(
      db,
      s.a.deps.dialect,
      'task',
      taskRow(s.projectId, tpl, { status: 'starting', runner: taker }),
    );
    const status = createStatusUpdates({
      ...s.a.deps,
      output: createOutputWriter(db, s.a.deps.dialect, s.a.deps.config.dbUrl),
      details: new Map(),
      closing: () => false,
    });
    try {
      // A sweep that read the claim of a dead instance ("ghost") before the taker claimed the task.
      expect(await status.requeueClaim({ id, runner: 'ghost' })).toBe(false);
      expect(await task(s.a, id)).toMatchObject({ status: 'starting', runner: taker });
      // The taker's own claim, once it is the one gone, goes back to the queue and runs once, on a live instance.
      expect(await status.requeueClaim({ id, runner: taker })).toBe(true);
      const ran = await waitForStatus(s.a.deps, id, ['success', 'error'], 30_000);
      expect(ran.status, ran.message).toBe('success');
      expect(ran.runner).not.toBe(taker);
    } finally {
      await db.deleteFrom('task_runner').where('id', '=', taker).execute();
    }
  });
});

/**
 * The queue lock of PostgreSQL and MySQL is a row lock held by a transaction for one pass: an instance that dies
 * holding it (its connection gone) holds up the others' claims only until the database notices.
 */
describe.each(testDialects().filter((d) => d.name !== 'sqlite'))(
  'the queue lock on a $name database',
  (dialect) => {
    const s = twoInstances(dialect, false);

    /** A connection that takes the queue lock in an open transaction, and can vanish as a crashed server's. */
    async function lockHolder(url: string) {
      if (dialect.name === 'postgres') {
        const client = new pg.Client({ connectionString: url });
        client.on('error', () => {});
        await client.connect();
        await client.query('BEGIN');
        await client.query('SELECT id FROM task_queue_lock WHERE id = 1 FOR UPDATE');
        return () =>
          (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      }
      const conn = await createConnection(url);
      conn.on('error', () => {});
      await conn.query('BEGIN');
      await conn.query('SELECT id FROM task_queue_lock WHERE id = 1 FOR UPDATE');
      return () => conn.destroy();
    }

    it('a crash while holding the lock delays the claims of the others by under 2 s', async () => {
      await startB(s);
      const tpl = await insertTemplate(s.a.deps, s.projectId, {
        repository_id: s.repoId,
        playbook: 'nap.sh',
      });
      const crash = await lockHolder((await s.shared.dialect.create('')).url);
      const res = await post(s.a, s.owner, `/api/project/${s.projectId}/tasks`, { template_id: tpl });
      expect(res.statusCode).toBe(201);
      const id = res.json().id as number;
      // While the lock is held no instance claims: both retry every 200 ms meanwhile.
      const heldUntil = performance.now() + 1500;
      while (performance.now() < heldUntil) {
        expect((await task(s.a, id)).status).toBe('waiting');
        await new Promise((r) => setTimeout(r, 100));
      }
      const crashed = performance.now();
      crash();
      await waitForStatus(s.a.deps, id, ['starting', 'running', 'success'], 10_000);
      expect(performance.now() - crashed).toBeLessThan(2000);
      expect((await waitForStatus(s.a.deps, id, ['success', 'error'], 30_000)).status).toBe('success');
    });
  },
);

describe.each(testDialects())('two instances on one $name database with Redis', (dialect) => {
  // Redis carries the control request: the owner's poll is made too slow to be what acts.
  beforeAll(() => {
    runnerTimings.controlPollMs = 60_000;
  });
  const s = twoInstances(dialect, true);
  beforeAll(async () => {
    await startB(s);
    Object.assign(runnerTimings, defaultTimings);
  });

  it('a stop or force stop posted to the other instance reaches the runner at once through Redis', async () => {
    const tpl = await insertTemplate(s.a.deps, s.projectId, {
      repository_id: s.repoId,
      playbook: 'sleep.sh',
      allow_parallel_tasks: 1,
    });
    for (const force of [false, true]) {
      // The owner's poll runs once a minute here, so a process that ends well before that was reached through
      // Redis: no tight time bound needed (that would only measure how busy the machine is).
      const { id, seen } = await stopFromOther(s, tpl, { force }, 15_000);
      expect((await waitForStatus(s.a.deps, id, ['stopped', 'error', 'success'], 5000)).status).toBe(
        'stopped',
      );
      await waitFor(async () => seen.includes('stopped') || undefined, 3000, 'the stopped update');
      expect(seen).toEqual(force ? ['stopped'] : ['stopping', 'stopped']);
    }
  });
});

/**
 * A task queued through one instance that cannot take it starts on an idle other instance at once: its update
 * reaches the other instance through Redis and wakes its queue, long before the 10 s safety poll.
 */
describe.each(testDialects())('work queued on one instance on $name with Redis', (dialect) => {
  const s = twoInstances(dialect, true);

  it('starts on the idle other instance at once, woken through Redis rather than its poll', async () => {
    await startB(s);
    // A takes no work any more (as while it shuts down); it still answers the API.
    void s.a.deps.tasks.drain(60_000);
    const tpl = await insertTemplate(s.a.deps, s.projectId, { repository_id: s.repoId, playbook: 'nap.sh' });
    const posted = performance.now();
    const res = await post(s.a, s.owner, `/api/project/${s.projectId}/tasks`, { template_id: tpl });
    expect(res.statusCode).toBe(201);
    const id = res.json().id as number;
    const started = await waitForStatus(s.a.deps, id, ['starting', 'running', 'success'], 10_000);
    // About 0.1 s on a quiet machine, 1.5 s beside a burnt core and other suites: either way well inside the 10 s
    // safety poll, so the wake came through Redis, not the poll.
    expect(performance.now() - posted).toBeLessThan(5000);
    expect(started.runner).toBe(engineOf(s.b).instanceId);
    expect((await waitForStatus(s.a.deps, id, ['success', 'error'], 30_000)).status).toBe('success');
  });
});

describe('instance identity', () => {
  it('SIGNALBOX_INSTANCE_ID is optional and validated', () => {
    expect(loadConfig({ SIGNALBOX_INSTANCE_ID: 'web-1.eu_a' }).instanceId).toBe('web-1.eu_a');
    expect(loadConfig({}).instanceId).toBeUndefined();
    expect(() => loadConfig({ SIGNALBOX_INSTANCE_ID: 'web 1' })).toThrow(
      'SIGNALBOX_INSTANCE_ID: must be letters, digits, dots, dashes or underscores',
    );
    expect(() => loadConfig({ SIGNALBOX_INSTANCE_ID: '-x' })).toThrow(
      'SIGNALBOX_INSTANCE_ID: must be letters',
    );
    expect(() => loadConfig({ SIGNALBOX_INSTANCE_ID: 'a'.repeat(65) })).toThrow(
      'SIGNALBOX_INSTANCE_ID: must be at most 64 characters',
    );
  });

  it('orphan cleanup matches the whole instance id, never one it is a prefix of', async () => {
    const child = spawn('sleep', ['600'], {
      env: { PATH: process.env.PATH, SIGNALBOX_TASK_OWNER: 'web-12', SIGNALBOX_TASK_ID: '4242' },
      stdio: 'ignore',
    });
    const pid = child.pid!;
    // Until exec, the forked child still shows the parent's environment.
    await waitFor(
      async () =>
        readFileSync(`/proc/${pid}/environ`, 'latin1').includes('SIGNALBOX_TASK_OWNER=') || undefined,
      3000,
      'the process to start',
    );
    try {
      expect(killOrphans('web-1', new Set([4242]), '')).toBe(0);
      expect(killOrphans('web-12', new Set([4243]), '')).toBe(0);
      expect(alive(pid)).toBe(true);
      expect(killOrphans('web-12', new Set([4242]), '')).toBe(1);
      await waitFor(async () => !alive(pid) || undefined, 3000, 'the orphan to be killed');
    } finally {
      child.kill('SIGKILL');
    }
  });
});

/** A task row as a previous server version left it: running, no runner. */
async function insertLegacyRunningTask(h: Harness, projectId: number, templateId: number) {
  return insertReturningId(
    h.deps.db,
    h.deps.dialect,
    'task',
    taskRow(projectId, templateId, {
      status: 'running',
      start: now(),
    }),
  );
}
