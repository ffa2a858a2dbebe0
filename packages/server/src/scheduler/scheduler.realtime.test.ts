import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { createHarness, type Harness } from '../../test/support/harness';
import { rows } from '../../test/support/scheduler-rows';
import { unavailableEngine } from '../tasks/types';
import type { SchedulerHandle } from './scheduler';

/**
 * The one test on the real clock: the app's own scheduler, a `* * * * *` schedule, and the real task engine when
 * it is wired (otherwise a recording stand-in). Runs on SQLite only; the clock-driven tests cover the dialects.
 */
describe('scheduler on the real clock', () => {
  let h: Harness;
  let dir: string;

  let realEngine = false;

  beforeAll(async () => {
    h = await createHarness(testDialects()[0]!);
    realEngine = h.deps.tasks !== unavailableEngine;
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

  it('a * * * * * schedule creates a task within 65 s; deleting it stops further runs', async () => {
    const r = rows(h.deps.db, h.deps.dialect);
    const projectId = await r.project();
    const repositoryId = await r.repository(projectId, dir, 'main');
    const templateId = await r.template(projectId, {
      app: 'bash',
      playbook: 'run.sh',
      repository_id: repositoryId,
    });
    const scheduleId = await r.schedule(projectId, templateId, { cron_format: '* * * * *' });
    await h.deps.scheduler.refresh();

    const count = async () =>
      (await h.deps.db.selectFrom('task').select('id').where('schedule_id', '=', scheduleId).execute())
        .length;
    const started = Date.now();
    while ((await count()) === 0 && Date.now() - started < 65_000)
      await new Promise((r) => setTimeout(r, 250));
    expect(await count()).toBeGreaterThanOrEqual(1);
    expect(Date.now() - started).toBeLessThan(65_000);

    await h.deps.db.deleteFrom('schedule').where('id', '=', scheduleId).execute();
    await h.deps.scheduler.refresh();
    expect((h.deps.scheduler as SchedulerHandle).planned().size).toBe(0);
    const before = await count();
    // Wait past the next minute boundary: no further task may appear.
    const msToNextMinute = 60_000 - (Date.now() % 60_000);
    await new Promise((r) => setTimeout(r, msToNextMinute + 3_000));
    expect(await count()).toBe(before);

    if (realEngine) {
      // The real engine ran the scheduled task to the end.
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
    }
  }, 140_000);
});
