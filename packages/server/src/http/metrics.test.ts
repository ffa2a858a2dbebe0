import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { createHarness, type Harness } from '../../test/support/harness';
import { ManualClock } from '../../test/support/manual-clock';
import { recordingStarter, rows } from '../../test/support/scheduler-rows';
import { insertTemplate, waitFor } from '../../test/support/task-fixtures';
import { insertGitRepository, runTask, useHarnessWithProject } from '../../test/support/task-runs';
import { createScheduler } from '../scheduler/scheduler';

type Labels = Record<string, string>;

/** The samples of a Prometheus text exposition: name, labels, value. */
function samples(text: string) {
  const out: { name: string; labels: Labels; value: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Labels = {};
    for (const [, key, value] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[key as string] = value as string;
    out.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of the samples named `name` that carry every label in `labels` (0 when there are none). */
function value(text: string, name: string, labels: Labels = {}) {
  return samples(text)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** A manual clock whose timers run `lateMs` after their time, as they do when the event loop was blocked. */
class LateClock extends ManualClock {
  lateMs = 0;
  override now() {
    return new Date(super.now().getTime() + this.lateMs);
  }
}

describe.each(testDialects())('metrics on $name', (dialect) => {
  const p = useHarnessWithProject(dialect);

  const scrape = async () => {
    const res = await p.h.anonymous().get('/api/metrics');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.body;
  };

  it('counts a bash task run through the API: started, finished, durations, output lines, the request', async () => {
    const before = await scrape();
    const repo = await insertGitRepository(p.h.deps, p.projectId, {
      'run.sh': 'echo one\necho two\necho three\n',
    });
    const templateId = await insertTemplate(p.h.deps, p.projectId, {
      repository_id: repo.id,
      playbook: 'run.sh',
    });
    const { done, out } = await runTask(p.h, p.owner, p.projectId, { template_id: templateId });
    expect(done.status).toBe('success');

    const finished = { app: 'bash', status: 'success' };
    const moved = (name: string, labels: Labels, text: string) =>
      value(text, name, labels) - value(before, name, labels);
    // The run counts itself once its final status is saved and read back, and leaves the running gauge when its
    // clean-up (output flush, task folder) is done, a moment later: wait for both, not for a fixed time.
    const after = await waitFor(
      async () => {
        const text = await scrape();
        const settled =
          moved('signalbox_tasks_finished_total', finished, text) > 0 &&
          value(text, 'signalbox_tasks_running') === 0;
        return settled ? text : undefined;
      },
      30_000,
      'the finished task to be counted and no longer running',
    );
    expect(moved('signalbox_tasks_finished_total', finished, after)).toBe(1);
    expect(moved('signalbox_tasks_started_total', { app: 'bash' }, after)).toBe(1);
    expect(moved('signalbox_task_duration_seconds_count', { app: 'bash' }, after)).toBe(1);
    expect(moved('signalbox_task_duration_seconds_sum', { app: 'bash' }, after)).toBeGreaterThan(0);
    expect(moved('signalbox_task_queue_wait_seconds_count', { app: 'bash' }, after)).toBe(1);
    expect(out).toEqual(expect.arrayContaining(['one', 'two', 'three']));
    expect(moved('signalbox_task_output_lines_total', {}, after)).toBe(out.length);
    expect(value(after, 'signalbox_tasks_running')).toBe(0);
    expect(value(after, 'signalbox_tasks_waiting')).toBe(0);

    // The request that started the task, by its route pattern: no series carries the project's own path.
    const started = { method: 'POST', route: '/api/project/:project_id/tasks', status_code: '201' };
    expect(moved('signalbox_http_request_duration_seconds_count', started, after)).toBe(1);
    expect(after).not.toContain(`/api/project/${p.projectId}/`);
    // Process and event-loop metrics come with every scrape.
    expect(after).toMatch(/^process_cpu_seconds_total \d/m);
    expect(after).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
  });

  it('counts webhook requests by result', async () => {
    const before = await scrape();
    const res = await p.h.anonymous().request('POST', '/api/integrations/no-such-alias', '{}');
    expect(res.statusCode).toBe(404);
    const after = await scrape();
    const notFound = { result: 'not_found' };
    expect(value(after, 'signalbox_webhook_deliveries_total', notFound)).toBe(
      value(before, 'signalbox_webhook_deliveries_total', notFound) + 1,
    );
    expect(after).not.toContain('no-such-alias');
  });

  it('counts schedule ticks fired, and the ticks a late timer skipped', async () => {
    const r = rows(p.h.deps.db, p.h.deps.dialect);
    const templateId = await r.template(p.projectId);
    await r.schedule(p.projectId, templateId, { cron_format: '*/5 * * * *' });
    const starter = recordingStarter(p.h.deps.db, p.h.deps.dialect);
    const clock = new LateClock('2030-01-01T10:02:30Z');
    const scheduler = createScheduler({ ...p.h.deps, startTask: starter.start }, { clock });
    try {
      const before = await scrape();
      await scheduler.start();
      clock.advanceTo('2030-01-01T10:05:00Z');
      await scheduler.idle();
      expect(starter.calls).toHaveLength(1);
      const onTime = await scrape();
      expect(value(onTime, 'signalbox_scheduler_ticks_fired_total')).toBe(
        value(before, 'signalbox_scheduler_ticks_fired_total') + 1,
      );
      expect(value(onTime, 'signalbox_scheduler_ticks_missed_total')).toBe(
        value(before, 'signalbox_scheduler_ticks_missed_total'),
      );

      // The 10:10 timer runs at 10:21: it fires once, and 10:15 and 10:20 are skipped.
      clock.lateMs = 11 * 60_000;
      clock.advanceTo('2030-01-01T10:10:00Z');
      await scheduler.idle();
      const late = await scrape();
      expect(value(late, 'signalbox_scheduler_ticks_fired_total')).toBe(
        value(before, 'signalbox_scheduler_ticks_fired_total') + 2,
      );
      expect(value(late, 'signalbox_scheduler_ticks_missed_total')).toBe(
        value(before, 'signalbox_scheduler_ticks_missed_total') + 2,
      );
    } finally {
      await scheduler.close();
    }
  });
});

describe.each(testDialects())('the metrics token on $name', (dialect) => {
  const TOKEN = 'metrics-scrape-token-7f3a';
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness(dialect, { metricsToken: TOKEN });
  });
  afterAll(async () => h?.close());

  const scrapeWith = (headers: Record<string, string>) =>
    h.anonymous().request('GET', '/api/metrics', undefined, headers);

  it('answers 401 without the token or with a wrong one, and the metrics with it', async () => {
    const without = await scrapeWith({});
    expect(without.statusCode).toBe(401);
    expect(without.json()).toMatchObject({ error: 'A valid metrics token is required' });
    expect((await scrapeWith({ authorization: `Bearer ${TOKEN}x` })).statusCode).toBe(401);
    expect((await scrapeWith({ authorization: 'Bearer ' })).statusCode).toBe(401);
    expect((await scrapeWith({ authorization: TOKEN })).statusCode).toBe(401);

    const signedIn = await h.userClient({ admin: true });
    expect((await signedIn.get('/api/metrics')).statusCode).toBe(401);

    const ok = await scrapeWith({ authorization: `Bearer ${TOKEN}` });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('# TYPE signalbox_tasks_started_total counter');
    expect(ok.body).not.toContain(TOKEN);
  });
});
