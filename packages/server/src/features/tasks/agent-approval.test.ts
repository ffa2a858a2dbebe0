import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  gitRepo,
  insertRepository,
  insertTemplate,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { createTask } from './tasks.service';

describe.each(testDialects())('runs started by AI agents wait for approval on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let members: Record<'manager' | 'task_runner' | 'guest', Client>;
  let projectId: number;
  let quick: number;
  const p = (path = '') => `/api/project/${projectId}${path}`;

  beforeAll(async () => {
    h = await createHarness(dialect);
    owner = await h.userClient({ can_create_project: true });
    ({ projectId, members } = await h.projectWithTeam(owner, 'Agents'));
    const repository = await insertRepository(h.deps, projectId, {
      git_url: gitRepo({ 'run.sh': 'echo agent-run-output\n' }),
    });
    quick = await insertTemplate(h.deps, projectId, {
      name: 'Quick',
      repository_id: repository,
      allow_parallel_tasks: 1,
    });
  });
  afterAll(async () => h?.close());

  const token = { id: 'tok-agent-1', name: 'my agent' };
  /** A task as the MCP endpoint starts it: by the owner's token, source mcp. */
  const agentRun = async (message = '') =>
    (
      await createTask(
        h.deps,
        projectId,
        { template_id: quick, message },
        {
          userId: owner.userId,
          source: 'mcp',
          token,
          interactive: true,
        },
      )
    ).id;

  async function tokenOf(client: Client, scopes?: string[]) {
    const res = await client.post('/api/user/tokens', { name: 'approver', ...(scopes ? { scopes } : {}) });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().token as string;
  }
  const withToken = (secret: string, url: string, body: unknown = {}) =>
    h.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${secret}` },
      payload: body as object,
    });

  it('has the project setting on by default, editable with the project and in its shape', async () => {
    const read = await owner.get(p());
    expect(read.json().agent_runs_need_approval).toBe(true);
    const body = { name: 'Agents', agent_runs_need_approval: false };
    expect((await members.task_runner.put(p(), body)).statusCode).toBe(403);
    expect((await owner.put(p(), { ...body, agent_runs_need_approval: 'no' })).statusCode).toBe(400);
    const saved = await owner.put(p(), body);
    expect(saved.statusCode, saved.body).toBe(204);
    expect((await owner.get(p())).json().agent_runs_need_approval).toBe(false);
    // A client that does not send the field leaves it as it is.
    expect((await owner.put(p(), { name: 'Agents' })).statusCode).toBe(204);
    expect((await owner.get(p())).json().agent_runs_need_approval).toBe(false);
    expect((await owner.put(p(), { name: 'Agents', agent_runs_need_approval: true })).statusCode).toBe(204);
  });

  it('stores how a task was started and answers it', async () => {
    const fromUi = await owner.post(p('/tasks'), { template_id: quick });
    expect(fromUi.statusCode, fromUi.body).toBe(201);
    expect(fromUi.json().source).toBe('ui');
    const secret = await tokenOf(owner);
    const fromApi = await withToken(secret, p('/tasks'), { template_id: quick });
    expect(fromApi.statusCode, fromApi.body).toBe(201);
    expect(fromApi.json()).toMatchObject({ source: 'api', status: 'waiting' });
    await waitForStatus(h.deps, fromApi.json().id, ['success']);
    const old = await h.deps.db
      .updateTable('task')
      .set({ source: null })
      .where('id', '=', fromUi.json().id)
      .executeTakeFirst();
    expect(Number(old.numUpdatedRows)).toBe(1);
    expect((await owner.get(p(`/tasks/${fromUi.json().id}`))).json().source).toBeNull();
  });

  it('holds an agent run in waiting_approval: the queue never starts it; a member with run approves it', async () => {
    const id = await agentRun();
    const held = await owner.get(p(`/tasks/${id}`));
    expect(held.json()).toMatchObject({ status: 'waiting_approval', source: 'mcp' });
    // A task queued after it runs to its end while the agent's run still waits.
    const later = await owner.post(p('/tasks'), { template_id: quick });
    await waitForStatus(h.deps, later.json().id, ['success']);
    expect((await owner.get(p(`/tasks/${id}`))).json().status).toBe('waiting_approval');

    const listed = await members.guest.get(p('/tasks?status=waiting_approval'));
    expect(listed.json().map((t: { id: number }) => t.id)).toEqual([id]);
    expect((await owner.get(p('/tasks?status=paused'))).statusCode).toBe(400);

    const events = await owner.get(p('/events/last'));
    const queued = events.json().find((e: { object_id: number }) => e.object_id === id);
    expect(queued.description).toContain('API token "my agent", id tok-agent-1');

    expect((await members.guest.post(p(`/tasks/${id}/approve`))).json()).toMatchObject({
      code: 'missing_permission',
    });
    const readOnly = await tokenOf(members.task_runner, ['read']);
    const refused = await withToken(readOnly, p(`/tasks/${id}/approve`));
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'missing_token_scope', params: { scope: 'run' } });
    expect((await owner.get(p(`/tasks/${id}`))).json().status).toBe('waiting_approval');

    const runToken = await tokenOf(members.task_runner, ['read', 'run']);
    const approved = await withToken(runToken, p(`/tasks/${id}/approve`));
    expect(approved.statusCode, approved.body).toBe(204);
    await waitForStatus(h.deps, id, ['success']);
    const again = await members.task_runner.post(p(`/tasks/${id}/approve`));
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ code: 'not_waiting_approval' });

    const after = await owner.get(p('/events/last'));
    const approval = after
      .json()
      .find(
        (e: { object_id: number; description: string }) =>
          e.object_id === id && /approved/.test(e.description),
      );
    expect(approval).toMatchObject({ username: members.task_runner.username });
  });

  it('refuses the approval to the token that started the run', async () => {
    const res = await owner.post('/api/user/tokens', { name: 'agent' });
    const stored = await h.deps.db
      .selectFrom('api_token')
      .select(['id', 'name'])
      .where('user_id', '=', owner.userId)
      .where('name', '=', 'agent')
      .executeTakeFirstOrThrow();
    const id = (
      await createTask(
        h.deps,
        projectId,
        { template_id: quick },
        {
          userId: owner.userId,
          source: 'mcp',
          token: stored,
          interactive: true,
        },
      )
    ).id;
    const own = await withToken(res.json().token, p(`/tasks/${id}/approve`));
    expect(own.statusCode).toBe(403);
    expect(own.json()).toMatchObject({ code: 'own_run_approval' });
    expect((await owner.post(p(`/tasks/${id}/approve`))).statusCode).toBe(204);
    await waitForStatus(h.deps, id, ['success']);
  });

  it('rejects with the reason as its message, and ends it there', async () => {
    const id = await agentRun('deploy prod');
    const bad = await members.task_runner.post(p(`/tasks/${id}/reject`), { reason: 7 });
    expect(bad.statusCode).toBe(400);
    expect((await members.guest.post(p(`/tasks/${id}/reject`), {})).statusCode).toBe(403);
    const rejected = await members.task_runner.post(p(`/tasks/${id}/reject`), {
      reason: 'not during the freeze',
    });
    expect(rejected.statusCode, rejected.body).toBe(204);
    const task = (await owner.get(p(`/tasks/${id}`))).json();
    expect(task).toMatchObject({ status: 'rejected', message: 'not during the freeze' });
    expect(task.end).not.toBeNull();
    expect((await owner.post(p(`/tasks/${id}/approve`))).json()).toMatchObject({
      code: 'not_waiting_approval',
    });
    const events = (await owner.get(p('/events/last'))).json();
    expect(
      events.some(
        (e: { description: string }) => e.description === `Task ID ${id} rejected: not during the freeze`,
      ),
    ).toBe(true);

    // Without a reason the task keeps its message.
    const other = await agentRun('kept');
    expect((await owner.post(p(`/tasks/${other}/reject`))).statusCode).toBe(204);
    expect((await owner.get(p(`/tasks/${other}`))).json()).toMatchObject({
      status: 'rejected',
      message: 'kept',
    });
  });

  it('stops a run waiting for approval', async () => {
    const id = await agentRun();
    expect((await members.guest.post(p(`/tasks/${id}/stop`))).statusCode).toBe(403);
    expect((await members.task_runner.post(p(`/tasks/${id}/stop`))).statusCode).toBe(204);
    expect((await owner.get(p(`/tasks/${id}`))).json().status).toBe('stopped');
    expect((await owner.post(p(`/tasks/${id}/approve`))).json()).toMatchObject({
      code: 'not_waiting_approval',
    });
  });

  it('queues an agent run at once when the project does not ask for approval', async () => {
    expect((await owner.put(p(), { name: 'Agents', agent_runs_need_approval: false })).statusCode).toBe(204);
    const id = await agentRun();
    await waitForStatus(h.deps, id, ['success']);
    expect((await owner.get(p(`/tasks/${id}`))).json().source).toBe('mcp');
    expect((await owner.put(p(), { name: 'Agents', agent_runs_need_approval: true })).statusCode).toBe(204);
  });
});
