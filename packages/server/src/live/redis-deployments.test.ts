import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedDatabase, testDialects } from '../../test/support/dialects';
import { createHarness, type Harness } from '../../test/support/harness';
import { waitFor } from '../../test/support/task-fixtures';
import type { LiveMessage } from './bus';
import { redisBridgeOf } from './redis';

const REDIS_URL = 'redis://127.0.0.1:6379';

const update = (task: number): LiveMessage => ({
  type: 'update',
  project_id: 1,
  template_id: 1,
  task_id: task,
  status: 'running',
  start: null,
  end: null,
  version: null,
});

/** The task ids of the live events a server's bus emitted. */
function heard(h: Harness) {
  const ids: number[] = [];
  h.deps.bus.on('live', (m) => {
    if (m.type === 'update') ids.push(m.task_id);
  });
  return ids;
}

const bridgeReady = (h: Harness) =>
  waitFor(async () => redisBridgeOf(h.deps.bus)?.ready() || undefined, 10_000);

/**
 * Deployments sharing one Redis (each with its own database) keep their live events — task output, logouts —
 * apart: each uses the channel named by the deployment id its database holds, or by SIGNALBOX_REDIS_PREFIX.
 */
describe.each(testDialects())('deployments sharing one Redis on $name', (dialect) => {
  const secretKey = randomBytes(32).toString('base64');
  let shared: Awaited<ReturnType<typeof sharedDatabase>>;
  let first: Harness;
  let second: Harness;
  let other: Harness;
  beforeAll(async () => {
    shared = await sharedDatabase(dialect, 'sb-redis-deployment-');
    first = await createHarness(shared.dialect, { redisUrl: REDIS_URL, secretKey });
    second = await createHarness(shared.dialect, { redisUrl: REDIS_URL, secretKey });
    other = await createHarness(dialect, { redisUrl: REDIS_URL });
    await Promise.all([first, second, other].map(bridgeReady));
  });
  afterAll(async () => {
    await other?.close();
    await second?.close();
    await first?.close();
    await shared?.drop();
  });

  it('names each channel by its database deployment id, shared by the servers of one database', () => {
    const channel = (h: Harness) => redisBridgeOf(h.deps.bus)!.channel;
    expect(channel(first)).toMatch(/^signalbox:[0-9a-f]{16}:live$/);
    expect(channel(second)).toBe(channel(first));
    expect(channel(other)).toMatch(/^signalbox:[0-9a-f]{16}:live$/);
    expect(channel(other)).not.toBe(channel(first));
  });

  it("delivers events to the servers of the same deployment and never to another deployment's", async () => {
    const atSecond = heard(second);
    const atOther = heard(other);
    first.deps.bus.publish(update(101));
    other.deps.bus.publish(update(201));
    // Each deployment's own message arrives; a marker sent after it shows the other's has had time to.
    await waitFor(async () => atSecond.includes(101) || undefined, 10_000);
    first.deps.bus.publish(update(102));
    other.deps.bus.publish(update(202));
    await waitFor(async () => (atSecond.includes(102) && atOther.includes(202)) || undefined, 10_000);
    expect(atSecond).toEqual([101, 102]);
    expect(atOther).toEqual([201, 202]);
  });

  it('uses SIGNALBOX_REDIS_PREFIX as the name when set, so two databases can be one deployment', async () => {
    const prefix = `test-${randomBytes(6).toString('hex')}`;
    const x = await createHarness(dialect, { redisUrl: REDIS_URL, redisPrefix: prefix });
    const y = await createHarness(dialect, { redisUrl: REDIS_URL, redisPrefix: prefix });
    try {
      await Promise.all([x, y].map(bridgeReady));
      expect(redisBridgeOf(x.deps.bus)!.channel).toBe(`signalbox:${prefix}:live`);
      const atY = heard(y);
      x.deps.bus.publish(update(301));
      await waitFor(async () => atY.includes(301) || undefined, 10_000);
    } finally {
      await y.close();
      await x.close();
    }
  });
});
