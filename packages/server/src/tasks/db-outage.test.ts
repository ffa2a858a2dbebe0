import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { behindRelay, type DbOutage } from '../../test/support/db-relay';
import { type TestDialect, testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import { insertTemplate, orNothing, outputOf, waitFor } from '../../test/support/task-fixtures';
import { harnessWithProject, insertGitRepository } from '../../test/support/task-runs';
import { sharedTempDir } from '../../test/support/task-shared';
import { dbRetry } from '../db/retry';
import { runnerTimings, unsavedMessage } from './queue/instances';

const finished = ['success', 'error', 'stopped'];

/**
 * A database that cannot be reached for a while (a restart, a failover): the app answers 503 for what needs the
 * database and 200 for what does not, a running task keeps every line and ends once the database is back, and a
 * run that cannot save its end before the retry cap still ends (the engine's sweep ends it).
 */
function outageOn(name: TestDialect['name']) {
  const base = testDialects().find((d) => d.name === name) as TestDialect;
  describe.runIf(base)(`database unreachable for a while on ${name}`, () => {
    let h: Harness;
    let relay: Awaited<ReturnType<typeof behindRelay>>;
    let outage: DbOutage;
    let owner: Client;
    let projectId: number;
    let repoId: number;
    const gate = sharedTempDir('sb-gate-');
    const saved = { ...dbRetry };
    const timings = { ...runnerTimings };

    beforeAll(async () => {
      // A short cap and a frequent sweep, so the give-up path shows within a test.
      dbRetry.capMs = 1500;
      runnerTimings.sweepMs = 300;
      relay = await behindRelay(base);
      outage = relay.outage;
      ({ h, owner, projectId } = await harnessWithProject(relay.dialect, { maxParallelTasks: 10 }));
      const files = {
        // Prints numbered lines until told to stop, then a last one.
        'until.sh':
          'i=0\nwhile [ ! -e "$1" ]; do i=$((i+1)); echo "line $i"; sleep 0.01; done\necho "end $i"\n: > "$1.ended"\n',
        // Waits for the signal, then ends at once.
        'wait.sh': 'echo started\nwhile [ ! -e "$1" ]; do sleep 0.02; done\n',
        // Waits for the signal, then says one more line and ends.
        'wait-say.sh': 'echo started\nwhile [ ! -e "$1" ]; do sleep 0.02; done\necho leaving\n',
      };
      ({ id: repoId } = await insertGitRepository(h.deps, projectId, files, { name: 'scripts' }));
    });
    afterEach(() => outage.up());
    afterAll(async () => {
      outage?.up();
      await h?.close();
      await relay?.close();
      Object.assign(dbRetry, saved);
      Object.assign(runnerTimings, timings);
      rmSync(gate, { recursive: true, force: true });
    });

    async function startTask(playbook: string, signal: string) {
      const tpl = await insertTemplate(h.deps, projectId, {
        repository_id: repoId,
        playbook,
        arguments: JSON.stringify([signal]),
        allow_parallel_tasks: 1,
      });
      const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: tpl });
      expect(res.statusCode).toBe(201);
      return res.json().id as number;
    }
    const taskRow = (id: number) =>
      h.deps.db.selectFrom('task').selectAll().where('id', '=', id).executeTakeFirst();
    /** Waits until the task has finished (success, error or stopped); reads that meet the outage are "not yet". */
    const waitForFinished = (id: number, timeoutMs: number, what: string) =>
      waitFor(
        orNothing(async () => {
          const t = await taskRow(id);
          return t && finished.includes(t.status) ? t : undefined;
        }),
        timeoutMs,
        what,
      );

    it('keeps every line of a running task across an outage and answers 503, not 500, meanwhile', async () => {
      dbRetry.capMs = 60_000;
      const signal = join(gate, 'lines');
      const id = await startTask('until.sh', signal);
      await waitFor(
        orNothing(async () => (await outputOf(h.deps, id)).length >= 20),
        20_000,
        'first lines',
      );

      outage.down();
      // Requests that need the database say so; the rest keep working.
      const during = await owner.get('/api/projects');
      expect(during.statusCode).toBe(503);
      expect(during.json()).toMatchObject({ error: 'Database unavailable, try again' });
      // (Signed-in requests look up their session first, so only an anonymous ping needs no database.)
      expect((await h.anonymous().get('/api/ping')).statusCode).toBe(200);
      // The task keeps printing while nothing can be stored: wait until storing its lines has met the outage.
      await waitFor(
        async () =>
          h.logLines.some((l) => l.includes('storing task output: database unavailable')) || undefined,
        20_000,
        'a failed store of output',
      );
      writeFileSync(signal, '');
      // The script printed its last line while the database was still away.
      await waitFor(async () => existsSync(`${signal}.ended`) || undefined, 20_000, 'the script to end');
      outage.up();

      const done = await waitForFinished(id, 30_000, 'the task to end');
      expect(done.status).toBe('success');
      expect((await owner.get('/api/projects')).statusCode).toBe(200);
      const out = await outputOf(h.deps, id);
      const last = out.find((l) => l.startsWith('end '));
      expect(last, out.slice(-5).join('\n')).toBeDefined();
      const count = Number(last!.split(' ')[1]);
      // Every line, once, in order: nothing dropped while the database was away, nothing stored twice.
      expect(out.filter((l) => l.startsWith('line '))).toEqual(
        Array.from({ length: count }, (_, i) => `line ${i + 1}`),
      );
      expect(h.logLines.some((l) => l.includes('storing task output: database unavailable'))).toBe(true);
    });

    it('stores a batch of lines once when its commit went through but the answer was lost', async () => {
      dbRetry.capMs = 60_000;
      const signal = join(gate, 'commit');
      const id = await startTask('until.sh', signal);
      await waitFor(
        orNothing(async () => (await outputOf(h.deps, id)).length >= 20),
        20_000,
        'first lines',
      );
      // The next output batch's commit reaches the server; its answer does not reach the app.
      await outage.loseAnswerTo('commit');
      writeFileSync(signal, '');
      const done = await waitForFinished(id, 30_000, 'the task to end');
      expect(done.status).toBe('success');
      const out = await outputOf(h.deps, id);
      const count = Number(out.find((l) => l.startsWith('end '))!.split(' ')[1]);
      expect(out.filter((l) => l.startsWith('line '))).toEqual(
        Array.from({ length: count }, (_, i) => `line ${i + 1}`),
      );
      expect(h.logLines.some((l) => l.includes('storing task output: the database answers again'))).toBe(
        true,
      );
    });

    it('counts a final status as saved when the update went through but the answer was lost', async () => {
      dbRetry.capMs = 60_000;
      const published: string[] = [];
      let id = 0;
      h.deps.bus.on('live', (m) => {
        if (m.type === 'update' && m.task_id === id) published.push(m.status);
      });
      const signal = join(gate, 'status');
      id = await startTask('wait.sh', signal);
      await waitFor(
        orNothing(async () => (await taskRow(id))?.status === 'running'),
        20_000,
        'running',
      );
      const q = name === 'mysql' ? '`' : '"';
      // The run's next task update is its final status: it reaches the server, its answer does not.
      const lost = outage.loseAnswerTo(`update ${q}task${q} set`);
      writeFileSync(signal, '');
      await lost;
      await waitFor(async () => published.includes('success'), 20_000, 'the final status to be published');
      expect((await taskRow(id))?.status).toBe('success');
    });

    it('ends a task whose end could not be saved before the retry cap, once the database is back', async () => {
      dbRetry.capMs = 1500;
      const signal = join(gate, 'end');
      const id = await startTask('wait-say.sh', signal);
      await waitFor(
        orNothing(async () => (await taskRow(id))?.status === 'running'),
        20_000,
        'running',
      );
      // The line before the outage is stored; the one after it cannot be.
      await waitFor(
        orNothing(async () => (await outputOf(h.deps, id)).includes('started')),
        20_000,
        'started',
      );

      outage.down();
      writeFileSync(signal, '');
      // The run gives up on its final status and leaves the engine…
      await waitFor(
        async () => h.logLines.some((l) => l.includes('task run failed') && l.includes(`"taskId":${id}`)),
        20_000,
        'the run to give up',
      );
      outage.up();
      // …and the next sweep ends the task instead of leaving it running.
      const done = await waitForFinished(id, 20_000, 'the sweep to end the task');
      expect(done).toMatchObject({ status: 'error', message: unsavedMessage });
      expect(done.end).toBeTruthy();
      expect(existsSync(join(h.dataDir, 'tasks', String(id)))).toBe(false);
      // (Lines still unstored when the run gave up are lost and logged; the sweep's own line follows the status.)
      await waitFor(
        async () => (await outputOf(h.deps, id)).includes(unsavedMessage),
        10_000,
        'the sweep line',
      );
      expect(await outputOf(h.deps, id)).not.toContain('leaving');
      expect(
        h.logLines.some((l) => l.includes('storing task output failed') && l.includes(`"taskId":${id}`)),
      ).toBe(true);
    });
  });
}

// Only where the servers are configured (CI sets SIGNALBOX_TEST_PG_URL and SIGNALBOX_TEST_MYSQL_URL).
outageOn('postgres');
outageOn('mysql');
