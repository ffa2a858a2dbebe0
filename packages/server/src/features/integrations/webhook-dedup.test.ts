import { createHmac, randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedDatabase, testDialects } from '../../../test/support/dialects';
import { answeredError, type Client, createHarness, type Harness } from '../../../test/support/harness';
import { createSecretKey } from '../../../test/support/integration-kit';
import {
  gitRepo,
  insertRepository,
  insertTemplate,
  waitFor,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { sharedTempDir } from '../../../test/support/task-shared';
import { insertReturningId } from '../../db/values';
import { claimDelivery } from './deliveries.store';

/**
 * Redelivery de-duplication and the debounce of identical waiting tasks, through `POST /api/integrations/{alias}`
 * with the real task engine: every task here is a real bash run of a local repository.
 */

const SECRET = 'dedup-webhook-secret-4c1d';
const sign = (body: string) => createHmac('sha256', SECRET).update(body).digest('hex');
const HOUR = 60 * 60 * 1000;

type Push = { ref?: string; after?: string; message?: string };
const pushBody = (p: Push = {}) =>
  JSON.stringify({
    ref: p.ref ?? 'refs/heads/main',
    after: p.after ?? 'abc123',
    repository: { full_name: 'acme/app' },
    head_commit: { message: p.message ?? 'Ship it' },
  });

describe.each(testDialects())('webhook de-duplication on $name', (dialect) => {
  let shared: Awaited<ReturnType<typeof sharedDatabase>>;
  let h: Harness;
  let projects = 0;
  /** A second server on the same database, as behind a load balancer. */
  let other: Harness;
  let owner: Client;
  const scratch: string[] = [];

  beforeAll(async () => {
    shared = await sharedDatabase(dialect, 'sb-dedup-');
    const secretKey = randomBytes(32).toString('base64');
    h = await createHarness(shared.dialect, { secretKey });
    other = await createHarness(shared.dialect, { secretKey });
    owner = await h.userClient({ can_create_project: true });
  });
  afterAll(async () => {
    await other?.close();
    await h?.close();
    await shared?.drop();
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A project with a GitHub-signed integration extracting GIT_REF and COMMIT. Its template runs `gate.sh`,
   * which blocks until open() is called, or `quick.sh`.
   */
  const setup = async (opts: { playbook?: 'gate.sh' | 'quick.sh'; type?: string } = {}) => {
    const created = await owner.post('/api/projects', { name: `Dedup ${++projects}` });
    expect(created.statusCode, created.body).toBe(201);
    const projectId = created.json().id as number;
    const base = `/api/project/${projectId}`;
    const dir = sharedTempDir('sb-gate-');
    scratch.push(dir);
    const gate = join(dir, 'open');
    const repo = gitRepo({
      'gate.sh': `while [ ! -e '${gate}' ]; do sleep 0.05; done\necho through\n`,
      'quick.sh': 'echo quick\n',
    });
    scratch.push(repo);
    const repositoryId = await insertRepository(h.deps, projectId, { git_url: repo });
    const templateId = await insertTemplate(h.deps, projectId, {
      name: 'Deploy',
      repository_id: repositoryId,
      playbook: opts.playbook ?? 'quick.sh',
      type: opts.type ?? '',
    });
    const key = await createSecretKey(owner, base, SECRET, 'GitHub secret');
    const res = await owner.post(`${base}/integrations`, {
      name: 'GitHub push',
      template_id: templateId,
      auth_method: 'github',
      auth_secret_id: key,
    });
    expect(res.statusCode, res.body).toBe(201);
    const integrationId = res.json().id as number;
    for (const [variable, path] of [
      ['GIT_REF', 'ref'],
      ['COMMIT', 'after'],
    ]) {
      const v = await owner.post(`${base}/integrations/${integrationId}/values`, {
        name: variable,
        value_source: 'body',
        body_data_type: 'json',
        key: path,
        variable,
        variable_type: 'environment',
      });
      expect(v.statusCode, v.body).toBe(201);
    }
    const alias = (await owner.post(`${base}/integrations/${integrationId}/aliases`)).json().alias as string;
    return {
      projectId,
      base,
      templateId,
      integrationId,
      alias,
      open: () => writeFileSync(gate, ''),
    };
  };

  const deliver = (alias: string, body: string, headers: Record<string, string> = {}, to: Harness = h) =>
    to.app.inject({
      method: 'POST',
      url: `/api/integrations/${alias}`,
      payload: body,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-hub-signature-256': `sha256=${sign(body)}`,
        ...headers,
      },
    });
  const deliverOk = async (alias: string, body: string, headers: Record<string, string> = {}) => {
    const res = await deliver(alias, body, headers);
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
  };

  const tasksOf = (integrationId: number) =>
    h.deps.db
      .selectFrom('task')
      .select(['id', 'status', 'environment'])
      .where('integration_id', '=', integrationId)
      .orderBy('id')
      .execute();
  /** Sorted here: the databases' collations order mixed case differently. */
  const deliveriesOf = async (integrationId: number) =>
    (
      await h.deps.db
        .selectFrom('integration_delivery')
        .select(['delivery_id', 'created'])
        .where('integration_id', '=', integrationId)
        .execute()
    ).sort((a, b) => (a.delivery_id < b.delivery_id ? -1 : a.delivery_id > b.delivery_id ? 1 : 0));
  const finished = (id: number) => waitForStatus(h.deps, id, ['success', 'error', 'stopped']);
  /** Server log lines about skipped deliveries of one integration, parsed. */
  const skipLogs = (integrationId: number) =>
    h.logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((l) => l.integration_id === integrationId && typeof l.rule === 'string');

  it('starts one task for a GitHub delivery posted twice, and logs the skipped redelivery', async () => {
    const s = await setup();
    const body = pushBody({ message: 'Body text that must not be logged' });
    const delivery = { 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' };
    await deliverOk(s.alias, body, delivery);
    const [first] = await tasksOf(s.integrationId);
    expect(first).toBeDefined();
    // The first run has finished: only the delivery id can keep the redelivery from starting a second one.
    expect((await finished(first!.id)).status).toBe('success');
    await deliverOk(s.alias, body, delivery);
    expect((await tasksOf(s.integrationId)).map((t) => t.id)).toEqual([first!.id]);
    expect((await deliveriesOf(s.integrationId)).map((d) => d.delivery_id)).toEqual([
      '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    ]);

    const logs = skipLogs(s.integrationId);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      level: 30,
      rule: 'delivery_id',
      integration_id: s.integrationId,
      delivery_id: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      msg: 'integration request skipped: delivery already accepted',
    });
    const all = h.logLines.join('\n');
    expect(all).not.toContain('Body text that must not be logged');
    expect(all).not.toContain(SECRET);
  });

  it('starts a task per distinct delivery id, whichever delivery header carries it', async () => {
    const s = await setup();
    const body = pushBody();
    const headers: Record<string, string>[] = [
      { 'x-github-delivery': 'gh-1' },
      { 'x-github-delivery': 'gh-2' },
      // Ids are compared exactly (MySQL's default collation would call these two the same).
      { 'x-github-delivery': 'GH-1' },
      { 'x-gitlab-event-uuid': 'gl-1' },
      { 'x-gitea-delivery': 'gt-1' },
      { 'x-request-id': 'rq-1' },
    ];
    for (const [i, delivery] of headers.entries()) {
      await deliverOk(s.alias, body, delivery);
      const tasks = await tasksOf(s.integrationId);
      expect(tasks).toHaveLength(i + 1);
      // Let it finish so that the debounce of identical waiting tasks stays out of the way.
      expect((await finished(tasks[i]!.id)).status).toBe('success');
    }
    // A redelivery under each header is skipped; the id is per integration, not per header.
    for (const delivery of headers) await deliverOk(s.alias, body, delivery);
    await deliverOk(s.alias, body, { 'x-request-id': 'gh-1' });
    expect(await tasksOf(s.integrationId)).toHaveLength(headers.length);
    expect((await deliveriesOf(s.integrationId)).map((d) => d.delivery_id)).toEqual(
      ['GH-1', 'gh-1', 'gh-2', 'gl-1', 'gt-1', 'rq-1'].sort(),
    );
  });

  // SQLite runs one statement at a time and these requests do not interleave there; on PostgreSQL and MySQL
  // (connection pools) they do, and a check-then-insert would start several tasks.
  it('starts one task for concurrent deliveries of one id', async () => {
    const s = await setup({ playbook: 'gate.sh' });
    // Identical redeliveries, as a sender retrying on a timeout produces them.
    const body = pushBody();
    const same = await Promise.all(
      Array.from({ length: 5 }, () => deliver(s.alias, body, { 'x-github-delivery': 'concurrent-1' })),
    );
    expect(same.map((r) => r.statusCode)).toEqual([204, 204, 204, 204, 204]);
    expect(await tasksOf(s.integrationId)).toHaveLength(1);
    // Same id, different values: the debounce of identical tasks cannot be what stops these.
    const varied = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        deliver(s.alias, pushBody({ after: `commit-${i}` }), { 'x-github-delivery': 'concurrent-2' }),
      ),
    );
    expect(varied.map((r) => r.statusCode)).toEqual([204, 204, 204, 204, 204]);
    const tasks = await tasksOf(s.integrationId);
    expect(tasks).toHaveLength(2);
    expect((await deliveriesOf(s.integrationId)).map((d) => d.delivery_id)).toEqual([
      'concurrent-1',
      'concurrent-2',
    ]);
    s.open();
    for (const t of tasks) expect((await finished(t.id)).status).toBe('success');
  });

  it('claims a delivery id once among many concurrent claims, also when taking over an old one', async () => {
    const s = await setup();
    const at = new Date().toISOString();
    const since = new Date(Date.now() - 24 * HOUR).toISOString();
    const claims = (id: string) =>
      Promise.all(Array.from({ length: 20 }, () => claimDelivery(h.deps.db, s.integrationId, id, at, since)));
    expect((await claims('race-1')).filter(Boolean)).toHaveLength(1);
    await h.deps.db
      .updateTable('integration_delivery')
      .set({ created: new Date(Date.now() - 30 * HOUR).toISOString() })
      .where('integration_id', '=', s.integrationId)
      .execute();
    expect((await claims('race-1')).filter(Boolean)).toHaveLength(1);
    expect((await claims('race-1')).filter(Boolean)).toHaveLength(0);
    expect(await deliveriesOf(s.integrationId)).toEqual([{ delivery_id: 'race-1', created: at }]);
  });

  it('lets a delivery id accepted more than 24 hours ago through, and prunes old ids', async () => {
    const s = await setup();
    const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
    const insert = (integrationId: number, deliveryId: string, created: string) =>
      insertReturningId(h.deps.db, h.deps.dialect, 'integration_delivery', {
        integration_id: integrationId,
        delivery_id: deliveryId,
        created,
      });
    await insert(s.integrationId, 'old-1', at(25 * HOUR));
    await insert(s.integrationId, 'recent-1', at(23 * HOUR));
    // Old ids of another (here: unknown) integration are pruned too; a recent one stays.
    await insert(999_999, 'stale-elsewhere', at(48 * HOUR));
    await insert(999_999, 'fresh-elsewhere', at(HOUR));

    const before = new Date().toISOString();
    await deliverOk(s.alias, pushBody(), { 'x-github-delivery': 'recent-1' });
    expect(await tasksOf(s.integrationId)).toEqual([]);

    await deliverOk(s.alias, pushBody(), { 'x-github-delivery': 'old-1' });
    const tasks = await tasksOf(s.integrationId);
    expect(tasks).toHaveLength(1);
    expect((await finished(tasks[0]!.id)).status).toBe('success');
    const rows = await deliveriesOf(s.integrationId);
    expect(rows.map((r) => r.delivery_id)).toEqual(['old-1', 'recent-1']);
    // Accepted again now, so it blocks its own redelivery for the next 24 hours.
    expect(rows[0]!.created >= before).toBe(true);
    await deliverOk(s.alias, pushBody(), { 'x-github-delivery': 'old-1' });
    expect(await tasksOf(s.integrationId)).toHaveLength(1);

    const elsewhere = await deliveriesOf(999_999);
    expect(elsewhere.map((r) => r.delivery_id)).toEqual(['fresh-elsewhere']);
  });

  it('queues one task for identical deliveries while it waits; other values and running tasks do not block', async () => {
    const s = await setup({ playbook: 'gate.sh' });
    const env = async () =>
      (await tasksOf(s.integrationId)).map((t) => ({ status: t.status, ...JSON.parse(t.environment) }));

    // A: runs and holds the template (it does not allow parallel tasks) until the gate opens.
    await deliverOk(s.alias, pushBody({ ref: 'refs/heads/hold' }));
    const [a] = await tasksOf(s.integrationId);
    await waitForStatus(h.deps, a!.id, ['running']);
    // The same values again: A is running, not waiting, so this one queues (it may see newer commits).
    await deliverOk(s.alias, pushBody({ ref: 'refs/heads/hold' }));
    // Three quick identical deliveries: one waiting task.
    for (let i = 0; i < 3; i++) await deliverOk(s.alias, pushBody());
    // Different extracted values: a task of their own.
    await deliverOk(s.alias, pushBody({ ref: 'refs/heads/dev' }));
    await deliverOk(s.alias, pushBody({ after: 'def456' }));
    // Identical to a waiting one again, and another burst of the dev push.
    await deliverOk(s.alias, pushBody({ ref: 'refs/heads/hold' }));
    await deliverOk(s.alias, pushBody({ ref: 'refs/heads/dev' }));

    expect(await env()).toEqual([
      { status: 'running', GIT_REF: 'refs/heads/hold', COMMIT: 'abc123' },
      { status: 'waiting', GIT_REF: 'refs/heads/hold', COMMIT: 'abc123' },
      { status: 'waiting', GIT_REF: 'refs/heads/main', COMMIT: 'abc123' },
      { status: 'waiting', GIT_REF: 'refs/heads/dev', COMMIT: 'abc123' },
      { status: 'waiting', GIT_REF: 'refs/heads/main', COMMIT: 'def456' },
    ]);
    const logs = skipLogs(s.integrationId);
    expect(logs).toHaveLength(4);
    for (const l of logs)
      expect(l).toMatchObject({ rule: 'debounce', integration_id: s.integrationId, delivery_id: null });

    s.open();
    for (const t of await tasksOf(s.integrationId)) expect((await finished(t.id)).status).toBe('success');
    // Nothing waits any more: the same push starts a new task.
    await deliverOk(s.alias, pushBody());
    const tasks = await tasksOf(s.integrationId);
    expect(tasks).toHaveLength(6);
    expect((await finished(tasks[5]!.id)).status).toBe('success');
  });

  it('queues one task for identical deliveries spread over two servers at once', async () => {
    const s = await setup({ playbook: 'gate.sh' });
    await deliverOk(s.alias, pushBody({ ref: 'refs/heads/hold' }));
    const [first] = await tasksOf(s.integrationId);
    await waitForStatus(h.deps, first!.id, ['running']);
    // Twenty identical pushes at once, half to each server: one waiting task, the rest debounced.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => deliver(s.alias, pushBody(), {}, i % 2 ? other : h)),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(answers.map(() => 204));
    const tasks = await tasksOf(s.integrationId);
    expect(tasks.map((t) => t.status)).toEqual(['running', 'waiting']);
    // The lock row is given back: nothing of it stays beside the delivery ids.
    expect(await deliveriesOf(s.integrationId)).toEqual([]);
    s.open();
    for (const t of tasks) expect((await finished(t.id)).status).toBe('success');
  });

  it('debounces against the project limit too, and only tasks of the same integration', async () => {
    const s = await setup({ playbook: 'gate.sh' });
    await owner.put(s.base, { name: 'Dedup', max_parallel_tasks: 1 });
    // Another template of the project takes the only slot.
    const other = await insertTemplate(h.deps, s.projectId, {
      name: 'Other',
      repository_id: (await h.deps.db
        .selectFrom('template')
        .select('repository_id')
        .where('id', '=', s.templateId)
        .executeTakeFirstOrThrow())!.repository_id,
      playbook: 'gate.sh',
      allow_parallel_tasks: 1,
    });
    const blocker = await owner.post(`${s.base}/tasks`, { template_id: other });
    expect(blocker.statusCode, blocker.body).toBe(201);
    await waitForStatus(h.deps, blocker.json().id as number, ['running']);
    // A task of the template with the same environment started by hand is not the integration's.
    const manual = await owner.post(`${s.base}/tasks`, {
      template_id: s.templateId,
      environment: JSON.stringify({ GIT_REF: 'refs/heads/main', COMMIT: 'abc123' }),
    });
    expect(manual.statusCode, manual.body).toBe(201);

    for (let i = 0; i < 3; i++) await deliverOk(s.alias, pushBody());
    const tasks = await tasksOf(s.integrationId);
    expect(tasks.map((t) => t.status)).toEqual(['waiting']);
    const detail = await waitFor(
      async () => (await owner.get(`${s.base}/tasks/${tasks[0]!.id}`)).json().status_detail as string | null,
    );
    expect(detail).toBe('Waiting: project limit of 1 running task reached');
    s.open();
    expect((await finished(tasks[0]!.id)).status).toBe('success');
    expect((await finished(manual.json().id as number)).status).toBe('success');
  });

  it('answers 401 to a bad signature without recording its delivery id', async () => {
    const s = await setup();
    const body = pushBody();
    const bad = await deliver(s.alias, body, {
      'x-github-delivery': 'signed-later',
      'x-hub-signature-256': `sha256=${createHmac('sha256', 'wrong').update(body).digest('hex')}`,
    });
    expect(bad.statusCode).toBe(401);
    expect(bad.json()).toEqual(
      answeredError(bad, { error: 'Invalid signature or token', code: 'webhook_unauthorized' }),
    );
    expect(await deliveriesOf(s.integrationId)).toEqual([]);
    expect(await tasksOf(s.integrationId)).toEqual([]);
    // The genuine delivery of that id still starts its task.
    await deliverOk(s.alias, body, { 'x-github-delivery': 'signed-later' });
    expect(await tasksOf(s.integrationId)).toHaveLength(1);
    expect((await deliveriesOf(s.integrationId)).map((d) => d.delivery_id)).toEqual(['signed-later']);
  });

  it('forgets a delivery id whose task could not be started, so a redelivery tries again', async () => {
    // A deploy template needs a build task; a webhook gives none, so the task is refused.
    const s = await setup({ type: 'deploy' });
    const refusals = () =>
      h.logLines.filter(
        (l) =>
          l.includes('integration could not start its task') &&
          l.includes(`"integration_id":${s.integrationId}`),
      ).length;
    await deliverOk(s.alias, pushBody(), { 'x-github-delivery': 'refused-1' });
    expect(refusals()).toBe(1);
    expect(await deliveriesOf(s.integrationId)).toEqual([]);
    await deliverOk(s.alias, pushBody(), { 'x-github-delivery': 'refused-1' });
    expect(refusals()).toBe(2);
    expect(await tasksOf(s.integrationId)).toEqual([]);
  });

  it('deleting an integration or its project removes its delivery ids and nothing else', async () => {
    const keep = await setup();
    await deliverOk(keep.alias, pushBody(), { 'x-github-delivery': 'kept-1' });

    const one = await setup();
    await deliverOk(one.alias, pushBody(), { 'x-github-delivery': 'gone-1' });
    expect(await deliveriesOf(one.integrationId)).toHaveLength(1);
    expect((await owner.del(`${one.base}/integrations/${one.integrationId}`)).statusCode).toBe(204);
    expect(await deliveriesOf(one.integrationId)).toEqual([]);

    const doomed = await setup();
    const second = await owner.post(`${doomed.base}/integrations`, {
      name: 'Second',
      template_id: doomed.templateId,
    });
    const secondId = second.json().id as number;
    const secondAlias = (await owner.post(`${doomed.base}/integrations/${secondId}/aliases`)).json()
      .alias as string;
    await deliverOk(doomed.alias, pushBody(), { 'x-github-delivery': 'doomed-1' });
    await deliverOk(doomed.alias, pushBody(), { 'x-github-delivery': 'doomed-2' });
    await deliverOk(secondAlias, '{}', { 'x-request-id': 'doomed-3' });
    expect(await deliveriesOf(doomed.integrationId)).toHaveLength(2);
    expect(await deliveriesOf(secondId)).toHaveLength(1);
    for (const t of await h.deps.db
      .selectFrom('task')
      .select('id')
      .where('project_id', '=', doomed.projectId)
      .execute())
      await finished(t.id);

    expect((await owner.del(doomed.base)).statusCode).toBe(204);
    expect(await deliveriesOf(doomed.integrationId)).toEqual([]);
    expect(await deliveriesOf(secondId)).toEqual([]);
    expect((await deliveriesOf(keep.integrationId)).map((d) => d.delivery_id)).toEqual(['kept-1']);
  });
});
