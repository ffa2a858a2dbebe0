import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type TestDialect, testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import { killConnections } from '../../test/support/kill-connections';
import { postForId, serverChild, serverDb } from '../../test/support/server-child';
import { cookieApi, localUrl, serverProcessEnv } from '../../test/support/server-process';
import { insertTemplate, orNothing, outputOf, waitFor } from '../../test/support/task-fixtures';
import { ENDED, harnessWithProject, insertGitRepository } from '../../test/support/task-runs';

const LINES = 150;
const ROUNDS = 10;
/** Prints numbered lines for about two seconds. */
const script = `for i in $(seq 1 ${LINES}); do echo "line $i"; sleep 0.01; done\n`;
const numbered = Array.from({ length: LINES }, (_, i) => `line ${i + 1}`);

/** Errors that reached the process without a handler (vitest also fails the file on one). */
const escaped: unknown[] = [];
const onEscape = (err: unknown) => void escaped.push(err);

function lostConnections(name: TestDialect['name']) {
  const dialect = testDialects().find((d) => d.name === name) as TestDialect;
  describe.runIf(dialect)(`database connections lost mid-run on ${name}`, () => {
    let h: Harness;
    let owner: Client;
    let projectId: number;
    let templateId: number;

    beforeAll(async () => {
      process.on('uncaughtException', onEscape);
      process.on('unhandledRejection', onEscape);
      ({ h, owner, projectId } = await harnessWithProject(dialect, { maxParallelTasks: 10 }));
      const { id: repoId } = await insertGitRepository(
        h.deps,
        projectId,
        { 'count.sh': script },
        { name: 'counter' },
      );
      templateId = await insertTemplate(h.deps, projectId, { repository_id: repoId, playbook: 'count.sh' });
    });
    afterAll(async () => {
      await h?.close();
      process.off('uncaughtException', onEscape);
      process.off('unhandledRejection', onEscape);
    });
    afterEach(() => {
      expect(escaped).toEqual([]);
    });

    /** Keeps asking a DB-free and a DB-backed route until stopped; collects every status code. */
    function pollRoutes() {
      const codes: number[] = [];
      let running = true;
      const loop = (async () => {
        while (running) {
          codes.push((await owner.get('/api/ping')).statusCode);
          codes.push((await owner.get('/api/projects')).statusCode);
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      return {
        codes,
        async stop() {
          running = false;
          await loop;
          return codes;
        },
      };
    }

    it(`ends every task, keeps every line and keeps serving across ${ROUNDS} rounds of killed connections`, async () => {
      for (let round = 1; round <= ROUNDS; round++) {
        const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: templateId });
        expect(res.statusCode).toBe(201);
        const taskId = res.json().id as number;
        // Mid-run: the task prints and its lines are being stored.
        await waitFor(
          orNothing(
            async () => (await outputOf(h.deps, taskId)).filter((l) => l.startsWith('line ')).length >= 20,
          ),
          20_000,
          `round ${round}: the task's first lines`,
        );
        const poller = pollRoutes();
        // Odd rounds end the connections at once (mostly idle ones), even rounds while the app holds one.
        const ended = await killConnections(h.config.dbUrl, { whileHeldMs: round % 2 ? 0 : 5000 });
        expect(ended, `round ${round}: connections ended`).toBeGreaterThan(0);
        const done = await waitFor(
          orNothing(async () => {
            const t = await h.deps.db
              .selectFrom('task')
              .selectAll()
              .where('id', '=', taskId)
              .executeTakeFirst();
            return t && ENDED.includes(t.status) ? t : undefined;
          }),
          60_000,
          `round ${round}: the task to end`,
        );
        // After the loss too.
        await waitFor(async () => poller.codes.length >= 10, 10_000, 'requests after the loss');
        const codes = await poller.stop();
        expect(
          codes.filter((c) => c >= 500),
          `round ${round}: server errors; log: ${h.logLines.filter((l) => l.includes('request failed')).join('\n')}`,
        ).toEqual([]);
        expect((await owner.get('/api/projects')).statusCode).toBe(200);
        const out = await waitFor(orNothing(() => outputOf(h.deps, taskId)));
        expect(done.status, `round ${round}: ${out.join('\n')}`).toBe('success');
        // Every line the script printed is stored once, in order.
        expect(out.filter((l) => l.startsWith('line '))).toEqual(numbered);
        expect(escaped).toEqual([]);
      }
    }, 300_000); // ten rounds of a two-second script, half of them holding a connection for five seconds
  });
}

const postgres = testDialects().find((d) => d.name === 'postgres');

/** A real `signalbox server` process on PostgreSQL: its connections are ended mid-run and it carries on. */
describe.runIf(postgres)('a server process whose database connections are ended mid-run', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-conn-loss-'));
  let server: ReturnType<typeof serverChild> | null = null;
  let database: { url: string; drop(): Promise<void> } | null = null;

  afterAll(async () => {
    if (server?.running()) await server.stop('SIGTERM');
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps running and serving, and ends the task with every line', async () => {
    database = await postgres!.create(dataDir);
    const child = serverChild(serverProcessEnv(dataDir, { SIGNALBOX_DB_URL: database.url }), {
      capture: true,
    });
    server = child;
    const cookie = await child.startAndSignIn();
    const port = child.port;
    const api = cookieApi(port, cookie);
    const projectId = await postForId(api, '/api/projects', { name: 'Loss' });
    const { handle, rows: deps } = serverDb(database.url);
    const { id: repoId } = await insertGitRepository(deps, projectId, { 'count.sh': script });
    const tpl = await insertTemplate(deps, projectId, { repository_id: repoId, playbook: 'count.sh' });
    await handle.destroy();

    const taskId = await postForId(api, `/api/project/${projectId}/tasks`, { template_id: tpl });
    const lines = async () =>
      (
        (await (await api('GET', `/api/project/${projectId}/tasks/${taskId}/output`)).json()) as {
          output: string;
        }[]
      ).map((r) => r.output);
    await waitFor(
      orNothing(async () => (await lines()).filter((l) => l.startsWith('line ')).length >= 20),
      20_000,
      'the first lines',
    );
    // While the server holds a connection in a transaction (the case that used to crash it).
    expect(await killConnections(database.url, { whileHeldMs: 10_000 })).toBeGreaterThan(0);
    const codes: number[] = [];
    const status = async () => {
      try {
        const res = await api('GET', `/api/project/${projectId}/tasks/${taskId}`);
        codes.push(
          res.status,
          (await fetch(localUrl(port, '/api/ping'))).status,
          (await api('GET', '/api/projects')).status,
        );
        return res.ok ? ((await res.json()) as { status: string }).status : '';
      } catch (err) {
        await new Promise((r) => setTimeout(r, 200));
        const { exitCode } = child.process!;
        if (exitCode !== null) throw new Error(`the server exited (${exitCode}):\n${child.output}`);
        throw err;
      }
    };
    const final = await waitFor(
      async () => {
        const s = await status();
        return ENDED.includes(s) ? s : undefined;
      },
      60_000,
      'the task to end',
    );
    expect(child.process!.exitCode, child.output).toBeNull();
    expect(codes.filter((c) => c >= 500)).toEqual([]);
    expect(final).toBe('success');
    expect((await lines()).filter((l) => l.startsWith('line '))).toEqual(numbered);
    expect(child.output).not.toContain("Unhandled 'error' event");
    // Lost connections are reported in one line each, never with a stack trace.
    expect(child.output).not.toMatch(/\n\s+at /);
  });
});

// Only where the servers are configured (CI sets SIGNALBOX_TEST_PG_URL and SIGNALBOX_TEST_MYSQL_URL).
lostConnections('postgres');
lostConnections('mysql');
