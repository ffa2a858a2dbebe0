import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { batchLineTimes, type TaskLogBatchMessage } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { type LiveSocketClient, openLiveSocket, roundTrip } from '../../../test/support/live-socket';
import {
  gitRepo,
  insertRepository,
  insertTemplate,
  outputOf,
  waitFor,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { now } from '../../db/values';
import type { LiveMessage } from '../../live/bus';
import { hubOf, MAX_BUFFERED } from './live.routes';

const require = createRequire(import.meta.url);

type Received = LiveSocketClient;

describe.each(testDialects())('live socket /api/ws on $name', (dialect) => {
  let h: Harness;
  let base: string;
  let owner: Client;
  let admin: Client;
  let outsider: Client;
  let projectId: number;
  let otherProject: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    const address = await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = address.replace(/^http/, 'ws');
    owner = await h.userClient({ can_create_project: true });
    admin = await h.userClient({ admin: true });
    outsider = await h.userClient({ can_create_project: true });
    ({ projectId } = await h.projectWithTeam(owner));
    ({ projectId: otherProject } = await h.projectWithTeam(outsider, 'Other'));
  });
  afterAll(async () => h?.close());

  const open = (headers: Record<string, string>, query = ''): Promise<Received> =>
    openLiveSocket(h, base, headers, query);

  const update = (project: number, task: number): LiveMessage => ({
    type: 'update',
    project_id: project,
    template_id: 1,
    task_id: task,
    status: 'running',
    start: null,
    end: null,
    version: null,
  });

  it('refuses an anonymous upgrade with 401', async () => {
    await expect(open({})).rejects.toThrow('HTTP 401');
  });

  it('delivers only messages of projects the user belongs to; admins get all', async () => {
    const mine = await open({ cookie: owner.cookie });
    const all = await open({ cookie: admin.cookie });
    h.deps.bus.publish(update(projectId, 1001));
    h.deps.bus.publish(update(otherProject, 1002));
    await waitFor(async () => all.messages.length >= 2 || undefined, 2000);
    await roundTrip(mine);
    expect(mine.messages.map((m) => m.task_id)).toEqual([1001]);
    expect(all.messages.map((m) => m.task_id)).toEqual([1001, 1002]);
    mine.ws.close();
    all.ws.close();
  });

  it('delivers to a limited token only the projects it reaches, as its scopes allow', async () => {
    const tokenOf = async (client: Client, limits: Record<string, unknown>) =>
      (await client.post('/api/user/tokens', limits)).json().token as string;
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const oneProject = await open(bearer(await tokenOf(admin, { project_ids: [otherProject] })));
    const noAdmin = await open(bearer(await tokenOf(admin, { scopes: ['read', 'run', 'write'] })));
    const full = await open(bearer(await tokenOf(admin, {})));
    h.deps.bus.publish(update(projectId, 3001));
    h.deps.bus.publish(update(otherProject, 3002));
    await waitFor(async () => full.messages.length >= 2 || undefined, 2000);
    await roundTrip(oneProject);
    await roundTrip(noAdmin);
    expect(oneProject.messages.map((m) => m.task_id)).toEqual([3002]);
    expect(noAdmin.messages).toEqual([]);
    expect(full.messages.map((m) => m.task_id)).toEqual([3001, 3002]);
    for (const socket of [oneProject, noAdmin, full]) socket.ws.close();
    await expect(open(bearer(await tokenOf(owner, { scopes: ['run'] })))).rejects.toThrow('HTTP 403');
  });

  it('accepts a Bearer token and picks up a new membership', async () => {
    const token = (await outsider.post('/api/user/tokens', { name: 'ws' })).json();
    const secret = token.token ?? token.id;
    const sock = await open({ authorization: `Bearer ${secret}` });
    h.deps.bus.publish(update(projectId, 2001));
    await h.deps.db
      .insertInto('project_user')
      .values({ project_id: projectId, user_id: outsider.userId, role: 'guest', created: now() })
      .execute();
    h.deps.bus.emit('membership', { userId: outsider.userId });
    // The membership is read again in the background: publish until it reaches the socket.
    await waitFor(async () => {
      h.deps.bus.publish(update(projectId, 2002));
      await roundTrip(sock);
      return sock.messages.length >= 1 || undefined;
    }, 2000);
    expect(new Set(sock.messages.map((m) => m.task_id))).toEqual(new Set([2002]));
    sock.ws.close();
  });

  it('follows team changes at once: added members start receiving, removed ones stop', async () => {
    const joiner = await h.userClient();
    const sock = await open({ cookie: joiner.cookie });
    const told: number[] = [];
    const onMembership = ({ userId }: { userId: number }) => void told.push(userId);
    h.deps.bus.on('membership', onMembership);
    const add = await owner.post(`/api/project/${projectId}/users`, {
      user_id: joiner.userId,
      role: 'guest',
    });
    h.deps.bus.off('membership', onMembership);
    expect(add.statusCode).toBe(204);
    // The team route tells the sockets before it answers; the hub then reads the memberships again. Nothing was
    // published before that event, so no dropped message started an on-demand refresh: the event explains
    // delivery (no time window needed, which a busy machine could miss).
    expect(told).toEqual([joiner.userId]);
    await waitFor(
      async () => {
        h.deps.bus.publish(update(projectId, 3001));
        await roundTrip(sock);
        return sock.messages.length >= 1 || undefined;
      },
      10_000,
      'the new member to receive',
    );
    expect(new Set(sock.messages.map((m) => m.task_id))).toEqual(new Set([3001]));

    expect((await owner.del(`/api/project/${projectId}/users/${joiner.userId}`)).statusCode).toBe(204);
    // The removal takes the project off the socket before the route answers.
    h.deps.bus.publish(update(projectId, 3002));
    await roundTrip(sock);
    expect(sock.messages.map((m) => m.task_id)).not.toContain(3002);
    sock.ws.close();
  });

  it("closes a user's other sessions' sockets when their password changes, and all of them on delete", async () => {
    const user = await h.userClient();
    const sock = await open({ cookie: user.cookie });
    const changed = await admin.post(`/api/users/${user.userId}/password`, { password: 'a-new-password-1' });
    expect(changed.statusCode).toBe(204);
    expect((await sock.closed).code).toBe(1008);

    const doomed = await h.userClient();
    const token = (await doomed.post('/api/user/tokens', { name: 'ws' })).json();
    const viaToken = await open({ authorization: `Bearer ${token.token ?? token.id}` });
    expect((await admin.del(`/api/users/${doomed.userId}`)).statusCode).toBe(204);
    const closed = await Promise.race([
      viaToken.closed,
      new Promise<null>((r) => setTimeout(() => r(null), 1000)),
    ]);
    expect(closed?.code).toBe(1008);
  });

  it('streams a real task: updates and every log line in order', async () => {
    const repo = gitRepo({ 'run.sh': 'for i in $(seq 1 300); do echo "line $i"; done\n' });
    const rid = await insertRepository(h.deps, projectId, { git_url: repo });
    const tpl = await insertTemplate(h.deps, projectId, { repository_id: rid });
    const sock = await open({ cookie: owner.cookie });
    const batched = await open({ cookie: owner.cookie }, '?logs=batches');
    const id = (await owner.post(`/api/project/${projectId}/tasks`, { template_id: tpl })).json().id;
    await waitForStatus(h.deps, id, ['success']);
    for (const s of [sock, batched])
      await waitFor(
        async () => s.messages.some((m) => m.task_id === id && m.type === 'update' && m.status === 'success'),
        3000,
      );
    const messages = sock.messages.filter((m) => m.type === 'log' && m.task_id === id) as {
      output: string;
      line: number;
    }[];
    const logs = messages.map((m) => m.output);
    expect(logs).toEqual(await outputOf(h.deps, id));
    // Each with its position in the stored log, which a viewer follows without reading the log again.
    expect(messages.map((m) => m.line)).toEqual(logs.map((_, i) => i + 1));
    expect(logs.filter((l) => l.startsWith('line '))).toHaveLength(300);
    const statuses = sock.messages
      .filter((m) => m.type === 'update' && m.task_id === id)
      .map((m) => (m as { status: string }).status);
    expect(statuses).toEqual(['waiting', 'starting', 'running', 'success']);
    // A socket that asks for batches gets the same lines as `logs` messages, each batch's first at its position.
    const batches = batched.messages.filter(
      (m) => m.task_id === id && m.type === 'logs',
    ) as TaskLogBatchMessage[];
    expect(batched.messages.some((m) => m.type === 'log')).toBe(false);
    expect(batches.length).toBeGreaterThan(0);
    expect(batches.flatMap((b) => b.outputs)).toEqual(logs);
    const stored = await h.deps.db
      .selectFrom('task_output')
      .select('time')
      .where('task_id', '=', id)
      .orderBy('id')
      .execute();
    expect(batches.flatMap((b) => batchLineTimes(b))).toEqual(stored.map((r) => r.time));
    let next = 1;
    for (const b of batches) {
      expect(b.line).toBe(next);
      next += b.outputs.length;
    }
    sock.ws.close();
    batched.ws.close();
  });

  it('refuses an unknown kind of output delivery with 400 before the upgrade', async () => {
    await expect(open({ cookie: owner.cookie }, '?logs=everything')).rejects.toThrow('HTTP 400');
    const lines = await open({ cookie: owner.cookie }, '?logs=lines');
    lines.ws.close();
  });

  it('skips lines for a batch-taking client that falls behind, which then reads on past the gap', async () => {
    const hub = hubOf(h.app)!;
    const sock = await open({ cookie: admin.cookie }, '?logs=batches');
    sock.ws.pause();
    const dropped = hub.dropped;
    const skipped = hub.skippedLines;
    const big = 'x'.repeat(10_000);
    let line = 0;
    const publish = (count: number) => {
      const lines = Array.from({ length: count }, () => ({ output: big, time: now(), line: ++line }));
      h.deps.bus.publishLogs({ project_id: projectId, task_id: 4444, lines });
    };
    // Batches of 0.5 MB for a reader that takes nothing, until the hub stops sending it any (bounded: 60 MB).
    for (let i = 0; i < 120 && hub.skippedLines === skipped; i++) {
      publish(50);
      await new Promise((r) => setImmediate(r));
    }
    expect(hub.skippedLines).toBeGreaterThan(skipped);
    expect(hub.dropped).toBe(dropped);
    sock.ws.resume();
    // Once it has caught up, it is sent lines again: the next batch, past the gap.
    await waitFor(
      async () => {
        if (sock.ws.readyState !== sock.ws.OPEN) throw new Error('the lagging client was closed');
        const got = sock.messages.filter(
          (m) => m.type === 'logs' && m.task_id === 4444,
        ) as TaskLogBatchMessage[];
        if (got.at(-1)?.line === line - 1 && got.at(-1)?.outputs.length === 2) return true;
        publish(2);
        await roundTrip(sock);
        return undefined;
      },
      20_000,
      'the client to be sent lines again',
    );
    const got = sock.messages.filter((m) => m.type === 'logs' && m.task_id === 4444) as TaskLogBatchMessage[];
    const positions = got.flatMap((b) => b.outputs.map((_, i) => (b.line as number) + i));
    // Whole batches, in order, with the skipped ones missing (the client reads those as a page).
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(positions.length).toBeLessThan(line);
    expect(positions.at(-1)).toBe(line);
    expect(hub.dropped).toBe(dropped);
    sock.ws.close();
  });

  it('sends a relayed line without a whole-number position as JSON without one', async () => {
    const sock = await open({ cookie: owner.cookie });
    h.deps.bus.emitRelayed('logs', {
      project_id: projectId,
      task_id: 4343,
      lines: [{ output: 'no position', time: now(), line: Number.NaN }],
    });
    // A message that is not JSON would fail the socket's parse in the test's client.
    await waitFor(async () => sock.messages.some((m) => m.task_id === 4343) || undefined, 2000);
    expect(sock.messages.find((m) => m.task_id === 4343)).toEqual({
      type: 'log',
      project_id: projectId,
      task_id: 4343,
      output: 'no position',
      time: expect.any(String),
    });
    sock.ws.close();
  });

  it('sends a relayed batch whose lines do not follow one another without a position', async () => {
    const sock = await open({ cookie: owner.cookie }, '?logs=batches');
    h.deps.bus.emitRelayed('logs', {
      project_id: projectId,
      task_id: 4345,
      lines: [
        { output: 'one', time: '2026-12-02T07:00:00.000Z', line: 4 },
        { output: 'two', time: '2026-12-02T07:00:00.000Z', line: 9 },
        { output: 'three', time: '2026-12-02T07:00:00.001Z', line: 10 },
      ],
    });
    await waitFor(async () => sock.messages.some((m) => m.task_id === 4345) || undefined, 2000);
    expect(sock.messages.find((m) => m.task_id === 4345)).toEqual({
      type: 'logs',
      project_id: projectId,
      task_id: 4345,
      outputs: ['one', 'two', 'three'],
      times: ['2026-12-02T07:00:00.000Z', '2026-12-02T07:00:00.001Z'],
      counts: [2, 1],
    });
    sock.ws.close();
  });

  it('reports its open sockets in the metrics', async () => {
    const scraped = async () =>
      Number(
        /^signalbox_websocket_clients (\d+)$/m.exec((await h.anonymous().get('/api/metrics')).body)?.[1],
      );
    const hub = hubOf(h.app)!;
    const sock = await open({ cookie: owner.cookie });
    // Compared with the hub at the same moment: sockets of earlier tests may still be closing.
    const whileOpen = await waitFor(async () => {
      const n = await scraped();
      return n >= 1 && n === hub.clients() ? n : undefined;
    });
    sock.ws.close();
    await sock.closed;
    await waitFor(async () => {
      const n = await scraped();
      return n < whileOpen && n === hub.clients();
    });
  });

  it('closes the socket cleanly on logout', async () => {
    const user = await h.userClient();
    const sock = await open({ cookie: user.cookie });
    expect((await user.post('/api/auth/logout')).statusCode).toBe(204);
    const closed = await sock.closed;
    expect(closed.code).toBe(1000);
  });

  it('delivers big output batches in full and in order to a client in another process', async () => {
    // The client runs in its own process, as a browser would: it reads while the server publishes. All of it
    // fits in the bytes a socket may hold unsent, so a client starved of CPU by a busy machine is still never
    // dropped: only lost, duplicated or reordered lines can fail this.
    const BATCHES = 20;
    const BATCH = 1500;
    const sample: LiveMessage = {
      type: 'log',
      project_id: projectId,
      task_id: 4242,
      time: now(),
      output: `line ${BATCHES * BATCH}`,
      line: BATCHES * BATCH,
    };
    expect(BATCHES * BATCH * JSON.stringify(sample).length).toBeLessThan(MAX_BUFFERED);
    const client = `
      const WebSocket = require(${JSON.stringify(require.resolve('ws'))});
      const ws = new WebSocket(process.argv[1], { headers: { cookie: process.argv[2] } });
      let n = 0, bad = 0;
      ws.on('message', (d) => {
        const m = JSON.parse(String(d));
        if (m.type !== 'log' || m.task_id !== 4242) return;
        if (m.output !== 'line ' + n || m.line !== n + 1) bad++;
        n++;
        if (n === ${BATCHES * BATCH}) { console.log(JSON.stringify({ n, bad })); process.exit(0); }
      });
      ws.on('open', () => console.log('open'));
      ws.on('close', (code) => { console.log(JSON.stringify({ n, bad, code })); process.exit(0); });`;
    const registered = hubOf(h.app)!.registered;
    const child = spawn(process.execPath, ['-e', client, `${base}/api/ws`, admin.cookie], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += String(d);
    });
    const exited = new Promise((r) => child.on('exit', r));
    await waitFor(
      async () => hubOf(h.app)!.registered > registered || undefined,
      5000,
      'the client to register',
    );
    const dropped = hubOf(h.app)!.dropped;
    for (let b = 0; b < BATCHES; b++) {
      const lines = Array.from({ length: BATCH }, (_, i) => ({
        output: `line ${b * BATCH + i}`,
        time: now(),
        line: b * BATCH + i + 1,
      }));
      h.deps.bus.publishLogs({ project_id: projectId, task_id: 4242, lines });
      // A busy engine between batches: CPU work, then only a check phase (no timer pause).
      const until = Date.now() + 2;
      while (Date.now() < until) {}
      await new Promise((r) => setImmediate(r));
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    child.kill();
    const result = JSON.parse(out.trim().split('\n').pop()!);
    expect(result).toEqual({ n: BATCHES * BATCH, bad: 0 });
    expect(hubOf(h.app)!.dropped).toBe(dropped);
  });

  it('drops a client that does not read, without slowing the publisher', async () => {
    const url = new URL(base);
    const raw = connect(Number(url.port), url.hostname);
    await new Promise<void>((r) => raw.on('connect', () => r()));
    raw.write(
      'GET /api/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nCookie: ${admin.cookie}\r\n\r\n`,
    );
    const before = hubOf(h.app)!.clients();
    await waitFor(async () => hubOf(h.app)!.clients() > before || undefined, 2000);
    raw.pause();
    const dropped = hubOf(h.app)!.dropped;
    const big = 'x'.repeat(10_000);
    // 30 MB for a reader that takes nothing: the hub drops it rather than buffering on (publishing never waits
    // for a client, so the behaviour to check is the drop, not how long the loop took on this machine).
    for (let i = 0; i < 3000; i++) {
      h.deps.bus.publish({
        type: 'log',
        project_id: projectId,
        task_id: 9,
        output: big,
        time: now(),
        line: i + 1,
      });
      if (i % 100 === 0) await new Promise((r) => setImmediate(r));
    }
    await waitFor(
      async () => hubOf(h.app)!.dropped > dropped || undefined,
      10_000,
      'the reader to be dropped',
    );
    raw.destroy();
  });
});
