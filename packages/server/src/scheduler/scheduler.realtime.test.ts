import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { createHarness, type Harness } from '../../test/support/harness';
import { rows } from '../../test/support/scheduler-rows';
import { waitFor } from '../../test/support/task-fixtures';
import type { SchedulerHandle } from './scheduler';

/**
 * The one test on the real clock: the app's own scheduler, a schedule written straight to the database, and the
 * real task engine. Runs on SQLite only; the clock-driven tests cover the dialects. The schedule ticks every 5
 * seconds (croner's seconds field, which the API refuses but the scheduler runs as any cron): the same timers,
 * claims and task starts as a minute's cron, without waiting for minute boundaries.
 */
const EVERY_5_SECONDS = '*/5 * * * * *';
describe('scheduler on the real clock', () => {
  let h: Harness;
  let dir: string;

  beforeAll(async () => {
    h = await createHarness(testDialects()[0]!);
    dir = mkdtempSync(join(tmpdir(), 'signalbox-realtime-'));
    writeFileSync(join(dir, 'run.sh'), 'echo scheduled run\n');
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    execFileSync(
      'git',
      ['-c', 'user.name=T', '-c', 'user.email=t@example.test', 'commit', '-q', '--allow-empty', '-m', 'init'],
      { cwd: dir },
    );
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a schedule creates a task at its next tick; deleting it stops further runs', async () => {
    const r = rows(h.deps.db, h.deps.dialect);
    const projectId = await r.project();
    const repositoryId = await r.repository(projectId, dir, 'main');
    const templateId = await r.template(projectId, {
      app: 'bash',
      playbook: 'run.sh',
      repository_id: repositoryId,
    });
    const scheduleId = await r.schedule(projectId, templateId, { cron_format: EVERY_5_SECONDS });
    await h.deps.scheduler.refresh();

    const tasksOf = (id: number) =>
      h.deps.db.selectFrom('task').select(['id', 'status']).where('schedule_id', '=', id).execute();
    const count = async () => (await tasksOf(scheduleId)).length;
    // The next tick, and a few seconds for the scheduler to act on it (the wait is the rule itself).
    await waitFor(async () => (await count()) >= 1 || undefined, 30_000, 'the first scheduled task');

    await h.deps.db.deleteFrom('schedule').where('id', '=', scheduleId).execute();
    // A second schedule of the same cron marks the next tick: once its task has run, the scheduler has acted on
    // the tick the deleted schedule would have fired at (no guess at how long that takes on this machine).
    const witnessId = await r.schedule(projectId, templateId, { cron_format: EVERY_5_SECONDS });
    await h.deps.scheduler.refresh();
    expect([...(h.deps.scheduler as SchedulerHandle).planned().keys()]).toEqual([witnessId]);
    const before = await count();
    await waitFor(
      async () => (await tasksOf(witnessId)).some((t) => t.status === 'success') || undefined,
      30_000,
      "the witness schedule's task to run",
    );
    expect(await count()).toBe(before);

    // The engine ran the scheduled task to the end.
    const task = await h.deps.db
      .selectFrom('task')
      .selectAll()
      .where('schedule_id', '=', scheduleId)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    expect(task.status).toBe('success');
    const lines = await h.deps.db
      .selectFrom('task_output')
      .select('output')
      .where('task_id', '=', task.id)
      .execute();
    expect(lines.map((l) => l.output)).toContain('scheduled run');
  }, 90_000);
});
