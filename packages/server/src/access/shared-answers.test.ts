import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { rows } from '../../test/support/scheduler-rows';
import { EventBus } from '../live/bus';
import {
  CALLER_LISTS,
  callerSharedAnswer,
  MAX_KEPT_BYTES,
  SHARED_ANSWER_MS,
  SharedAnswers,
  STALE_ANSWER_MS,
  sharedAnswersOf,
} from './shared-answers';

/** The fresh answer's text kept for key, or undefined. */
const freshBody = (answers: SharedAnswers, key: string) => {
  const kept = answers.lookup(key);
  return kept?.fresh ? kept.answer.body.toString() : undefined;
};

describe('shared answers, alone', () => {
  it('keeps an answer for SHARED_ANSWER_MS, then asks again', () => {
    let now = 1_000_000;
    const answers = new SharedAnswers(() => now);
    answers.keep('1 /list', 1, answers.version(1), '[1]', 'application/json');
    now += SHARED_ANSWER_MS - 1;
    expect(freshBody(answers, '1 /list')).toBe('[1]');
    now += 1;
    expect(freshBody(answers, '1 /list')).toBeUndefined();
  });

  it('offers an answer past its time, with no change announced, as stale until STALE_ANSWER_MS', () => {
    let now = 1_000_000;
    const answers = new SharedAnswers(() => now);
    answers.keep('1 /list', 1, answers.version(1), '[1]', 'application/json');
    expect(answers.lookup('1 /list')?.fresh).toBe(true);
    now += SHARED_ANSWER_MS;
    expect(answers.lookup('1 /list')).toMatchObject({ fresh: false, answer: { body: Buffer.from('[1]') } });
    now += STALE_ANSWER_MS - SHARED_ANSWER_MS - 1;
    expect(answers.lookup('1 /list')?.fresh).toBe(false);
    now += 1;
    expect(answers.lookup('1 /list')).toBeUndefined();
    // A change drops it at once, stale or not.
    answers.keep('1 /list', 1, answers.version(1), '[2]', 'application/json');
    now += SHARED_ANSWER_MS;
    answers.changed(1);
    expect(answers.lookup('1 /list')).toBeUndefined();
  });

  it("drops a project's answers on its change, every answer on a change of every project", () => {
    const answers = new SharedAnswers(() => 0);
    for (const key of ['1 /a', '1 /b', '10 /a', '2 /a'])
      answers.keep(key, Number(key.split(' ')[0]), 0, key, 'application/json');
    answers.changed(1);
    expect(['1 /a', '1 /b', '10 /a', '2 /a'].map((key) => freshBody(answers, key) ?? null)).toEqual([
      null,
      null,
      '10 /a',
      '2 /a',
    ]);
    answers.changed(null);
    expect([freshBody(answers, '10 /a'), freshBody(answers, '2 /a')]).toEqual([undefined, undefined]);
  });

  it('holds at most MAX_KEPT_BYTES, dropping the least recently kept, whatever query strings a client makes up', () => {
    const answers = new SharedAnswers(() => 0);
    const big = 'x'.repeat(MAX_KEPT_BYTES / 8);
    for (let i = 0; i < 20; i++)
      answers.keep(`1 /list?junk=${i}`, 1, answers.version(1), big, 'application/json');
    expect(answers.bytes).toBeLessThanOrEqual(MAX_KEPT_BYTES);
    expect(answers.bytes).toBe(8 * big.length);
    expect(freshBody(answers, '1 /list?junk=19')).toBe(big);
    expect(freshBody(answers, '1 /list?junk=11')).toBeUndefined();
    // An answer larger than a quarter of the budget is not kept at all; dropped answers free their bytes.
    answers.keep('1 /huge', 1, answers.version(1), 'x'.repeat(MAX_KEPT_BYTES / 2), 'application/json');
    expect(freshBody(answers, '1 /huge')).toBeUndefined();
    answers.changed(1);
    expect(answers.bytes).toBe(0);
  });

  it('does not keep an answer computed while its project changed', () => {
    const answers = new SharedAnswers(() => 0);
    const since = answers.version(3);
    answers.changed(3);
    answers.keep('3 /list', 3, since, 'stale', 'application/json');
    expect(freshBody(answers, '3 /list')).toBeUndefined();
    const again = answers.version(3);
    answers.changed(null);
    answers.keep('3 /list', 3, again, 'stale', 'application/json');
    expect(freshBody(answers, '3 /list')).toBeUndefined();
    answers.keep('3 /list', 3, answers.version(3), 'fresh', 'application/json');
    expect(freshBody(answers, '3 /list')).toBe('fresh');
  });
});

describe('shared answers being computed', () => {
  /** The request's turn: computing (its entry) or waiting (the answer it will be handed). */
  const computes = (turn: ReturnType<SharedAnswers['wait']>) => {
    if (!('compute' in turn)) throw new Error('expected to compute');
    return turn.compute;
  };
  const waits = (turn: ReturnType<SharedAnswers['wait']>) => {
    if (!('wait' in turn)) throw new Error('expected to wait');
    return turn.wait;
  };

  it('makes later requests for the same answer wait for the first, and hands them its answer', async () => {
    const answers = new SharedAnswers(() => 0);
    const first = computes(answers.wait('1 /list', 1));
    const second = waits(answers.wait('1 /list', 1));
    const third = waits(answers.wait('1 /list', 1));
    expect(third).toBe(second);
    computes(answers.wait('1 /other', 1)); // another answer is computed alongside
    const made = answers.keep('1 /list', 1, first.since, '[]', 'application/json');
    answers.computed('1 /list', first, made);
    expect((await second)?.body.toString()).toBe('[]');
    expect(freshBody(answers, '1 /list')).toBe('[]');
    // Done: the next miss computes again.
    computes(answers.wait('1 /list', 1));
  });

  it('hands the answer to the requests waiting for it, also one too large to keep', async () => {
    const answers = new SharedAnswers(() => 0);
    const big = 'x'.repeat(MAX_KEPT_BYTES / 4 + 1);
    const first = computes(answers.wait('1 /list', 1));
    const waiting = waits(answers.wait('1 /list', 1));
    const made = answers.keep('1 /list', 1, first.since, big, 'application/json');
    expect(made.body.length).toBe(big.length);
    // Not kept for later requests...
    expect(answers.lookup('1 /list')).toBeUndefined();
    answers.computed('1 /list', first, made);
    // ...but those already waiting get it rather than computing it again one after another.
    expect((await waiting)?.body.toString()).toBe(big);
  });

  it('after a change, a new request computes anew; those that waited before it still get the earlier answer', async () => {
    const answers = new SharedAnswers(() => 0);
    const first = computes(answers.wait('1 /list', 1));
    const before = waits(answers.wait('1 /list', 1));
    answers.changed(1);
    // A request after the change does not wait for an answer begun before it.
    const second = computes(answers.wait('1 /list', 1));
    const after = waits(answers.wait('1 /list', 1));
    // The first is done: its answer is not kept (made across a change), but goes to those who asked before it...
    const made = answers.keep('1 /list', 1, first.since, '["before"]', 'application/json');
    expect(answers.lookup('1 /list')).toBeUndefined();
    answers.computed('1 /list', first, made);
    expect((await before)?.body.toString()).toBe('["before"]');
    // ...and leaves the second one's computation in place: its waiters get the second answer.
    let settled = false;
    void after.then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    answers.computed(
      '1 /list',
      second,
      answers.keep('1 /list', 1, second.since, '["after"]', 'application/json'),
    );
    expect((await after)?.body.toString()).toBe('["after"]');
    expect(freshBody(answers, '1 /list')).toBe('["after"]');
  });

  it('a computation that ends without an answer wakes its waiters to look again', async () => {
    const answers = new SharedAnswers(() => 0);
    const first = computes(answers.wait('1 /list', 1));
    const waiting = waits(answers.wait('1 /list', 1));
    answers.computed('1 /list', first, undefined);
    expect(await waiting).toBeUndefined();
  });
});

describe('a shared answer whose computing client leaves', () => {
  let app: FastifyInstance;
  let url: string;
  const bus = new EventBus();
  const gates: (() => void)[] = [];
  const arrivals: (() => void)[] = [];
  /** The caller's answer of the list: the first test sees it computed under this key, the others rely on that. */
  const key = `${CALLER_LISTS} 7:0:* /api/list`;
  /** How many requests the list's handler has taken. */
  let handled = 0;
  /** Requests marked `x-slow-sign-in` wait here, as a session read does, before the shared answers' hook runs. */
  const signIns: { gone: Promise<unknown>; go: () => void }[] = [];

  beforeAll(async () => {
    app = Fastify();
    app.decorateRequest('user', null);
    app.decorateRequest('tokenLimits', null);
    app.addHook('onRequest', async (request, reply) => {
      request.user = { id: 7, admin: 0 } as FastifyRequest['user'];
      if (!request.headers['x-slow-sign-in']) return;
      const gone = new Promise((resolve) => reply.raw.once('close', resolve));
      await new Promise<void>((go) => signIns.push({ gone, go }));
    });
    // The list waits until the test lets it answer; each request's arrival is told.
    app.get('/api/list', { ...callerSharedAnswer({ bus }) }, async () => {
      handled++;
      arrivals.shift()?.();
      await new Promise<void>((resolve) => gates.push(resolve));
      return ['answer'];
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/list`;
  });
  afterAll(async () => app?.close());

  it('no longer holds the answer as being computed, so the next request never waits for it', async () => {
    const arrived = new Promise<void>((resolve) => arrivals.push(resolve));
    const request = http.request(url, { agent: false });
    request.on('error', () => {});
    request.end();
    await arrived;
    expect(sharedAnswersOf(bus).pending(key)).toBe(true);
    // The client leaves while its answer is computed, which then comes after all (a read that ran to its end).
    const closed = new Promise((resolve) => request.once('close', resolve));
    request.destroy();
    await closed;
    gates.shift()?.();
    await expect.poll(() => sharedAnswersOf(bus).pending(key)).toBe(false);
    // What it made (for a client no longer there) is kept for the next one.
    expect(await (await fetch(url)).json()).toEqual(['answer']);
  });

  it('is not held as being computed by a request whose client left before it was signed in', async () => {
    sharedAnswersOf(bus).changed(CALLER_LISTS); // the answer kept by the test before is not this one's
    const request = http.request(url, { agent: false, headers: { 'x-slow-sign-in': '1' } });
    request.on('error', () => {});
    request.end();
    await expect.poll(() => signIns.length).toBe(1);
    const signIn = signIns.shift();
    // The client leaves while it is signed in: its response has closed before the list's hooks see the request.
    request.destroy();
    await signIn?.gone;
    const before = handled;
    signIn?.go();
    // Its handler runs (Fastify goes on for a response that closed without ending), past the shared answers' hook.
    await expect.poll(() => handled).toBe(before + 1);
    gates.shift()?.();
    await expect.poll(() => sharedAnswersOf(bus).pending(key)).toBe(false);
    // The next client is answered without waiting for a computation no one finishes.
    const next = fetch(url);
    await expect.poll(() => handled).toBe(before + 2);
    gates.shift()?.();
    expect(await (await next).json()).toEqual(['answer']);
  });
});

describe.each(testDialects())('shared project lists on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  let owner: Client;
  let guest: Client;
  let projectId: number;
  let otherProject: number;
  let templateId: number;
  let taskId: number;
  const p = (path: string) => `/api/project/${projectId}${path}`;

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true });
    owner = await h.userClient({ can_create_project: true, username: 'owner' });
    ({
      projectId,
      members: { guest },
    } = await h.projectWithTeam(owner));
    otherProject = (await owner.post('/api/projects', { name: 'Other' })).json().id;
    const make = rows(h.deps.db, h.deps.dialect);
    templateId = await make.template(projectId, { name: 'Deploy' });
    taskId = await make.task(projectId, templateId, { status: 'success', user_id: owner.userId });
  });
  afterAll(async () => h?.close());
  // The lists are read with the clock stopped: an answer then stays kept until the test moves the clock on.
  afterEach(() => vi.useRealTimers());
  const stopClock = () => vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });

  const templateNames = async (client: Client) =>
    ((await client.get(p('/templates'))).json() as { name: string }[]).map((t) => t.name);
  const renameTemplateBehindTheApi = (name: string) =>
    h.deps.db.updateTable('template').set({ name }).where('id', '=', templateId).execute();

  /** The engine's update of the test's task on the bus, as it publishes one after saving a status. */
  const announceTaskStatus = (status: 'success' | 'error') =>
    h.deps.bus.publish({
      type: 'update',
      project_id: projectId,
      template_id: templateId,
      task_id: taskId,
      status,
      start: null,
      end: null,
      version: null,
      message: '',
      user_id: owner.userId,
      created: new Date().toISOString(),
      commit_hash: null,
      commit_message: null,
      status_detail: null,
    });

  it('answers a list from memory until a write through the API changes the project', async () => {
    stopClock();
    expect(await templateNames(guest)).toEqual(['Deploy']);
    // Changed where no event announces it (another instance without Redis): the kept answer stands...
    await renameTemplateBehindTheApi('Deploy (renamed)');
    expect(await templateNames(guest)).toEqual(['Deploy']);
    // ...until SHARED_ANSWER_MS has passed.
    vi.setSystemTime(Date.now() + SHARED_ANSWER_MS);
    expect(await templateNames(guest)).toEqual(['Deploy (renamed)']);

    // Any write through the API in the project drops its answers: its own client, and every other, reads the
    // project as it is at once.
    await renameTemplateBehindTheApi('Deploy');
    expect(await templateNames(guest)).toEqual(['Deploy (renamed)']);
    const view = await owner.post(p('/views'), { title: 'Production' });
    expect(view.statusCode).toBe(201);
    expect(await templateNames(owner)).toEqual(['Deploy']);
    expect(await templateNames(guest)).toEqual(['Deploy']);
    // A refused write changes nothing and keeps the answers.
    await renameTemplateBehindTheApi('Deploy (renamed again)');
    expect((await owner.post(p('/views'), { title: '' })).statusCode).toBe(400);
    expect(await templateNames(guest)).toEqual(['Deploy']);
    vi.setSystemTime(Date.now() + SHARED_ANSWER_MS);
    await renameTemplateBehindTheApi('Deploy');
  });

  it('sends the last answer while another request recomputes one past its time, never one a change dropped', async () => {
    stopClock();
    const shared = sharedAnswersOf(h.deps.bus);
    const key = `${projectId} ${p('/templates')}`;
    h.deps.bus.emit('projectChanged', { projectId }); // an answer kept by an earlier test is not this one's
    expect(await templateNames(guest)).toEqual(['Deploy']);
    await renameTemplateBehindTheApi('Deploy (renamed)');
    vi.setSystemTime(Date.now() + SHARED_ANSWER_MS);
    // Another request is recomputing the list (held here): this one is not made to wait for it.
    const held = shared.wait(key, projectId);
    if (!('compute' in held)) throw new Error('expected to compute');
    expect(await templateNames(guest)).toEqual(['Deploy']);
    shared.computed(key, held.compute);
    // Nobody recomputing: the request reads the list itself.
    expect(await templateNames(guest)).toEqual(['Deploy (renamed)']);
    // After an announced change the dropped answer is never sent, recompute or not: the request waits.
    await renameTemplateBehindTheApi('Deploy');
    h.deps.bus.emit('projectChanged', { projectId });
    const again = shared.wait(key, projectId);
    if (!('compute' in again)) throw new Error('expected to compute');
    const waiting = templateNames(guest);
    shared.computed(key, again.compute);
    expect(await waiting).toEqual(['Deploy']);
  });

  it('reads a task list again when a task of the project changes status', async () => {
    stopClock();
    const statusOf = async (path: string) =>
      ((await guest.get(p(path))).json() as { id: number; status: string }[]).find((t) => t.id === taskId)
        ?.status;
    expect(await statusOf('/tasks')).toBe('success');
    expect(await statusOf(`/templates/${templateId}/tasks/last`)).toBe('success');
    await h.deps.db.updateTable('task').set({ status: 'error' }).where('id', '=', taskId).execute();
    // The engine saves a status, then publishes it: the update drops the project's answers.
    announceTaskStatus('error');
    expect(await statusOf('/tasks')).toBe('error');
    expect(await statusOf(`/templates/${templateId}/tasks/last`)).toBe('error');
    // Retention (or another instance's write through Redis) announces a change the same way.
    await h.deps.db.updateTable('task').set({ status: 'success' }).where('id', '=', taskId).execute();
    h.deps.bus.emit('projectChanged', { projectId });
    expect(await statusOf('/tasks')).toBe('success');
  });

  it('shows a task started through the API at once by its own update, and keeps what else is remembered', async () => {
    stopClock();
    h.deps.bus.emit('projectChanged', { projectId: null }); // answers kept by earlier tests are not this one's
    const listed = async () => ((await guest.get(p('/tasks'))).json() as { id: number }[]).map((t) => t.id);
    const before = await listed();
    const guestProject = (await projectNames(guest))[0] as string;
    const announced: (number | null)[] = [];
    const onChange = ({ projectId: changed }: { projectId: number | null }) => void announced.push(changed);
    h.deps.bus.on('projectChanged', onChange);
    try {
      await renameProjectBehindTheApi(projectId, `${guestProject} (renamed)`);
      const started = await owner.post(p('/tasks'), { template_id: templateId });
      expect(started.statusCode, started.body).toBe(201);
      // The task's update dropped the project's lists: every member sees the new task at once...
      expect(await listed()).toEqual([started.json().id, ...before]);
      // ...and nothing else was announced as changed: the callers' projects lists stand.
      expect(announced).toEqual([]);
      expect(await projectNames(guest)).toEqual([guestProject]);
      // Another write in the project is a change of it.
      expect((await owner.post(p('/views'), { title: 'After a start' })).statusCode).toBe(201);
      expect(announced).toEqual([projectId]);
      expect(await projectNames(guest)).toEqual([`${guestProject} (renamed)`]);
    } finally {
      h.deps.bus.off('projectChanged', onChange);
      await renameProjectBehindTheApi(projectId, guestProject);
    }
  });

  it("a write outside any project (a user renamed) drops every project's answers", async () => {
    stopClock();
    const starter = async () =>
      ((await guest.get(p('/tasks'))).json() as { id: number; user_name: string }[]).find(
        (t) => t.id === taskId,
      )?.user_name;
    const before = await starter();
    const user = (await admin.get(`/api/users/${owner.userId}`)).json();
    const renamed = await admin.put(`/api/users/${owner.userId}`, { ...user, name: 'Renamed Owner' });
    expect(renamed.statusCode).toBe(204);
    expect(before).not.toBe('Renamed Owner');
    expect(await starter()).toBe('Renamed Owner');
  });

  const projectNames = async (client: Client) =>
    ((await client.get('/api/projects')).json() as { name: string }[]).map((project) => project.name).sort();
  const renameProjectBehindTheApi = (id: number, name: string) =>
    h.deps.db.updateTable('project').set({ name }).where('id', '=', id).execute();

  it('keeps each caller their own projects list until a write or an access change, not a task update', async () => {
    stopClock();
    h.deps.bus.emit('projectChanged', { projectId: null }); // answers kept by earlier tests are not this one's
    const [guestSees, ownerSees] = [await projectNames(guest), await projectNames(owner)];
    // Each caller their own list: the guest is in one project, the owner in both.
    expect(ownerSees).toEqual([...guestSees, 'Other'].sort());
    expect(guestSees).not.toContain('Other');
    const guestProject = guestSees[0] as string;
    // A token limited to one project is another caller, though it is the owner's.
    const limited = await owner.post('/api/user/tokens', {
      name: 'one project',
      project_ids: [otherProject],
    });
    expect(limited.statusCode, limited.body).toBe(201);
    const byToken = await h.app.inject({
      method: 'GET',
      url: '/api/projects',
      headers: { authorization: `Bearer ${limited.json().token}` },
    });
    expect((byToken.json() as { name: string }[]).map((project) => project.name)).toEqual(['Other']);

    // Changed where no event announces it: the kept list stands, also through a task update of the project...
    await renameProjectBehindTheApi(projectId, `${guestProject} (renamed)`);
    announceTaskStatus('success');
    expect(await projectNames(guest)).toEqual([guestProject]);
    // ...until a write through the API in any project: every caller reads the rename at once.
    expect((await owner.post(`/api/project/${otherProject}/views`, { title: 'Staging' })).statusCode).toBe(
      201,
    );
    expect(await projectNames(guest)).toEqual([`${guestProject} (renamed)`]);
    expect(await projectNames(owner)).toEqual([`${guestProject} (renamed)`, 'Other'].sort());

    // An access event (here a membership changed by another instance, through the bus) drops the lists too.
    await renameProjectBehindTheApi(projectId, guestProject);
    h.deps.bus.emit('membership', { userId: guest.userId });
    expect(await projectNames(guest)).toEqual([guestProject]);
    // And what no event announces shows after SHARED_ANSWER_MS.
    expect(await projectNames(owner)).toEqual([guestProject, 'Other'].sort());
    await renameProjectBehindTheApi(otherProject, 'Other (renamed)');
    expect(await projectNames(owner)).toEqual([guestProject, 'Other'].sort());
    vi.setSystemTime(Date.now() + SHARED_ANSWER_MS);
    expect(await projectNames(owner)).toEqual([guestProject, 'Other (renamed)'].sort());
    await renameProjectBehindTheApi(otherProject, 'Other');
  });

  it('keeps the users list for administrators only, and drops it on a user change through the API', async () => {
    stopClock();
    const logins = async () =>
      ((await admin.get('/api/users')).json() as { username: string }[]).map((user) => user.username);
    const before = await logins();
    expect(before).toContain('owner');
    expect((await guest.get('/api/users')).statusCode).toBe(403);
    const shared = sharedAnswersOf(h.deps.bus);
    expect(shared.lookup(`${CALLER_LISTS} ${admin.userId}:1:* /api/users`)?.fresh).toBe(true);
    const made = await admin.post('/api/users', {
      name: 'Newcomer',
      username: 'newcomer',
      email: 'newcomer@example.com',
      password: 'a long enough password',
    });
    expect(made.statusCode, made.body).toBe(201);
    expect(await logins()).toEqual(expect.arrayContaining([...before, 'newcomer']));
  });

  it('keeps answers apart by project and query, and still refuses who may not read them', async () => {
    stopClock();
    const make = rows(h.deps.db, h.deps.dialect);
    await make.template(otherProject, { name: 'Elsewhere' });
    expect(await templateNames(guest)).toEqual(['Deploy']);
    const other = await owner.get(`/api/project/${otherProject}/templates`);
    expect((other.json() as { name: string }[]).map((t) => t.name)).toEqual(['Elsewhere']);
    // The guest is no member of the other project: its kept answer is not theirs to read.
    expect((await guest.get(`/api/project/${otherProject}/templates`)).statusCode).toBe(403);
    expect((await h.anonymous().get(p('/templates'))).statusCode).toBe(401);
    // Many at once on an answer nobody keeps yet: every one gets the same, complete list.
    h.deps.bus.emit('projectChanged', { projectId });
    const all = await Promise.all(Array.from({ length: 20 }, () => guest.get(p('/templates'))));
    expect(new Set(all.map((res) => `${res.statusCode} ${res.body}`)).size).toBe(1);
    expect((all[0]!.json() as { name: string }[]).map((t) => t.name)).toEqual(['Deploy']);
    // Another query string is another answer.
    await make.task(projectId, templateId, { status: 'success' });
    h.deps.bus.emit('projectChanged', { projectId });
    const one = (await guest.get(p('/tasks?limit=1'))).json() as unknown[];
    const two = (await guest.get(p('/tasks?limit=2'))).json() as unknown[];
    expect([one.length, two.length]).toEqual([1, 2]);
  });
});
