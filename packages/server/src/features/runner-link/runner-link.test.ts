import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import {
  FakeRunner,
  GLOBAL_REGISTRATION_TOKEN,
  type RegisteredRunner,
  registerRunner,
  someAddress,
} from '../../../test/support/fake-runner';
import type { Client, Harness } from '../../../test/support/harness';
import {
  insertInventory,
  insertKey,
  insertTemplate,
  outputOf,
  waitFor,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { harnessWithProject, insertSecretEnvironment } from '../../../test/support/task-runs';
import { buildApp } from '../../app';
import { now } from '../../db/values';
import { randomToken, sha256 } from '../../lib/crypto';
import { generateRunnerKeys } from '../../runner-protocol/seal';
import { runnerRestartedMessage } from '../../runners/server/remote-runners';

describe.each(testDialects())('remote runners on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let otherProject: number;
  let base: string;
  const open: FakeRunner[] = [];
  let tagCount = 0;
  /** A tag no other test's runner carries. */
  const newTag = () => `tag${++tagCount}`;

  beforeAll(async () => {
    ({ h, owner, projectId } = await harnessWithProject(dialect, {
      runnerRegistrationToken: GLOBAL_REGISTRATION_TOKEN,
      runnerLostTimeout: 5,
    }));
    ({ projectId: otherProject } = await h.projectWithTeam(owner, 'Other'));
    base = (await h.app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http/, 'ws');
  });
  afterAll(async () => h?.close());
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
  });

  const connect = async (runner: RegisteredRunner, hello: Parameters<typeof FakeRunner.connect>[2] = {}) => {
    const c = await FakeRunner.connect(base, runner, hello);
    open.push(c.fake);
    return c;
  };
  const register = (body: Parameters<typeof registerRunner>[1] = {}, token?: string) =>
    registerRunner(h, body, token);
  const post = (payload: Record<string, unknown>) =>
    h.app.inject({ method: 'POST', url: '/api/internal/runners', payload, remoteAddress: someAddress() });
  const postTask = async (templateId: number, extra: Record<string, unknown> = {}) => {
    const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: templateId, ...extra });
    expect(res.statusCode).toBe(201);
    return res.json().id as number;
  };
  const taskOf = (id: number) =>
    h.deps.db.selectFrom('task').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const detailOf = async (id: number) =>
    (await owner.get(`/api/project/${projectId}/tasks/${id}`)).json().status_detail as string | null;
  const runnerRow = (id: number) =>
    h.deps.db.selectFrom('remote_runner').selectAll().where('id', '=', id).executeTakeFirst();
  const oneTimeToken = async (projectId: number | null, expiresInMs = 60_000) => {
    const token = randomToken();
    await h.deps.db
      .insertInto('runner_registration_token')
      .values({
        project_id: projectId,
        token_hash: sha256(token),
        user_id: null,
        created: now(),
        expires_at: new Date(Date.now() + expiresInMs).toISOString(),
      })
      .execute();
    return token;
  };
  /** Runs a task on the fake runner to success with the given output lines. */
  const finish = async (fake: FakeRunner, taskId: number, lines: string[] = []) => {
    fake.send({ type: 'status', task_id: taskId, status: 'running' });
    if (lines.length) fake.output(taskId, 1, lines);
    fake.send({ type: 'finished', task_id: taskId, status: 'success', last_seq: lines.length ? 1 : 0 });
    await fake.next('done', (m) => m.task_id === taskId);
  };

  describe('registration', () => {
    it('registers a global runner with the global token and keeps only a hash of its token', async () => {
      const r = await register({ tags: ['a', 'a', 'b'], max_parallel_tasks: 3, name: 'builder' });
      const row = await runnerRow(r.id);
      expect(row).toMatchObject({ project_id: null, name: 'builder', max_parallel_tasks: 3, active: 1 });
      expect(JSON.parse(row?.tags ?? '')).toEqual(['a', 'b']);
      expect(row?.token_hash).toBe(sha256(r.token));
      expect(JSON.stringify(row)).not.toContain(r.token);
    });

    it('registers a project runner with the global token and project_id, refusing an unknown project', async () => {
      const r = await register({ project_id: otherProject });
      expect((await runnerRow(r.id))?.project_id).toBe(otherProject);
      const keys = generateRunnerKeys();
      const res = await post({
        registration_token: GLOBAL_REGISTRATION_TOKEN,
        public_key: keys.publicKey,
        project_id: 999999,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toContain('Project 999999 does not exist');
    });

    it('refuses a wrong token with 401, and a key that is not an X25519 public key with 400', async () => {
      const keys = generateRunnerKeys();
      const wrong = await post({ registration_token: 'nope', public_key: keys.publicKey });
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json().error).toBe('The registration token is not valid, was already used or has expired');
      for (const public_key of [
        keys.privateKey,
        'not a key',
        '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----',
      ]) {
        const res = await post({ registration_token: GLOBAL_REGISTRATION_TOKEN, public_key });
        expect(res.statusCode, public_key).toBe(400);
        expect(res.json().error).toContain('X25519');
      }
      const bad = await post({
        registration_token: GLOBAL_REGISTRATION_TOKEN,
        public_key: keys.publicKey,
        extra: 1,
      });
      expect(bad.statusCode).toBe(400);
    });

    it('throttles wrong tokens from an address, but never a valid one-time token', async () => {
      const address = someAddress();
      const keys = generateRunnerKeys();
      const from = (registration_token: string) =>
        h.app.inject({
          method: 'POST',
          url: '/api/internal/runners',
          payload: { registration_token, public_key: keys.publicKey },
          remoteAddress: address,
        });
      const codes: number[] = [];
      for (let i = 0; i < 8; i++) codes.push((await from(`wrong-${i}`)).statusCode);
      expect(codes.slice(0, 4)).toEqual([401, 401, 401, 401]);
      expect(codes.at(-1)).toBe(429);
      const locked = await from('wrong-again');
      expect(locked.statusCode).toBe(429);
      expect(locked.headers['retry-after']).toBeDefined();
      // The global token (an admin's choice, maybe weak) stays behind the throttle; a one-time token does not.
      expect((await from(GLOBAL_REGISTRATION_TOKEN)).statusCode).toBe(429);
      const valid = await from(await oneTimeToken(null));
      expect(valid.statusCode).toBe(200);
      expect(valid.json()).toMatchObject({ id: expect.any(Number), token: expect.any(String) });
    });

    it('spends a one-time token exactly once, even when registrations race for it', async () => {
      const token = await oneTimeToken(null);
      const answers = await Promise.all(
        Array.from({ length: 5 }, () =>
          post({ registration_token: token, public_key: generateRunnerKeys().publicKey }),
        ),
      );
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401, 401, 401, 401]);
      const made = answers.find((a) => a.statusCode === 200)?.json();
      expect((await runnerRow(made.id))?.project_id).toBeNull();
      const row = await h.deps.db
        .selectFrom('runner_registration_token')
        .selectAll()
        .where('token_hash', '=', sha256(token))
        .executeTakeFirstOrThrow();
      expect(row.used_at).not.toBeNull();
    });

    it("makes a project token's runner a runner of that project; another project or an expired token is refused", async () => {
      const token = await oneTimeToken(projectId);
      const keys = generateRunnerKeys();
      const elsewhere = await post({
        registration_token: token,
        public_key: keys.publicKey,
        project_id: otherProject,
      });
      expect(elsewhere.statusCode).toBe(400);
      expect(elsewhere.json().error).toBe('This registration token is for another project');
      // The refused attempt did not spend it.
      const r = await register({}, token);
      expect((await runnerRow(r.id))?.project_id).toBe(projectId);
      const expired = await oneTimeToken(projectId, -1000);
      expect((await post({ registration_token: expired, public_key: keys.publicKey })).statusCode).toBe(401);
    });

    it('unregisters with the runner token; a wrong token is 401', async () => {
      const r = await register();
      const wrong = await h.app.inject({
        method: 'DELETE',
        url: '/api/internal/runners',
        headers: { 'x-runner-token': 'x' },
      });
      expect(wrong.statusCode).toBe(401);
      const res = await h.app.inject({
        method: 'DELETE',
        url: '/api/internal/runners',
        headers: { 'x-runner-token': r.token },
      });
      expect(res.statusCode).toBe(204);
      expect(await runnerRow(r.id)).toBeUndefined();
    });
  });

  describe('socket', () => {
    it('closes 4401 for an unknown token and 4400 for a message that is not valid', async () => {
      const r = await register();
      const stranger = await FakeRunner.open(base, r, 'not-a-token');
      expect((await stranger.closed).code).toBe(4401);
      const fake = await FakeRunner.open(base, r);
      fake.send({ type: 'hello', version: 'x' });
      expect((await fake.closed).code).toBe(4400);
      const early = await FakeRunner.open(base, r);
      early.send({ type: 'heartbeat', running: [] });
      expect((await early.closed).code).toBe(4400);
      // What was wrong is logged, never the text (an output line may hold a secret).
      const garbled = await FakeRunner.open(base, r);
      garbled.send('{"type":"output","lines":"sekrit-in-a-bad-message"');
      expect((await garbled.closed).code).toBe(4400);
      const invalid = await FakeRunner.open(base, r);
      invalid.send({ type: 'output', task_id: 1, seq: 1, lines: 'sekrit-in-a-bad-message' });
      expect((await invalid.closed).code).toBe(4400);
      expect(h.logLines.some((l) => l.includes('a runner sent a message that is not valid'))).toBe(true);
      expect(h.logLines.join('\n')).not.toContain('sekrit-in-a-bad-message');
    });

    it('shows the runner online while connected, replaces an older connection with 4409, offline after close', async () => {
      const r = await register();
      const { fake: first, welcome } = await connect(r, { max_parallel_tasks: 4 });
      expect(welcome).toMatchObject({
        type: 'welcome',
        protocol: 1,
        runner_id: r.id,
        acked: [],
        abandon: [],
      });
      const row = await runnerRow(r.id);
      // The hello's offer does not replace the stored setting (the registration's, or the owner's since).
      expect(row).toMatchObject({ instance_id: expect.any(String), version: 'test', max_parallel_tasks: 1 });
      expect(row?.touched).not.toBeNull();
      const { fake: second } = await connect(r);
      expect((await first.closed).code).toBe(4409);
      expect((await runnerRow(r.id))?.instance_id).not.toBeNull();
      await second.close();
      await waitFor(
        async () => (await runnerRow(r.id))?.instance_id === null,
        5000,
        'the runner to show offline',
      );
    });
  });

  describe('reports', () => {
    it("stores the sandbox a runner's hello reports and answers it with the runner", async () => {
      const r = await register({ project_id: projectId, name: 'sandboxed' });
      const { fake } = await connect(r, { sandbox: { mode: 'bwrap' } });
      const listed = async () =>
        (await owner.get(`/api/project/${projectId}/runners/${r.id}`)).json() as Record<string, unknown>;
      expect(await listed()).toMatchObject({
        sandbox: { mode: 'bwrap', reason: null },
        protocol: 1,
        incompatible: false,
      });
      await fake.close();
      const why = 'bubblewrap (bwrap) is not installed';
      await connect(r, { sandbox: { mode: 'off', reason: why } });
      expect((await listed()).sandbox).toEqual({ mode: 'off', reason: why });
      // A runner older than the report says nothing: shown as unknown.
      const quiet = await register({ project_id: projectId });
      await connect(quiet);
      expect((await owner.get(`/api/project/${projectId}/runners/${quiet.id}`)).json().sandbox).toBeNull();
    });

    it('refuses a runner of another protocol version with a reason naming both, and shows it incompatible', async () => {
      const r = await register({ project_id: projectId, name: 'from-the-future' });
      const fake = await FakeRunner.open(base, r);
      fake.send({
        type: 'hello',
        protocol: 2,
        version: '9.9.9',
        started_at: new Date().toISOString(),
        max_parallel_tasks: 1,
        running: [],
        a_field_of_protocol_2: { x: 1 },
      });
      const closed = await fake.closed;
      expect(closed.code).toBe(4426);
      expect(closed.reason).toMatch(
        /^Runner protocol 2 \(signalbox 9\.9\.9\) is not supported: this server speaks protocol 1 /,
      );
      await waitFor(
        async () => (await runnerRow(r.id))?.protocol === 2,
        5000,
        'the refused protocol to be recorded',
      );
      const shown = (await owner.get(`/api/project/${projectId}/runners/${r.id}`)).json();
      expect(shown).toMatchObject({ version: '9.9.9', protocol: 2, incompatible: true, online: false });
      // Upgraded: accepted again.
      await connect(r, { protocol: 1 });
      expect((await owner.get(`/api/project/${projectId}/runners/${r.id}`)).json()).toMatchObject({
        protocol: 1,
        incompatible: false,
        online: true,
      });
    });
  });

  describe('assignment', () => {
    it('gives a tagged task to the runner with its tag, with the job sealed to its key, and stores its run', async () => {
      const tag = newTag();
      const other = await register({ tags: [newTag()] });
      const r = await register({ tags: [tag] });
      const { fake: bystander } = await connect(other);
      const { fake } = await connect(r);
      const templateId = await insertTemplate(h.deps, projectId, { runner_tag: tag, name: 'tagged' });
      const taskId = await postTask(templateId);
      const job = await fake.next('job', (m) => m.task_id === taskId);
      expect(job.payload.alg).toBe('x25519-hkdf-sha256-aes-256-gcm');
      const payload = fake.jobs.get(taskId);
      expect(payload?.details.task.id).toBe(taskId);
      expect(payload?.details.template.name).toBe('tagged');
      expect(await taskOf(taskId)).toMatchObject({ status: 'starting', remote_runner_id: r.id });
      fake.send({ type: 'status', task_id: taskId, status: 'running', commit_hash: 'abc123' });
      await waitForStatus(h.deps, taskId, ['running']);
      fake.output(taskId, 1, ['one', 'two']);
      expect(await fake.next('ack', (m) => m.task_id === taskId && m.seq === 1)).toBeTruthy();
      // A batch sent again (its ack was lost) is acknowledged, not stored twice.
      fake.output(taskId, 1, ['one', 'two']);
      fake.output(taskId, 2, ['three']);
      await fake.next('ack', (m) => m.task_id === taskId && m.seq === 2);
      fake.send({ type: 'finished', task_id: taskId, status: 'success', last_seq: 2 });
      await fake.next('done', (m) => m.task_id === taskId);
      const task = await taskOf(taskId);
      expect(task).toMatchObject({ status: 'success', runner_seq: 2, commit_hash: 'abc123' });
      expect(await outputOf(h.deps, taskId)).toEqual(['one', 'two', 'three']);
      await bystander.roundTrip();
      expect(bystander.received.filter((m) => m.type === 'job')).toEqual([]);
    });

    it("carries the task's secrets and keys only in the sealed job, and masks them in the runner's output", async () => {
      const tag = newTag();
      const r = await register({ tags: [tag] });
      const { fake } = await connect(r);
      const envId = await insertSecretEnvironment(
        h.deps,
        projectId,
        {},
        { vars: { API_TOKEN: 'sekrit-api-token-1' } },
      );
      const keyId = await insertKey(h.deps, projectId, {
        type: 'login_password',
        secret: { login: 'deploy', password: 'sekrit-key-password-2' },
      });
      const inventoryId = await insertInventory(h.deps, projectId, {
        type: 'static',
        inventory: 'x',
        ssh_key_id: keyId,
      });
      const templateId = await insertTemplate(h.deps, projectId, {
        runner_tag: tag,
        environment_id: envId,
        inventory_id: inventoryId,
      });
      const taskId = await postTask(templateId);
      const job = await fake.next('job', (m) => m.task_id === taskId);
      expect(JSON.stringify(job)).not.toContain('sekrit');
      const payload = fake.jobs.get(taskId);
      expect(payload?.details.secretVars).toEqual({ API_TOKEN: 'sekrit-api-token-1' });
      expect(payload?.keys[String(keyId)]).toMatchObject({
        login: 'deploy',
        password: 'sekrit-key-password-2',
      });
      await finish(fake, taskId, ['token sekrit-api-token-1', 'password sekrit-key-password-2']);
      expect(await outputOf(h.deps, taskId)).toEqual(['token **********', 'password **********']);
      expect(h.logLines.join('\n')).not.toContain('sekrit');
    });

    it('waits with its reason while no runner has the tag or every one is busy, then runs', async () => {
      const tag = newTag();
      const templateId = await insertTemplate(h.deps, projectId, {
        runner_tag: tag,
        allow_parallel_tasks: 1,
      });
      const first = await postTask(templateId);
      await waitFor(async () => (await detailOf(first)) === `Waiting: no runner with tag "${tag}" is online`);
      const r = await register({ tags: [tag], max_parallel_tasks: 1 });
      const { fake } = await connect(r);
      await fake.next('job', (m) => m.task_id === first);
      const second = await postTask(templateId);
      await waitFor(
        async () => (await detailOf(second)) === `Waiting: every runner with tag "${tag}" is busy`,
      );
      await finish(fake, first);
      await fake.next('job', (m) => m.task_id === second);
      await finish(fake, second);
    });

    it("takes the inventory's tag when the template has none, and keeps untagged tasks on the server", async () => {
      const tag = newTag();
      const inventoryId = await insertInventory(h.deps, projectId, { type: 'static', inventory: 'x' });
      await h.deps.db
        .updateTable('inventory')
        .set({ runner_tag: tag })
        .where('id', '=', inventoryId)
        .execute();
      const r = await register({ tags: [tag] });
      const { fake } = await connect(r);
      const viaInventory = await postTask(
        await insertTemplate(h.deps, projectId, { inventory_id: inventoryId }),
      );
      await fake.next('job', (m) => m.task_id === viaInventory);
      await finish(fake, viaInventory);
      const local = await postTask(await insertTemplate(h.deps, projectId, {}));
      const ended = await waitForStatus(h.deps, local, ['success', 'error', 'stopped']);
      expect(ended.remote_runner_id).toBeNull();
    });

    it('prefers a project runner, then the least loaded; never a runner of another project', async () => {
      const tag = newTag();
      const foreign = await register({ tags: [tag], project_id: otherProject, max_parallel_tasks: 5 });
      const global = await register({ tags: [tag], max_parallel_tasks: 5 });
      const own = await register({ tags: [tag], project_id: projectId, max_parallel_tasks: 1 });
      const { fake: foreignFake } = await connect(foreign, { max_parallel_tasks: 5 });
      const { fake: globalFake } = await connect(global, { max_parallel_tasks: 5 });
      const { fake: ownFake } = await connect(own);
      const templateId = await insertTemplate(h.deps, projectId, {
        runner_tag: tag,
        allow_parallel_tasks: 1,
      });
      const a = await postTask(templateId);
      await ownFake.next('job', (m) => m.task_id === a);
      const b = await postTask(templateId);
      await globalFake.next('job', (m) => m.task_id === b);
      await foreignFake.roundTrip();
      expect(foreignFake.received.some((m) => m.type === 'job')).toBe(false);
      await finish(ownFake, a);
      await finish(globalFake, b);
    });

    it('sends stop and confirm to the runner as control messages', async () => {
      const tag = newTag();
      const r = await register({ tags: [tag] });
      const { fake } = await connect(r);
      const taskId = await postTask(await insertTemplate(h.deps, projectId, { runner_tag: tag }));
      await fake.next('job', (m) => m.task_id === taskId);
      fake.send({ type: 'status', task_id: taskId, status: 'running' });
      await waitForStatus(h.deps, taskId, ['running']);
      fake.send({ type: 'status', task_id: taskId, status: 'waiting_confirmation' });
      await waitForStatus(h.deps, taskId, ['waiting_confirmation']);
      expect((await owner.post(`/api/project/${projectId}/tasks/${taskId}/confirm`)).statusCode).toBe(204);
      await fake.next('control', (m) => m.task_id === taskId && m.action === 'confirm');
      fake.send({ type: 'status', task_id: taskId, status: 'confirmed' });
      fake.send({ type: 'status', task_id: taskId, status: 'running' });
      await waitFor(async () => (await taskOf(taskId)).status === 'running' && (await taskOf(taskId)).start);
      expect((await owner.post(`/api/project/${projectId}/tasks/${taskId}/stop`)).statusCode).toBe(204);
      await fake.next('control', (m) => m.task_id === taskId && m.action === 'stop');
      expect((await taskOf(taskId)).status).toBe('stopping');
      fake.send({ type: 'finished', task_id: taskId, status: 'stopped', last_seq: 0 });
      await fake.next('done', (m) => m.task_id === taskId);
      expect((await taskOf(taskId)).status).toBe('stopped');
    });

    it("gives a runner no more tasks at once than its owner's setting, whatever its hello offers", async () => {
      const tag = newTag();
      const r = await register({ tags: [tag], project_id: projectId, max_parallel_tasks: 5 });
      const put = await owner.put(`/api/project/${projectId}/runners/${r.id}`, { max_parallel_tasks: 1 });
      expect(put.statusCode).toBe(200);
      const { fake } = await connect(r, { max_parallel_tasks: 5 });
      expect((await runnerRow(r.id))?.max_parallel_tasks).toBe(1);
      const templateId = await insertTemplate(h.deps, projectId, {
        runner_tag: tag,
        allow_parallel_tasks: 1,
      });
      const first = await postTask(templateId);
      const second = await postTask(templateId);
      await fake.next('job', (m) => m.task_id === first);
      await waitFor(
        async () => (await detailOf(second)) === `Waiting: every runner with tag "${tag}" is busy`,
      );
      expect(fake.received.some((m) => m.type === 'job' && m.task_id === second)).toBe(false);
      await finish(fake, first);
      await fake.next('job', (m) => m.task_id === second);
      await finish(fake, second);
      // And a runner offering fewer than its owner allows gets only what it offers.
      const small = await register({ tags: [tag], project_id: projectId, max_parallel_tasks: 3 });
      const { fake: smallFake } = await connect(small, { max_parallel_tasks: 1 });
      await fake.close();
      const third = await postTask(templateId);
      const fourth = await postTask(templateId);
      await smallFake.next('job', (m) => m.task_id === third);
      await waitFor(
        async () => (await detailOf(fourth)) === `Waiting: every runner with tag "${tag}" is busy`,
      );
      await finish(smallFake, third);
      await smallFake.next('job', (m) => m.task_id === fourth);
      await finish(smallFake, fourth);
    });

    it('says a disabled runner is disabled, and starts its waiting task as soon as it is enabled', async () => {
      const tag = newTag();
      const r = await register({ tags: [tag], project_id: projectId, name: `idle-${tag}` });
      const runnerUrl = `/api/project/${projectId}/runners/${r.id}`;
      expect((await owner.put(runnerUrl, { active: false })).statusCode).toBe(200);
      const { fake } = await connect(r);
      const taskId = await postTask(await insertTemplate(h.deps, projectId, { runner_tag: tag }));
      await waitFor(async () => (await detailOf(taskId)) === `Waiting: runner idle-${tag} is disabled`);
      const taskUrl = `/api/project/${projectId}/tasks/${taskId}`;
      expect((await owner.get(taskUrl)).json().runner).toBeNull();
      expect((await owner.put(runnerUrl, { active: true })).statusCode).toBe(200);
      // Well before the queue's 10-second safety poll.
      await fake.next('job', (m) => m.task_id === taskId, 1500);
      await finish(fake, taskId);
      // The task says which runner ran it, in the list too.
      expect((await owner.get(taskUrl)).json().runner).toEqual({ id: r.id, name: `idle-${tag}` });
      const listed = (await owner.get(`/api/project/${projectId}/tasks`)).json() as { id: number }[];
      expect(listed.find((t) => t.id === taskId)).toMatchObject({
        runner: { id: r.id, name: `idle-${tag}` },
      });
    });

    it('gives a draining runner no new task, and says so in its next hello too', async () => {
      const tag = newTag();
      const r = await register({ tags: [tag] });
      const { fake } = await connect(r);
      fake.send({ type: 'drain' });
      await fake.roundTrip();
      const taskId = await postTask(await insertTemplate(h.deps, projectId, { runner_tag: tag }));
      await waitFor(
        async () => (await detailOf(taskId)) === `Waiting: no runner with tag "${tag}" is online`,
      );
      await fake.close();
      const { fake: again } = await connect(r, { draining: true });
      const other = await register({ tags: [tag] });
      const { fake: fresh } = await connect(other);
      await fresh.next('job', (m) => m.task_id === taskId);
      expect(again.received.some((m) => m.type === 'job')).toBe(false);
      await finish(fresh, taskId);
    });

    it('queues a refused job again', async () => {
      const tag = newTag();
      const r = await register({ tags: [tag] });
      const { fake } = await connect(r);
      const taskId = await postTask(await insertTemplate(h.deps, projectId, { runner_tag: tag }));
      await fake.next('job', (m) => m.task_id === taskId);
      fake.send({ type: 'refuse', task_id: taskId, reason: 'no free slot' });
      // Given again once the refusal's pause is over.
      await waitFor(
        async () => fake.received.filter((m) => m.type === 'job' && m.task_id === taskId).length === 2,
      );
      await finish(fake, taskId);
    });
  });

  describe('failures', () => {
    it('closes the socket on a gap in the output and takes the resent batches after the reconnect', async () => {
      const tag = newTag();
      const r = await register({ tags: [tag] });
      const started_at = new Date().toISOString();
      const { fake } = await connect(r, { started_at });
      const taskId = await postTask(await insertTemplate(h.deps, projectId, { runner_tag: tag }));
      await fake.next('job', (m) => m.task_id === taskId);
      fake.send({ type: 'status', task_id: taskId, status: 'running' });
      fake.output(taskId, 1, ['a']);
      await fake.next('ack', (m) => m.seq === 1);
      fake.output(taskId, 3, ['c']);
      expect((await fake.closed).code).toBe(4400);
      // The task is not lost: the runner reconnects and is given it back where the server stopped.
      expect((await taskOf(taskId)).status).toBe('running');
      const { fake: again, welcome } = await connect(r, {
        started_at,
        running: [{ task_id: taskId, last_seq: 3 }],
      });
      expect(welcome.acked).toEqual([{ task_id: taskId, seq: 1 }]);
      again.output(taskId, 2, ['b']);
      again.output(taskId, 3, ['c']);
      again.send({ type: 'finished', task_id: taskId, status: 'success', last_seq: 3 });
      await again.next('done', (m) => m.task_id === taskId);
      expect(await outputOf(h.deps, taskId)).toEqual(['a', 'b', 'c']);
      expect((await taskOf(taskId)).status).toBe('success');
    });

    it('ends a task its restarted runner no longer runs, and abandons tasks the server already ended', async () => {
      const tag = newTag();
      const r = await register({ tags: [tag] });
      const { fake } = await connect(r, { started_at: new Date(Date.now() - 60_000).toISOString() });
      const taskId = await postTask(await insertTemplate(h.deps, projectId, { runner_tag: tag }));
      await fake.next('job', (m) => m.task_id === taskId);
      fake.send({ type: 'status', task_id: taskId, status: 'running' });
      await waitForStatus(h.deps, taskId, ['running']);
      await fake.close();
      const { welcome } = await connect(r, {
        started_at: new Date().toISOString(),
        running: [{ task_id: 999999, last_seq: 0 }],
      });
      expect(welcome.abandon).toEqual([999999]);
      const ended = await waitForStatus(h.deps, taskId, ['error']);
      expect(ended.message).toBe(runnerRestartedMessage);
      await waitFor(async () => (await outputOf(h.deps, taskId)).at(-1) === runnerRestartedMessage);
    });

    it('ends the running tasks of an unregistered runner', async () => {
      const tag = newTag();
      const r = await register({ tags: [tag] });
      const { fake } = await connect(r);
      const taskId = await postTask(await insertTemplate(h.deps, projectId, { runner_tag: tag }));
      await fake.next('job', (m) => m.task_id === taskId);
      fake.send({ type: 'status', task_id: taskId, status: 'running' });
      await waitForStatus(h.deps, taskId, ['running']);
      const res = await h.app.inject({
        method: 'DELETE',
        url: '/api/internal/runners',
        headers: { 'x-runner-token': r.token },
      });
      expect(res.statusCode).toBe(204);
      expect((await fake.closed).code).toBe(4401);
      expect(await waitForStatus(h.deps, taskId, ['error'])).toMatchObject({
        message: 'Runner unregistered',
      });
    });

    it('ends the running tasks of a runner deleted in the console at its next heartbeat', async () => {
      const tag = newTag();
      const r = await register({ tags: [tag] });
      const { fake } = await connect(r);
      const taskId = await postTask(await insertTemplate(h.deps, projectId, { runner_tag: tag }));
      await fake.next('job', (m) => m.task_id === taskId);
      fake.send({ type: 'status', task_id: taskId, status: 'running' });
      await waitForStatus(h.deps, taskId, ['running']);
      await h.deps.db.deleteFrom('remote_runner').where('id', '=', r.id).execute();
      fake.send({ type: 'heartbeat', running: [taskId] });
      expect((await fake.closed).code).toBe(4401);
      expect(await waitForStatus(h.deps, taskId, ['error'])).toMatchObject({
        message: 'Runner unregistered',
      });
    });

    it('ends the running task of a silent runner as lost and queues its unstarted one again', async () => {
      const tag = newTag();
      const r = await register({ tags: [tag], name: 'quiet', max_parallel_tasks: 2 });
      const { fake } = await connect(r, { max_parallel_tasks: 2 });
      // A runner that keeps sending heartbeats is never lost, however long its task runs.
      const chattyTag = newTag();
      const chatty = await register({ tags: [chattyTag] });
      const { fake: chattyFake } = await connect(chatty);
      const chattyTask = await postTask(await insertTemplate(h.deps, projectId, { runner_tag: chattyTag }));
      await chattyFake.next('job', (m) => m.task_id === chattyTask);
      chattyFake.send({ type: 'status', task_id: chattyTask, status: 'running' });
      const beats = setInterval(() => chattyFake.send({ type: 'heartbeat', running: [chattyTask] }), 1000);
      const templateId = await insertTemplate(h.deps, projectId, {
        runner_tag: tag,
        allow_parallel_tasks: 1,
      });
      const running = await postTask(templateId);
      const unstarted = await postTask(templateId);
      await fake.next('job', (m) => m.task_id === running);
      await fake.next('job', (m) => m.task_id === unstarted);
      fake.send({ type: 'status', task_id: running, status: 'running' });
      await waitForStatus(h.deps, running, ['running']);
      // No heartbeat from now on: past the 5 s lost timeout the runner is lost.
      const lost = await waitForStatus(h.deps, running, ['error'], 20_000);
      expect(lost.message).toBe('Runner lost: quiet stopped responding');
      // The reason is written as the last line just after the status is saved.
      await waitFor(
        async () => (await outputOf(h.deps, running)).at(-1) === 'Runner lost: quiet stopped responding',
      );
      await waitFor(
        async () => (await taskOf(unstarted)).status === 'waiting',
        5000,
        'the unstarted task to wait',
      );
      expect((await taskOf(unstarted)).remote_runner_id).toBeNull();
      await fake.closed;
      await waitFor(
        async () => (await detailOf(unstarted)) === `Waiting: no runner with tag "${tag}" is online`,
      );
      await owner.post(`/api/project/${projectId}/tasks/${unstarted}/stop`);
      clearInterval(beats);
      expect((await taskOf(chattyTask)).status).toBe('running');
      await finish(chattyFake, chattyTask);
    }, 40_000);
  });
  describe('server restart', () => {
    it("leaves a connected runner's task running across a server restart and takes it back on reconnect", async () => {
      const own = await harnessWithProject(dialect, { runnerRegistrationToken: GLOBAL_REGISTRATION_TOKEN });
      let second: Awaited<ReturnType<typeof buildApp>> | null = null;
      try {
        const listen = async (app: typeof own.h.app) =>
          (await app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http/, 'ws');
        const tag = newTag();
        const r = await registerRunner(own.h, { tags: [tag] });
        const started_at = new Date().toISOString();
        const fake = await FakeRunner.connect(await listen(own.h.app), r, { started_at });
        const templateId = await insertTemplate(own.h.deps, own.projectId, { runner_tag: tag });
        const res = await own.owner.post(`/api/project/${own.projectId}/tasks`, { template_id: templateId });
        const taskId = res.json().id as number;
        await fake.fake.next('job', (m) => m.task_id === taskId);
        fake.fake.send({ type: 'status', task_id: taskId, status: 'running' });
        fake.fake.output(taskId, 1, ['before the restart']);
        await fake.fake.next('ack', (m) => m.task_id === taskId && m.seq === 1);
        // The server stops (its runner socket closes) and starts again under the same instance id.
        await own.h.app.close();
        expect((await fake.fake.closed).code).toBe(1001);
        const handle = { db: own.h.deps.db, dialect: own.h.deps.dialect, destroy: async () => {} };
        second = await buildApp(own.h.config, { db: handle, logger: false, checkResponses: true });
        await second.app.ready();
        const row = () =>
          own.h.deps.db.selectFrom('task').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow();
        expect((await row()).status).toBe('running');
        const again = await FakeRunner.connect(await listen(second.app), r, {
          started_at,
          running: [{ task_id: taskId, last_seq: 2 }],
        });
        expect(again.welcome.acked).toEqual([{ task_id: taskId, seq: 1 }]);
        again.fake.output(taskId, 2, ['after the restart']);
        again.fake.send({ type: 'finished', task_id: taskId, status: 'success', last_seq: 2 });
        await again.fake.next('done', (m) => m.task_id === taskId);
        expect((await row()).status).toBe('success');
        expect(await outputOf(own.h.deps, taskId)).toEqual(['before the restart', 'after the restart']);
        await again.fake.close();
      } finally {
        await second?.app.close();
        await own.h.close();
      }
    }, 60_000);
  });
});
