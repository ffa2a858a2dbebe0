import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDialect, testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { type LiveSocketClient, openLiveSocket } from '../../../test/support/live-socket';
import { waitFor } from '../../../test/support/task-fixtures';
import { now } from '../../db/values';
import { liveChannel, redisBridgeOf } from '../../live/redis';

const REDIS_URL = 'redis://127.0.0.1:6379';
// A channel of this run only: parallel runs (and a real server) on the same Redis never see these events.
liveChannel.name = `signalbox:test:${randomBytes(8).toString('hex')}`;
// The files of a worker share their modules: the next one names its channel by the deployment id again.
afterAll(() => {
  liveChannel.name = '';
});

/**
 * Access taken away on instance A reaches sockets on instance B through Redis. A publishes, after the change,
 * a line of the project and then a marker line of a project the socket still sees: Redis keeps one
 * publisher's order, so when B's socket has the marker, B had already acted on the change before the line.
 */
describe.each(testDialects())('live sockets losing access across instances on $name', (dialect) => {
  let dir: string;
  let drop: () => Promise<void>;
  let a: Harness;
  let b: Harness;
  let baseB: string;
  let owner: Client;
  let admin: Client;
  let shared: number;
  let kept: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-revoke-db-'));
    const db = await dialect.create(dir);
    drop = db.drop;
    const same: TestDialect = {
      name: dialect.name,
      create: async () => ({ url: db.url, drop: async () => {} }),
    };
    const config = { redisUrl: REDIS_URL, secretKey: randomBytes(32).toString('base64') };
    a = await createHarness(same, config);
    b = await createHarness(same, config);
    baseB = (await b.app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http/, 'ws');
    const ready = () => redisBridgeOf(a.deps.bus)!.ready() && redisBridgeOf(b.deps.bus)!.ready();
    await waitFor(async () => ready() || undefined, 5000, 'Redis');
    owner = await a.userClient({ can_create_project: true });
    admin = await a.userClient({ admin: true });
    ({ projectId: shared } = await a.projectWithTeam(owner, 'Shared'));
    ({ projectId: kept } = await a.projectWithTeam(owner, 'Kept'));
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  let nextTask = 70_000;
  const publishOnA = (projectId: number) => {
    nextTask += 1;
    a.deps.bus.publishLogs({
      project_id: projectId,
      task_id: nextTask,
      lines: [{ output: `line ${nextTask}`, time: now(), line: 1 }],
    });
    return nextTask;
  };
  const got = (sock: LiveSocketClient, taskId: number) => sock.messages.some((m) => m.task_id === taskId);
  async function member(projects: number[]) {
    const user = await a.userClient();
    for (const project_id of projects)
      await a.deps.db
        .insertInto('project_user')
        .values({ project_id, user_id: user.userId, role: 'guest', created: now() })
        .execute();
    return user;
  }

  it('stops sending a project to a member removed from it on the other instance', async () => {
    const user = await member([shared, kept]);
    const sock = await openLiveSocket(b, baseB, { cookie: user.cookie });
    expect((await owner.del(`/api/project/${shared}/users/${user.userId}`)).statusCode).toBe(204);
    const line = publishOnA(shared);
    const marker = publishOnA(kept);
    await waitFor(async () => got(sock, marker) || undefined, 5000, 'the marker line');
    expect(got(sock, line)).toBe(false);
    sock.ws.close();
  });

  it("closes a user's and a deleted token's sockets on the other instance", async () => {
    const user = await member([shared]);
    const token = (await user.post('/api/user/tokens', { name: 'b' })).json() as {
      id: string;
      token: string;
    };
    // B re-reads a socket's access 5 s after it opened; closing sooner than that, it acted on the relayed event.
    const byToken = await openLiveSocket(b, baseB, { authorization: `Bearer ${token.token}` });
    let opened = Date.now();
    expect((await user.del(`/api/user/tokens/${token.id}`)).statusCode).toBe(204);
    expect(await byToken.closed).toEqual({ code: 1008, reason: 'Token revoked' });
    expect(Date.now() - opened).toBeLessThan(4000);

    const byCookie = await openLiveSocket(b, baseB, { cookie: user.cookie });
    opened = Date.now();
    expect((await admin.del(`/api/users/${user.userId}`)).statusCode).toBe(204);
    expect(await byCookie.closed).toEqual({ code: 1008, reason: 'User no longer exists' });
    expect(Date.now() - opened).toBeLessThan(4000);
  });
});
