import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { FakeRunner, type RegisteredRunner, registerRunner } from '../../../test/support/fake-runner';
import type { Client, Harness } from '../../../test/support/harness';
import { refuseOutputStartingWith } from '../../../test/support/refused-output';
import { insertTemplate, outputOf, waitFor, waitForStatus } from '../../../test/support/task-fixtures';
import { harnessWithProject } from '../../../test/support/task-runs';
import { lostOutputMessage } from '../../tasks/run/job';

/** What the server does with a runner's output: stores it whole, or ends the task saying what is missing. */
describe.each(testDialects())('runner output on $name', (dialect) => {
  const lostTimeoutSeconds = 5;
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let base: string;
  const open: FakeRunner[] = [];
  let tagCount = 0;

  beforeAll(async () => {
    ({ h, owner, projectId } = await harnessWithProject(dialect, {
      runnerRegistrationToken: 'global-registration-secret',
      runnerLostTimeout: lostTimeoutSeconds,
    }));
    base = (await h.app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http/, 'ws');
    await refuseOutputStartingWith(h.deps, 'refused');
  });
  afterAll(async () => h?.close());
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
  });

  /** A registered runner with a tag of its own, connected, and a task of that tag it has been given. */
  async function runnerWithTask() {
    const tag = `output${++tagCount}`;
    const runner: RegisteredRunner = await registerRunner(h, { tags: [tag], name: tag });
    const { fake } = await FakeRunner.connect(base, runner);
    open.push(fake);
    const templateId = await insertTemplate(h.deps, projectId, { runner_tag: tag });
    const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: templateId });
    expect(res.statusCode).toBe(201);
    const taskId = res.json().id as number;
    await fake.next('job', (m) => m.task_id === taskId);
    fake.send({ type: 'status', task_id: taskId, status: 'running' });
    await waitForStatus(h.deps, taskId, ['running']);
    return { fake, taskId };
  }

  it('takes any message of a runner as a sign of life: one streaming output without heartbeats is not lost', async () => {
    const { fake, taskId } = await runnerWithTask();
    // Output only, never a heartbeat, for twice the lost timeout.
    const until = Date.now() + 2 * lostTimeoutSeconds * 1000;
    let seq = 0;
    while (Date.now() < until) {
      fake.output(taskId, ++seq, [`line ${seq}`]);
      await fake.next('ack', (m) => m.task_id === taskId && m.seq === seq);
      const row = await h.deps.db
        .selectFrom('task')
        .select('status')
        .where('id', '=', taskId)
        .executeTakeFirst();
      expect(row?.status).toBe('running');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    fake.send({ type: 'finished', task_id: taskId, status: 'success', last_seq: seq });
    await fake.next('done', (m) => m.task_id === taskId);
    expect((await waitForStatus(h.deps, taskId, ['success', 'error'])).status).toBe('success');
    expect(await outputOf(h.deps, taskId)).toEqual(Array.from({ length: seq }, (_, i) => `line ${i + 1}`));
  }, 60_000);

  it('passes over a batch the database refuses and ends the task as error, saying how many lines are missing', async () => {
    const { fake, taskId } = await runnerWithTask();
    fake.output(taskId, 1, ['first']);
    fake.output(taskId, 2, ['refused 1', 'refused 2']);
    fake.output(taskId, 3, ['last']);
    await fake.next('ack', (m) => m.task_id === taskId && m.seq === 3);
    fake.send({ type: 'finished', task_id: taskId, status: 'success', last_seq: 3 });
    await fake.next('done', (m) => m.task_id === taskId);
    const task = await waitForStatus(h.deps, taskId, ['success', 'error']);
    expect(task).toMatchObject({ status: 'error', message: lostOutputMessage(2) });
    expect(await outputOf(h.deps, taskId)).toEqual(['first', 'last', lostOutputMessage(2)]);
    // The failure is logged without the lines' text (a driver's error carries its statement).
    const log = h.logLines.join('\n');
    expect(log).toContain('storing runner output failed');
    expect(log).not.toContain('refused 1');
    // The connection stayed: the batch was not sent again and again.
    expect(fake.ws.readyState).toBe(fake.ws.OPEN);
  });

  it('numbers the published lines by their place in the log across batches', async () => {
    const { fake, taskId } = await runnerWithTask();
    const published: number[] = [];
    const listener = (batch: { task_id: number; lines: { line: number }[] }) => {
      if (batch.task_id === taskId) published.push(...batch.lines.map((l) => l.line));
    };
    h.deps.bus.on('logs', listener);
    try {
      for (let seq = 1; seq <= 5; seq++)
        fake.output(
          taskId,
          seq,
          Array.from({ length: 300 }, (_, i) => `batch ${seq} line ${i}`),
        );
      await fake.next('ack', (m) => m.task_id === taskId && m.seq === 5);
      await waitFor(async () => published.length === 1500, 10_000, 'every line to be published');
    } finally {
      h.deps.bus.off('logs', listener);
    }
    expect(published).toEqual(Array.from({ length: 1500 }, (_, i) => i + 1));
    fake.send({ type: 'finished', task_id: taskId, status: 'success', last_seq: 5 });
    await fake.next('done', (m) => m.task_id === taskId);
  });
});
