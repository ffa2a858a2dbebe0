import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configuredDialects, type TestDialect } from '../../../test/support/dialects';
import { startRedis } from '../../../test/support/redis-server';
import { postForId, serverChild, serverDb } from '../../../test/support/server-child';
import { cookieApi, serverProcessEnv } from '../../../test/support/server-process';
import { gitRepo, insertRepository, insertTemplate, waitFor } from '../../../test/support/task-fixtures';

/**
 * Two real `signalbox server` processes on one PostgreSQL or MariaDB database and one Redis advance the same
 * workflow runs at once (each sweeps every active run): 20 runs of a fan-out-and-join workflow started through
 * both, and no node ever starts two tasks.
 */
const dialects = configuredDialects().filter((d) => d.name !== 'sqlite');

if (dialects.length === 0)
  describe('workflow runs on two server processes', () => {
    it.skip('needs PostgreSQL or MariaDB (SIGNALBOX_TEST_PG_URL / SIGNALBOX_TEST_MYSQL_URL)', () => {});
  });

describe.each(dialects.slice(0, 1))(
  'workflow runs on two server processes on one $name database',
  (dialect: TestDialect) => {
    const dirs: string[] = [];
    const secretKey = randomBytes(32).toString('base64');
    let db: { url: string; drop(): Promise<void> };
    let redis: Awaited<ReturnType<typeof startRedis>>;
    let rows: ReturnType<typeof serverDb>;
    const servers: (ReturnType<typeof serverChild> & { cookie: string })[] = [];

    beforeAll(async () => {
      const dir = (prefix: string) => {
        const d = mkdtempSync(join(tmpdir(), prefix));
        dirs.push(d);
        return d;
      };
      db = await dialect.create(dir('sb-wf-cluster-db-'));
      redis = await startRedis();
      for (const name of ['a', 'b']) {
        const server = serverChild(
          serverProcessEnv(dir(`sb-wf-cluster-${name}-`), {
            SIGNALBOX_DB_URL: db.url,
            SIGNALBOX_REDIS_URL: redis.url(0),
            SIGNALBOX_SECRET_KEY: secretKey,
            SIGNALBOX_INSTANCE_ID: `wf-cluster-${name}-${process.pid}`,
          }),
          { capture: true },
        );
        const cookie = await server.startAndSignIn();
        servers.push(Object.assign(server, { cookie }));
      }
      rows = serverDb(db.url);
    }, 180_000);

    afterAll(async () => {
      for (const s of servers) if (s.running()) await s.stop('SIGKILL');
      await rows?.handle.destroy();
      await redis?.stop();
      await db?.drop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it('runs 20 workflows at once through both instances with no node started twice', async () => {
      const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
      const apiA = cookieApi(a.port, a.cookie);
      const apiB = cookieApi(b.port, b.cookie);
      const projectId = await postForId(apiA, '/api/projects', { name: 'Cluster workflows' });
      const repo = await insertRepository(rows.rows, projectId, {
        git_url: `file://${gitRepo({ 'step.sh': 'echo "step $SIGNALBOX_TASK_ID"\n' })}`,
      });
      const step = await insertTemplate(rows.rows, projectId, {
        repository_id: repo,
        playbook: 'step.sh',
        allow_parallel_tasks: 1,
      });
      const node = (id: string) => ({ id, type: 'template', template_id: step });
      const wf = await postForId(apiA, `/api/project/${projectId}/workflows`, {
        name: 'Fan out',
        nodes: [
          node('first'),
          node('left'),
          node('right'),
          { id: 'pause', type: 'delay', seconds: 1 },
          node('join'),
        ],
        edges: [
          { from: 'first', to: 'left' },
          { from: 'first', to: 'right' },
          { from: 'left', to: 'pause' },
          { from: 'right', to: 'pause' },
          { from: 'pause', to: 'join' },
        ],
      });
      const runIds = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          postForId(i % 2 ? apiB : apiA, `/api/project/${projectId}/workflows/${wf}/runs`, {}),
        ),
      );
      expect(new Set(runIds).size).toBe(20);
      await waitFor(
        async () => {
          const runs = await rows.handle.db
            .selectFrom('workflow_run')
            .select('status')
            .where('id', 'in', runIds)
            .execute();
          return (
            runs.every((r) => ['success', 'failed', 'stopped', 'rejected'].includes(r.status)) || undefined
          );
        },
        240_000,
        'the 20 runs to end',
      );
      const runs = await rows.handle.db
        .selectFrom('workflow_run')
        .select('status')
        .where('id', 'in', runIds)
        .execute();
      expect(runs.map((r) => r.status)).toEqual(Array(20).fill('success'));
      const tasks = await rows.handle.db
        .selectFrom('task')
        .select(['workflow_run_id', 'workflow_node_id', 'status'])
        .where('workflow_run_id', 'in', runIds)
        .execute();
      // One task per template node per run: 4 × 20, each pair (run, node) once.
      expect(tasks).toHaveLength(80);
      expect(new Set(tasks.map((t) => `${t.workflow_run_id}/${t.workflow_node_id}`)).size).toBe(80);
      expect(tasks.every((t) => t.status === 'success')).toBe(true);
      const nodes = await rows.handle.db
        .selectFrom('workflow_run_node')
        .select(['attempt', 'status'])
        .where('run_id', 'in', runIds)
        .execute();
      expect(nodes).toHaveLength(100);
      expect(nodes.every((n) => n.attempt === 1 && n.status === 'success')).toBe(true);
    }, 300_000);
  },
);
