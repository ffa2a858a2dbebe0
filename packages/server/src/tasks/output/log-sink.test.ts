import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { rows } from '../../../test/support/scheduler-rows';
import {
  gitRepo,
  insertRepository,
  insertTemplate,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { now } from '../../db/values';
import type { TaskLogBatch } from '../../live/bus';
import { LogSink } from './log-sink';
import { insertOutput, type OutputWriter } from './output.store';

describe.each(testDialects())('task output on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    owner = await h.userClient({ can_create_project: true });
    ({ projectId } = await h.projectWithTeam(owner));
  });
  afterAll(async () => h?.close());

  it('stores a NUL in a line as U+FFFD instead of dropping it, and reads it back', async () => {
    const repoId = await insertRepository(h.deps, projectId, {
      git_url: gitRepo({ 'nul.sh': "printf 'before\\0after\\n'\nprintf '\\0\\0\\n'\necho plain\n" }),
    });
    const tpl = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook: 'nul.sh' });
    const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: tpl });
    const id = res.json().id as number;
    expect((await waitForStatus(h.deps, id, ['success', 'error'])).status).toBe('success');
    const output = await owner.get(`/api/project/${projectId}/tasks/${id}/output`);
    expect(output.statusCode).toBe(200);
    const lines = (output.json() as { output: string }[]).map((r) => r.output);
    const at = lines.indexOf('before\uFFFDafter');
    expect(at, lines.join('\n')).toBeGreaterThan(-1);
    expect(lines.slice(at, at + 3)).toEqual(['before\uFFFDafter', '\uFFFD\uFFFD', 'plain']);
  });

  it('stores a line after a quiet spell at once, and trickling lines at most twice per 100 ms', async () => {
    const make = rows(h.deps.db, h.deps.dialect);
    const taskId = await make.task(projectId, await make.template(projectId), {
      status: 'running',
      start: now(),
    });
    const writes: string[][] = [];
    const output: Pick<OutputWriter, 'write'> = {
      write: async (batch) => {
        writes.push(batch.map((row) => row.output));
      },
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const sink = new LogSink({ ...h.deps, output }, projectId, taskId);
      const settled = async () => {
        for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      };
      sink.line('first');
      // The first store also counts the task's stored lines in the database: wait for its answer (the clock is
      // fake, Date is not).
      const deadline = Date.now() + 10_000;
      while (writes.length === 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
      // Not held for a timer: a task's first line is stored (and published) as soon as it comes.
      expect(writes).toEqual([['first']]);
      // Nor the next one (its command's first line, after the opening ones).
      await vi.advanceTimersByTimeAsync(20);
      sink.line('second');
      await settled();
      expect(writes).toEqual([['first'], ['second']]);
      // Two flushes in this spell: what trickles in now waits for its end.
      sink.line('third');
      sink.line('fourth');
      await vi.advanceTimersByTimeAsync(50);
      await settled();
      expect(writes).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(30);
      await settled();
      expect(writes).toEqual([['first'], ['second'], ['third', 'fourth']]);
      // A quiet spell longer than the interval: the next line goes at once again.
      await vi.advanceTimersByTimeAsync(150);
      sink.line('after a pause');
      await settled();
      expect(writes.at(-1)).toEqual(['after a pause']);
      await sink.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('numbers each published line by its position in the log, after the lines the task already had', async () => {
    const make = rows(h.deps.db, h.deps.dialect);
    const taskId = await make.task(projectId, await make.template(projectId), {
      status: 'running',
      start: now(),
    });
    const time = now();
    await insertOutput(h.deps.db, h.deps.dialect, [
      { task_id: taskId, time, output: 'kept 1' },
      { task_id: taskId, time, output: 'kept 2' },
    ]);
    const published: { output: string; line: number }[] = [];
    const listener = (batch: TaskLogBatch) => {
      if (batch.task_id === taskId) published.push(...batch.lines);
    };
    h.deps.bus.on('logs', listener);
    try {
      const output: Pick<OutputWriter, 'write'> = {
        write: (batch) => insertOutput(h.deps.db, h.deps.dialect, batch),
      };
      const sink = new LogSink({ ...h.deps, output }, projectId, taskId);
      for (let i = 1; i <= 1200; i++) sink.line(`new ${i}`);
      await sink.close();
      const again = new LogSink({ ...h.deps, output }, projectId, taskId);
      again.line('last');
      await again.close();
    } finally {
      h.deps.bus.off('logs', listener);
    }
    expect(published).toHaveLength(1201);
    expect(published.findIndex((l, i) => l.line !== i + 3)).toBe(-1);
    expect(published.at(-1)).toMatchObject({ output: 'last', line: 1203 });
    // The stored pages give every line the same number.
    const page = (await owner.get(`/api/project/${projectId}/tasks/${taskId}/output?limit=10000`)).json() as {
      output: string;
      line: number;
    }[];
    expect(page.map((l) => [l.line, l.output])).toEqual([
      [1, 'kept 1'],
      [2, 'kept 2'],
      ...published.map((l) => [l.line, l.output]),
    ]);
  });
});
