import type { EventView } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { insertRunner } from '../../../test/support/runner-rows';
import { insertTemplate, waitFor } from '../../../test/support/task-fixtures';
import { templateFixtures } from '../../../test/support/template-fixtures';

/**
 * Activity events carry what happened as data — a kind and its params — beside the English description the API
 * keeps for Semaphore's clients, so the console can say it in the reader's language.
 */
describe.each(testDialects())('event kinds on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  const events = async () =>
    (await owner.get(`/api/project/${projectId}/events?limit=100`)).json() as EventView[];
  const find = async (kind: string) => (await events()).find((e) => e.kind === kind);

  beforeAll(async () => {
    h = await createHarness(dialect);
    owner = await h.userClient({ can_create_project: true });
    const res = await owner.post('/api/projects', { name: 'Kinds "project" <b>' });
    expect(res.statusCode).toBe(201);
    projectId = res.json().id;
  });
  afterAll(() => h?.close());

  it('records a created project as project.created with its name, and keeps the description', async () => {
    expect(await find('project.created')).toMatchObject({
      object_type: 'project',
      object_id: projectId,
      description: 'Project Kinds "project" <b> created',
      params: { name: 'Kinds "project" <b>' },
    });
  });

  it('records creating, updating and deleting an object with its name', async () => {
    const base = `/api/project/${projectId}`;
    const created = await owner.post(`${base}/environment`, { name: 'Staging', json: '{}', env: '{}' });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as number;
    expect(
      (await owner.put(`${base}/environment/${id}`, { id, name: 'Production', json: '{}', env: '{}' }))
        .statusCode,
    ).toBe(204);
    expect((await owner.del(`${base}/environment/${id}`)).statusCode).toBe(204);
    const mine = (await events()).filter((e) => e.object_type === 'environment' && e.object_id === id);
    expect(mine.map((e) => [e.kind, e.params, e.description])).toEqual([
      ['environment.deleted', { name: 'Production' }, 'Environment Production deleted'],
      ['environment.updated', { name: 'Production' }, 'Environment Production updated'],
      ['environment.created', { name: 'Staging' }, 'Environment Staging created'],
    ]);
  });

  it('records a schedule by its name, or its template name when unnamed, with the template', async () => {
    const base = `/api/project/${projectId}`;
    const fx = await templateFixtures(h, projectId);
    const templateId = await insertTemplate(h.deps, projectId, {
      name: 'Nightly',
      app: 'bash',
      playbook: 'nightly.sh',
      repository_id: fx.repository,
      inventory_id: fx.inventory,
      environment_id: fx.environment,
    });
    const created = await owner.post(`${base}/schedules`, {
      template_id: templateId,
      cron_format: '0 3 * * *',
      name: 'At three',
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as number;
    const put = await owner.put(`${base}/schedules/${id}`, {
      id,
      template_id: templateId,
      cron_format: '0 4 * * *',
      name: '',
    });
    expect(put.statusCode, put.body).toBe(204);
    expect((await owner.del(`${base}/schedules/${id}`)).statusCode).toBe(204);
    const mine = (await events()).filter((e) => e.object_type === 'schedule' && e.object_id === id);
    expect(mine.map((e) => [e.kind, e.params, e.description])).toEqual([
      [
        'schedule.deleted',
        { name: 'Nightly', template: 'Nightly' },
        'Schedule (0 4 * * *) of template Nightly deleted',
      ],
      [
        'schedule.updated',
        { name: 'Nightly', template: 'Nightly' },
        'Schedule (0 4 * * *) of template Nightly updated',
      ],
      [
        'schedule.created',
        { name: 'At three', template: 'Nightly' },
        'Schedule At three (0 3 * * *) of template Nightly created',
      ],
    ]);
  });

  it('records team changes with the member name and roles', async () => {
    const base = `/api/project/${projectId}`;
    const ann = await h.userClient({ username: 'ann-kinds' });
    const bob = await h.userClient({ username: 'bob-kinds' });
    for (const user of [ann, bob])
      expect((await owner.post(`${base}/users`, { user_id: user.userId, role: 'guest' })).statusCode).toBe(
        204,
      );
    expect((await owner.put(`${base}/users/${ann.userId}`, { role: 'task_runner' })).statusCode).toBe(204);
    expect((await owner.del(`${base}/users/${ann.userId}`)).statusCode).toBe(204);
    expect((await bob.del(`${base}/me`)).statusCode).toBe(204);
    const of = async (userId: number) =>
      (await events())
        .filter((e) => e.object_type === 'user' && e.object_id === userId)
        .map((e) => [e.kind, e.params, e.description]);
    expect(await of(ann.userId)).toEqual([
      ['member.removed', { name: 'ann-kinds' }, 'User ann-kinds removed from the team'],
      [
        'member.changed',
        { name: 'ann-kinds', from: 'guest', role: 'task_runner' },
        'User ann-kinds role changed from guest to task_runner',
      ],
      ['member.added', { name: 'ann-kinds', role: 'guest' }, 'User ann-kinds added to the team as guest'],
    ]);
    expect(await of(bob.userId)).toEqual([
      ['member.left', { name: 'bob-kinds' }, 'User bob-kinds left the project'],
      ['member.added', { name: 'bob-kinds', role: 'guest' }, 'User bob-kinds added to the team as guest'],
    ]);
  });

  it('records invites sent, withdrawn, accepted and declined with the user name and role', async () => {
    const base = `/api/project/${projectId}`;
    const [cy, di, ed] = await Promise.all(
      ['cy-kinds', 'di-kinds', 'ed-kinds'].map((username) => h.userClient({ username })),
    );
    const invite = async (user: Client, role: string) => {
      const res = await owner.post(`${base}/invites`, { user_id: user.userId, role });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as number;
    };
    const withdrawn = await invite(cy, 'guest');
    expect((await owner.del(`${base}/invites/${withdrawn}`)).statusCode).toBe(204);
    const accepted = await invite(di, 'manager');
    expect((await di.post(`/api/user/invites/${accepted}/accept`)).statusCode).toBe(204);
    const declined = await invite(ed, 'guest');
    expect((await ed.post(`/api/user/invites/${declined}/decline`)).statusCode).toBe(204);
    const of = async (id: number) =>
      (await events())
        .filter((e) => e.object_type === 'invite' && e.object_id === id)
        .map((e) => [e.kind, e.params, e.description]);
    expect(await of(withdrawn)).toEqual([
      ['invite.withdrawn', { name: 'cy-kinds' }, 'Invite of user cy-kinds withdrawn'],
      ['invite.sent', { name: 'cy-kinds', role: 'guest' }, 'User cy-kinds invited to the team as guest'],
    ]);
    expect(await of(accepted)).toEqual([
      [
        'invite.accepted',
        { name: 'di-kinds', role: 'manager' },
        'User di-kinds accepted the invite and joined the team as manager',
      ],
      ['invite.sent', { name: 'di-kinds', role: 'manager' }, 'User di-kinds invited to the team as manager'],
    ]);
    expect(await of(declined)).toEqual([
      ['invite.declined', { name: 'ed-kinds' }, 'User ed-kinds declined the invite'],
      ['invite.sent', { name: 'ed-kinds', role: 'guest' }, 'User ed-kinds invited to the team as guest'],
    ]);
  });

  it('records creating, updating and deleting an integration with its name', async () => {
    const base = `/api/project/${projectId}`;
    const fx = await templateFixtures(h, projectId);
    const templateId = await insertTemplate(h.deps, projectId, {
      name: 'Hooked',
      app: 'bash',
      playbook: 'hook.sh',
      repository_id: fx.repository,
      inventory_id: fx.inventory,
      environment_id: fx.environment,
    });
    const created = await owner.post(`${base}/integrations`, { name: 'Push', template_id: templateId });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as number;
    const put = await owner.put(`${base}/integrations/${id}`, {
      id,
      name: 'Tag push',
      template_id: templateId,
    });
    expect(put.statusCode, put.body).toBe(204);
    expect((await owner.del(`${base}/integrations/${id}`)).statusCode).toBe(204);
    const mine = (await events()).filter((e) => e.object_type === 'integration' && e.object_id === id);
    expect(mine.map((e) => [e.kind, e.params, e.description])).toEqual([
      ['integration.deleted', { name: 'Tag push' }, 'Integration Tag push deleted'],
      ['integration.updated', { name: 'Tag push' }, 'Integration Tag push updated'],
      ['integration.created', { name: 'Push' }, 'Integration Push created'],
    ]);
  });

  it('records users created, updated, given a new password, unlocked and deleted with their name', async () => {
    const admin = await h.userClient({ admin: true });
    const created = await admin.post('/api/users', {
      name: 'Fay',
      username: 'fay-kinds',
      email: 'fay-kinds@example.test',
      password: 'pw-fay-kinds',
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as number;
    const user = `/api/users/${id}`;
    const put = await admin.put(user, {
      name: 'Fay',
      username: 'fae-kinds',
      email: 'fay-kinds@example.test',
    });
    expect(put.statusCode, put.body).toBe(204);
    expect((await admin.post(`${user}/password`, { password: 'pw-fae-kinds' })).statusCode).toBe(204);
    expect((await admin.del(`${user}/sign-in-lock`)).statusCode).toBe(204);
    expect((await admin.del(user)).statusCode).toBe(204);
    const all = (await admin.get('/api/events?limit=100')).json() as EventView[];
    const mine = all.filter((e) => e.object_type === 'user' && e.object_id === id && e.project_id === null);
    expect(mine.map((e) => [e.kind, e.params, e.description])).toEqual([
      ['user.deleted', { name: 'fae-kinds' }, 'User fae-kinds deleted'],
      ['user.unlocked', { name: 'fae-kinds' }, 'Sign-in lock of user fae-kinds cleared'],
      ['user.password', { name: 'fae-kinds' }, 'Password of user fae-kinds changed'],
      ['user.updated', { name: 'fae-kinds' }, 'User fae-kinds updated'],
      ['user.created', { name: 'fay-kinds' }, 'User fay-kinds created'],
    ]);
  });

  it('records runners updated and deleted with their name, and registration tokens made', async () => {
    const base = `/api/project/${projectId}`;
    const id = await insertRunner(h.deps.db, { project_id: projectId, name: 'gil-kinds' });
    const put = await owner.put(`${base}/runners/${id}`, { name: 'hal-kinds' });
    expect(put.statusCode, put.body).toBe(200);
    expect((await owner.del(`${base}/runners/${id}`)).statusCode).toBe(204);
    expect((await owner.post(`${base}/runners/registration-tokens`)).statusCode).toBe(201);
    const mine = (await events()).filter((e) => e.object_type === 'runner');
    expect(mine.map((e) => [e.kind, e.params, e.description, e.object_id])).toEqual([
      ['runner.token', {}, 'Runner registration token created', null],
      ['runner.deleted', { name: 'hal-kinds' }, 'Runner hal-kinds deleted', id],
      ['runner.updated', { name: 'hal-kinds' }, 'Runner hal-kinds updated', id],
    ]);
  });

  it('records a task as queued and finished with its id and status', async () => {
    const fx = await templateFixtures(h, projectId);
    const templateId = await insertTemplate(h.deps, projectId, {
      name: 'Unreachable',
      app: 'bash',
      playbook: 'missing.sh',
      repository_id: fx.repository,
      inventory_id: fx.inventory,
      environment_id: fx.environment,
    });
    const started = await owner.post(`/api/project/${projectId}/tasks`, { template_id: templateId });
    expect(started.statusCode).toBe(201);
    const taskId = started.json().id as number;
    expect(await find('task.queued')).toMatchObject({
      object_type: 'task',
      object_id: taskId,
      params: { task_id: taskId },
      description: `Task ID ${taskId} queued for running`,
    });
    // The repository cannot be cloned: the task ends in error.
    const finished = await waitFor(() => find('task.finished'), 60_000, 'the task.finished event');
    expect(finished).toMatchObject({ object_id: taskId, params: { task_id: taskId, status: 'error' } });
    expect(finished.description).toBe(`Task ID ${taskId} finished: error`);
  }, 90_000);

  it('lists older events, written without a kind, with a null kind and params', async () => {
    await h.deps.db
      .insertInto('event')
      .values({
        project_id: projectId,
        user_id: owner.userId,
        object_type: 'template',
        object_id: null,
        description: 'Template Old created',
        created: new Date().toISOString(),
      })
      .execute();
    const old = (await events()).find((e) => e.description === 'Template Old created');
    expect(old).toMatchObject({ kind: null, params: null });
  });
});
