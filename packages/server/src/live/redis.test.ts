import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { sharedDatabase, testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { openLiveSocket, roundTrip } from '../../test/support/live-socket';
import { insertTemplate, outputOf, waitFor, waitForStatus } from '../../test/support/task-fixtures';
import { insertGitRepository, ownedProject } from '../../test/support/task-runs';
import { now } from '../db/values';
import type { LiveMessage } from './bus';
import { liveChannel, type RedisBridge, redisBridgeOf } from './redis';

const REDIS_URL = 'redis://127.0.0.1:6379';
// A channel of this run only: parallel runs (and a real server) on the same Redis never see these events.
liveChannel.name = `signalbox:test:${randomBytes(8).toString('hex')}`;
// The files of a worker share their modules: the next one names its channel by the deployment id again.
afterAll(() => {
  liveChannel.name = '';
});

/** A plain Redis subscriber on the live channel: what actually goes over Redis. */
async function channelSpy() {
  const redis = new Redis(REDIS_URL);
  const messages: string[] = [];
  redis.on('message', (channel: string, message: string) => {
    if (channel === liveChannel.name) messages.push(message);
  });
  await redis.subscribe(liveChannel.name);
  return { messages, close: () => redis.quit() };
}

/** A slack-compatible receiver counting alert posts. */
async function alertReceiver() {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      bodies.push(raw);
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/hook`,
    bodies,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const update = (project: number, task: number, status: string): LiveMessage => ({
  type: 'update',
  project_id: project,
  template_id: 1,
  task_id: task,
  status,
  start: null,
  end: null,
  version: null,
});

const logLinesMatching = (h: Harness, text: string) => h.logLines.filter((l) => l.includes(text));

async function bashTask(h: Harness, projectId: number, lines: number) {
  const script = `for i in $(seq 1 ${lines}); do echo "line $i"; done\n`;
  const { id } = await insertGitRepository(h.deps, projectId, { 'run.sh': script });
  return insertTemplate(h.deps, projectId, { repository_id: id });
}

describe.each(testDialects())('live events across two instances through Redis on $name', (dialect) => {
  let shared: Awaited<ReturnType<typeof sharedDatabase>>;
  let receiver: Awaited<ReturnType<typeof alertReceiver>>;
  let a: Harness;
  let b: Harness;
  let baseA: string;
  let baseB: string;
  let bridgeA: RedisBridge;
  let bridgeB: RedisBridge;
  let owner: Client;
  let projectId: number;

  beforeAll(async () => {
    shared = await sharedDatabase(dialect, 'sb-redis-db-');
    receiver = await alertReceiver();
    const config = {
      redisUrl: REDIS_URL,
      // Instances of one deployment share the secret key (stored secrets decrypt on either).
      secretKey: randomBytes(32).toString('base64'),
      slackAlert: true,
      slackUrl: receiver.url,
    };
    a = await createHarness(shared.dialect, config);
    b = await createHarness(shared.dialect, config);
    // Only A runs tasks, so whatever B's sockets receive about them came through Redis.
    await b.deps.tasks.close();
    baseA = (await a.app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http/, 'ws');
    baseB = (await b.app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http/, 'ws');
    bridgeA = redisBridgeOf(a.deps.bus)!;
    bridgeB = redisBridgeOf(b.deps.bus)!;
    await waitFor(async () => (bridgeA.ready() && bridgeB.ready()) || undefined, 5000, 'Redis');
    ({ owner, projectId } = await ownedProject(a));
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await receiver?.close();
    await shared?.drop();
  });

  it('relays what A publishes to a socket on B in order, exactly once, one Redis message per event', async () => {
    expect(bridgeA.instanceId).not.toBe(bridgeB.instanceId);
    const spy = await channelSpy();
    const sock = await openLiveSocket(b, baseB, { cookie: owner.cookie });
    const seenOnA = { live: 0, logs: 0 };
    const countLive = () => {
      seenOnA.live += 1;
    };
    const countLogs = () => {
      seenOnA.logs += 1;
    };
    a.deps.bus.on('live', countLive);
    a.deps.bus.on('logs', countLogs);

    a.deps.bus.publish(update(projectId, 5001, 'running'));
    a.deps.bus.publishLogs({
      project_id: projectId,
      task_id: 5001,
      lines: ['one', 'two', 'three'].map((output, i) => ({ output, time: now(), line: i + 1 })),
    });
    a.deps.bus.publish(update(projectId, 5001, 'success'));

    // A last message through the same Redis channel: once it is here, every earlier one (and any duplicate of
    // one) is too, as Redis delivers a channel's messages in order.
    a.deps.bus.publish(update(projectId, 5002, 'running'));
    await waitFor(
      async () => sock.messages.some((m) => m.task_id === 5002) || undefined,
      10_000,
      'the last message',
    );
    expect(sock.messages.pop()?.task_id).toBe(5002);
    expect(
      sock.messages.map((m) => (m.type === 'log' ? m.output : m.type === 'update' ? m.status : m.type)),
    ).toEqual(['running', 'one', 'two', 'three', 'success']);
    expect(sock.messages.every((m) => m.task_id === 5001 && m.project_id === projectId)).toBe(true);
    // A's own listeners heard each event once: its messages coming back from Redis are not emitted again.
    expect(seenOnA).toEqual({ live: 3, logs: 1 });
    // Three events, three Redis messages (the three lines went as one), all tagged with A's instance id; then
    // the last message.
    await waitFor(
      async () => spy.messages.length >= 4 || undefined,
      10_000,
      'the spy to hear the last message',
    );
    expect(spy.messages.map((m) => JSON.parse(m)).map((m) => [m.i, m.e])).toEqual([
      [bridgeA.instanceId, 'live'],
      [bridgeA.instanceId, 'logs'],
      [bridgeA.instanceId, 'live'],
      [bridgeA.instanceId, 'live'],
    ]);
    a.deps.bus.off('live', countLive);
    a.deps.bus.off('logs', countLogs);
    sock.ws.close();
    await spy.close();
  });

  it('streams a task run on A to sockets on A and on B alike: every update and log line once, in order', async () => {
    const tpl = await bashTask(a, projectId, 200);
    const onA = await openLiveSocket(a, baseA, { cookie: owner.cookie });
    const onB = await openLiveSocket(b, baseB, { cookie: owner.cookie });
    const id = (await owner.post(`/api/project/${projectId}/tasks`, { template_id: tpl })).json().id;
    await waitForStatus(a.deps, id, ['success']);
    const stored = await outputOf(a.deps, id);
    expect(stored.filter((l) => l.startsWith('line '))).toHaveLength(200);
    for (const sock of [onA, onB]) {
      await waitFor(
        async () =>
          sock.messages.some((m) => m.task_id === id && m.type === 'update' && m.status === 'success') ||
          undefined,
        5000,
        'the success update',
      );
    }
    // A marker published on A after the run: Redis keeps order, so once it arrived everything before it did too.
    a.deps.bus.publish(update(projectId, 0, 'marker'));
    for (const sock of [onA, onB])
      await waitFor(async () => sock.messages.some((m) => m.task_id === 0) || undefined, 5000, 'the marker');
    for (const sock of [onA, onB]) {
      const mine = sock.messages.filter((m) => m.task_id === id);
      expect(mine.filter((m) => m.type === 'log').map((m) => (m as { output: string }).output)).toEqual(
        stored,
      );
      expect(mine.filter((m) => m.type === 'update').map((m) => (m as { status: string }).status)).toEqual([
        'waiting',
        'starting',
        'running',
        'success',
      ]);
    }
    // Same messages, same order on both instances.
    expect(onB.messages).toEqual(onA.messages);
    onA.ws.close();
    onB.ws.close();
  });

  it('a logout on A closes the socket of that session on B', async () => {
    const user = await a.userClient();
    const sock = await openLiveSocket(b, baseB, { cookie: user.cookie });
    const other = await openLiveSocket(b, baseB, { cookie: owner.cookie });
    expect((await user.post('/api/auth/logout')).statusCode).toBe(204);
    const closed = await Promise.race([
      sock.closed,
      new Promise<null>((r) => setTimeout(() => r(null), 3000)),
    ]);
    expect(closed).toEqual({ code: 1000, reason: 'Signed out' });
    expect(other.ws.readyState).toBe(WebSocket.OPEN);
    other.ws.close();
  });

  it('a team change on A reaches sockets on B at once', async () => {
    const joiner = await a.userClient();
    const sock = await openLiveSocket(b, baseB, { cookie: joiner.cookie });
    const relayed: number[] = [];
    const onMembership = ({ userId }: { userId: number }) => void relayed.push(userId);
    b.deps.bus.on('membership', onMembership);
    try {
      const add = await owner.post(`/api/project/${projectId}/users`, {
        user_id: joiner.userId,
        role: 'guest',
      });
      expect(add.statusCode).toBe(204);
      // B hears of the change from A through Redis (B's hub reads the socket's memberships again on it)...
      await waitFor(
        async () => relayed.includes(joiner.userId) || undefined,
        10_000,
        'the relayed membership',
      );
      // ...and the socket gets the project's messages from then on. Nothing is published before the relayed event,
      // so no dropped message can have started B's on-demand refresh: only the relayed event explains delivery.
      let task = 6000;
      await waitFor(
        async () => {
          if (sock.messages.length > 0) return true;
          a.deps.bus.publish(update(projectId, ++task, 'running'));
          return undefined;
        },
        10_000,
        'a message of the joined project',
      );
      expect(sock.messages.every((m) => m.project_id === projectId && m.task_id > 6000)).toBe(true);
    } finally {
      b.deps.bus.off('membership', onMembership);
      sock.ws.close();
    }
  });

  it('alerts a task result once, from the instance that ran it, not once per instance', async () => {
    await a.deps.db.updateTable('project').set({ alert: 1 }).where('id', '=', projectId).execute();
    try {
      const tpl = await bashTask(a, projectId, 3);
      // B hears each task's end through Redis; an instance that alerted on what it heard would alert then.
      const endsOnB: number[] = [];
      const onLive = (m: LiveMessage) => {
        if (m.type === 'update' && m.status === 'success') endsOnB.push(m.task_id);
      };
      b.deps.bus.on('live', onLive);
      const alertsOf = (id: number) =>
        receiver.bodies.filter((body) => new RegExp(`t=${id}(\\D|$)`).test(body));
      try {
        const run = async () => {
          const id = (await owner.post(`/api/project/${projectId}/tasks`, { template_id: tpl })).json().id;
          await waitForStatus(a.deps, id, ['success']);
          await waitFor(async () => endsOnB.includes(id) || undefined, 10_000, 'B to hear the end');
          await waitFor(async () => alertsOf(id).length >= 1 || undefined, 10_000, 'the alert');
          return id as number;
        };
        const first = await run();
        // A second run's alert comes after anything B would have sent for the first (B heard the first end
        // before the second task even started), so waiting for it replaces waiting "long enough".
        const second = await run();
        expect(alertsOf(first)).toHaveLength(1);
        expect(alertsOf(second)).toHaveLength(1);
      } finally {
        b.deps.bus.off('live', onLive);
      }
    } finally {
      await a.deps.db.updateTable('project').set({ alert: 0 }).where('id', '=', projectId).execute();
    }
  });

  it('survives dropped Redis connections: one warning, reconnects, relays again', async () => {
    // A viewer on B is told when B stops hearing A, and when it hears it again.
    const watcher = await openLiveSocket(b, baseB, { cookie: owner.cookie });
    const relayStates = () =>
      (watcher.messages as unknown as { type: string; connected?: boolean }[])
        .filter((m) => m.type === 'relay')
        .map((m) => m.connected);
    const admin = new Redis(REDIS_URL);
    try {
      const list = String(await admin.client('LIST'));
      const ids = list
        .split('\n')
        .filter(
          (l) =>
            l.includes(`name=signalbox-pub-${bridgeA.instanceId.slice(0, 8)} `) ||
            l.includes(`name=signalbox-sub-${bridgeB.instanceId.slice(0, 8)} `),
        )
        .map((l) => /(?:^|\s)id=(\d+)/.exec(l)?.[1]);
      expect(ids).toHaveLength(2);
      for (const id of ids) await admin.client('KILL', 'ID', id!);
    } finally {
      await admin.quit();
    }
    await waitFor(
      async () => [a, b].every((h) => logLinesMatching(h, 'Redis connection lost').length > 0) || undefined,
      3000,
      'the drop to be noticed',
    );
    // Meanwhile A keeps working locally.
    const local: LiveMessage[] = [];
    const onLocal = (m: LiveMessage) => void local.push(m);
    a.deps.bus.on('live', onLocal);
    a.deps.bus.publish(update(projectId, 7000, 'running'));
    expect(local).toHaveLength(1);
    a.deps.bus.off('live', onLocal);

    await waitFor(async () => (bridgeA.ready() && bridgeB.ready()) || undefined, 10_000, 'the reconnection');
    await waitFor(async () => relayStates().length >= 2 || undefined, 3000, 'the relay messages');
    expect(relayStates()).toEqual([false, true]);
    watcher.ws.close();
    const sock = await openLiveSocket(b, baseB, { cookie: owner.cookie });
    a.deps.bus.publish(update(projectId, 7001, 'running'));
    await waitFor(async () => sock.messages.length >= 1 || undefined, 3000, 'a relayed message');
    expect(sock.messages.map((m) => m.task_id)).toEqual([7001]);
    for (const h of [a, b]) {
      expect(logLinesMatching(h, 'live events stay on this instance')).toHaveLength(1);
      expect(logLinesMatching(h, 'Redis reconnected')).toHaveLength(1);
    }
    sock.ws.close();
  });
});

describe('live events with Redis not configured or not reachable', () => {
  /**
   * Listens, runs a task printing `lines` lines while a live socket of its owner watches, and waits until the
   * socket heard of its success. `runMs` is the time from starting the task to that.
   */
  async function watchedRun(h: Harness, lines: number, timeoutMs?: number) {
    const base = (await h.app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http/, 'ws');
    const { owner, projectId } = await ownedProject(h);
    const tpl = await bashTask(h, projectId, lines);
    const sock = await openLiveSocket(h, base, { cookie: owner.cookie });
    const runStart = Date.now();
    const id = (await owner.post(`/api/project/${projectId}/tasks`, { template_id: tpl })).json().id;
    await waitForStatus(h.deps, id, ['success'], timeoutMs);
    await waitFor(
      async () => sock.messages.some((m) => m.type === 'update' && m.status === 'success') || undefined,
      3000,
      'the success update',
    );
    const runMs = Date.now() - runStart;
    const logs = () =>
      sock.messages.filter((m) => m.type === 'log').map((m) => (m as { output: string }).output);
    return { owner, projectId, sock, id, runMs, logs };
  }

  it('without SIGNALBOX_REDIS_URL nothing is published and the socket works as before', async () => {
    const spy = await channelSpy();
    const h = await createHarness(testDialects()[0]!);
    try {
      expect(h.config.redisUrl).toBeUndefined();
      expect(redisBridgeOf(h.deps.bus)).toBeUndefined();
      const { owner, sock, id, logs } = await watchedRun(h, 50);
      h.deps.bus.emit('membership', { userId: owner.userId });
      // Whatever the server sent before answering this ping has arrived: a duplicate would be here now.
      await roundTrip(sock);
      expect(logs()).toEqual(await outputOf(h.deps, id));
      expect(spy.messages).toEqual([]);
      sock.ws.close();
    } finally {
      await h.close();
      await spy.close();
    }
  });

  it('a Redis URL on a closed port neither fails nor slows the local instance', async () => {
    const probe = createTcpServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));

    // The timings below are reported, not bounded: a start, run or publish that waited for Redis would never
    // end (it is never reachable), so the test would time out; a bound would only measure how busy the machine is.
    const started = Date.now();
    const h = await createHarness(testDialects()[0]!, {
      redisUrl: `redis://:redis-pw-s3cret@127.0.0.1:${port}`,
    });
    const bootMs = Date.now() - started;
    let closed = false;
    try {
      const bridge = redisBridgeOf(h.deps.bus)!;
      expect(bridge.ready()).toBe(false);
      const { projectId, sock, id, runMs, logs: logsOf } = await watchedRun(h, 300, 10_000);
      // Its viewers are told that other instances' tasks do not update here.
      expect(sock.messages).toContainEqual({ type: 'relay', connected: false });
      const logs = logsOf();
      expect(logs).toEqual(await outputOf(h.deps, id));
      expect(logs.filter((l) => l.startsWith('line '))).toHaveLength(300);

      // Publishing while Redis is down queues nothing: 20,000 lines and 2,000 updates are skipped at once.
      const t0 = performance.now();
      for (let i = 0; i < 2000; i++) {
        h.deps.bus.publish(update(projectId, 9000, 'running'));
        if (i % 100 === 0)
          h.deps.bus.publishLogs({
            project_id: projectId,
            task_id: 9000,
            lines: Array.from({ length: 1000 }, (_, j) => ({ output: `x ${j}`, time: now(), line: j + 1 })),
          });
      }
      const publishMs = performance.now() - t0;
      expect(bridge.skipped()).toBeGreaterThan(2000);

      // ioredis keeps retrying (several attempts in this time); the outage is reported once. The time itself is
      // what is tested (retries during it add no warning); a slower machine only makes fewer attempts, and the
      // assertion is the absence of a second warning, so it holds however busy the machine is.
      await new Promise((r) => setTimeout(r, 1500));
      expect(logLinesMatching(h, 'live events stay on this instance')).toHaveLength(1);
      expect(logLinesMatching(h, `127.0.0.1:${port}`).length).toBeGreaterThan(0);
      expect(h.logLines.join('\n')).not.toContain('redis-pw-s3cret');
      sock.ws.close();

      // Closing does not wait for the Redis retries (ioredis would retry forever): it ends, and the time is shown.
      const closeStart = Date.now();
      await h.close();
      closed = true;
      const closeMs = Date.now() - closeStart;
      console.info(
        `closed-port Redis: boot ${bootMs} ms, 300-line task ${runMs} ms, publish ${publishMs.toFixed(1)} ms, close ${closeMs} ms`,
      );
    } finally {
      if (!closed) await h.close();
    }
  });
});
