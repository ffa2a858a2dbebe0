import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { gitRepo, insertRepository, insertTemplate, waitFor } from '../../../test/support/task-fixtures';
import { mcpRoutes } from './mcp.routes';

const SECRET_ANSWER = 'hunter2-agent-secret-value';

const surveyVars = [
  {
    name: 'region',
    title: 'Region',
    type: 'enum',
    required: true,
    values: [
      { name: 'Europe', value: 'eu' },
      { name: 'America', value: 'us' },
    ],
  },
  { name: 'count', title: 'Count', type: 'int', required: false },
  { name: 'api_key', title: 'API key', type: 'secret', required: false },
];

type ToolResult = { isError?: boolean; content: { type: string; text?: string }[] };

describe.each(testDialects())('MCP endpoint on $name', (dialect) => {
  let h: Harness;
  let base: string;
  let owner: Client;
  let other: Client;
  let members: Record<'manager' | 'task_runner' | 'guest', Client>;
  let projectA: number;
  let projectB: number;
  let deploy: number;
  let tokenA: string;
  let tokenB: string;
  let readOnlyA: string;
  /** Every tool and resource answer the tests saw, to search for secrets. */
  const seen: string[] = [];

  beforeAll(async () => {
    h = await createHarness(dialect);
    owner = await h.userClient({ can_create_project: true });
    other = await h.userClient({ can_create_project: true });
    ({ projectId: projectA, members } = await h.projectWithTeam(owner, 'Agents A'));
    const made = await other.post('/api/projects', { name: 'Agents B' });
    projectB = made.json().id;
    const repoA = await insertRepository(h.deps, projectA, {
      git_url: gitRepo({
        // The secret answer reaches the run (here as an environment variable): its log shows it masked.
        'run.sh': 'echo "deployed with [$*]"\nenv | grep hunter2 || true\necho "line two"\n',
      }),
    });
    deploy = await insertTemplate(h.deps, projectA, {
      name: 'Deploy',
      repository_id: repoA,
      allow_parallel_tasks: 1,
      survey_vars: JSON.stringify(surveyVars),
    });
    const repoB = await insertRepository(h.deps, projectB, {
      git_url: gitRepo({ 'run.sh': 'echo "b ran"\n' }),
    });
    await insertTemplate(h.deps, projectB, { name: 'B job', repository_id: repoB, allow_parallel_tasks: 1 });
    tokenA = await tokenOf(owner);
    tokenB = await tokenOf(other);
    readOnlyA = await tokenOf(owner, { scopes: ['read'] });
    const address = await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `${address}/api/mcp`;
  });
  afterAll(async () => h?.close());

  async function tokenOf(client: Client, limits: Record<string, unknown> = {}) {
    const res = await client.post('/api/user/tokens', { name: 'agent', ...limits });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().token as string;
  }

  async function connect(token: string) {
    const client = new McpClient({ name: 'test-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(base), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    return {
      client,
      async call(name: string, args: Record<string, unknown> = {}) {
        const result = (await client.callTool({ name, arguments: args })) as ToolResult;
        seen.push(JSON.stringify(result));
        return result;
      },
      close: () => client.close(),
    };
  }
  const text = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('');
  const data = (r: ToolResult) => {
    expect(r.isError, text(r)).toBeFalsy();
    return JSON.parse(text(r));
  };
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const rawPost = (headers: Record<string, string>) =>
    fetch(base, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(initialize),
    });

  it('takes only an API token: no token or a session cookie is 401; GET and DELETE are 405', async () => {
    const none = await rawPost({});
    expect(none.status).toBe(401);
    const cookie = await rawPost({ cookie: owner.cookie, 'sec-fetch-site': 'same-origin' });
    expect(cookie.status).toBe(401);
    expect(await cookie.json()).toMatchObject({ code: 'mcp_needs_token' });
    const wrong = await rawPost({ authorization: 'Bearer not-a-token' });
    expect(wrong.status).toBe(401);
    const ok = await rawPost({ authorization: `Bearer ${tokenA}` });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name).toBe(
      'signalbox',
    );
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(base, { method, headers: { authorization: `Bearer ${tokenA}` } });
      expect(res.status, method).toBe(405);
    }
  });

  it('answers hostile bodies and arguments with a 4xx or a tool error, never a 5xx', async () => {
    const send = (body: string, headers: Record<string, string> = {}) =>
      fetch(base, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokenA}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body,
      });
    for (const body of [
      '"hello"',
      '[]',
      '{}',
      '{"jsonrpc":"2.0"}',
      '{"jsonrpc":"2.0","id":1,"method":"nope"}',
      '{',
    ])
      expect((await send(body)).status, body).toBeLessThan(500);
    expect((await send(JSON.stringify(initialize), { accept: 'text/html' })).status).toBe(406);
    const agent = await connect(tokenA);
    const calls: [string, Record<string, unknown>][] = [
      ['get_task', { project_id: 'x', task_id: 1 }],
      ['get_task', { project_id: -1, task_id: 1 }],
      ['get_task', { project_id: projectA, task_id: 2 ** 53 }],
      ['read_task_output', { project_id: projectA, task_id: 1, search: '' }],
      ['run_template', { project_id: projectA, template_id: deploy, answers: 'region=eu' }],
      ['run_template', { project_id: projectA, template_id: 999_999, answers: {} }],
      ['list_templates', { project_id: 999_999 }],
    ];
    for (const [name, args] of calls) {
      const result = await agent.client.callTool({ name, arguments: args }).catch((err: Error) => err);
      if (result instanceof Error) expect(result.message, name).toMatch(/invalid|validation/i);
      else expect((result as ToolResult).isError, `${name} ${JSON.stringify(args)}`).toBe(true);
    }
    await agent.close();
  });

  it("lists its tools; a template's survey schema is the one the REST API serves", async () => {
    const agent = await connect(tokenA);
    const { tools } = await agent.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'get_task',
      'get_workflow_run',
      'list_projects',
      'list_templates',
      'list_waiting_approvals',
      'list_workflows',
      'read_task_output',
      'run_template',
      'run_workflow',
      'stop_task',
    ]);
    for (const tool of tools) expect(tool.description?.length, tool.name).toBeGreaterThan(40);
    const projects = data(await agent.call('list_projects'));
    expect(projects).toEqual([{ id: projectA, name: 'Agents A', can_run: true, runs_need_approval: true }]);
    const templates = data(await agent.call('list_templates', { project_id: projectA }));
    const listed = templates.find((t: { id: number }) => t.id === deploy);
    const rest = await owner.get(`/api/project/${projectA}/templates/${deploy}/survey-schema`);
    expect(listed.survey_schema).toEqual(rest.json());
    expect(listed.survey_schema.required).toEqual(['region']);
    await agent.close();
  });

  it('runs a template for approval; a second user approves it; the agent sees it end and reads its output', async () => {
    const agent = await connect(tokenA);
    const started = data(
      await agent.call('run_template', {
        project_id: projectA,
        template_id: deploy,
        answers: { region: 'eu', count: 3, api_key: SECRET_ANSWER },
        message: 'agent deploy',
      }),
    );
    expect(started.status).toBe('waiting_approval');
    const taskId = started.task_id as number;
    const waiting = data(await agent.call('list_waiting_approvals'));
    expect(waiting.map((t: { id: number }) => t.id)).toContain(taskId);
    expect(data(await agent.call('get_task', { project_id: projectA, task_id: taskId }))).toMatchObject({
      status: 'waiting_approval',
      source: 'mcp',
      template: 'Deploy',
    });
    // The task's audit event names the token by its name and id.
    const events = (await owner.get(`/api/project/${projectA}/events/last`)).json();
    expect(events.find((e: { object_id: number }) => e.object_id === taskId).description).toMatch(
      /API token "agent", id \S+/,
    );

    const approved = await members.task_runner.post(`/api/project/${projectA}/tasks/${taskId}/approve`);
    expect(approved.statusCode, approved.body).toBe(204);
    const done = await waitFor(async () => {
      const t = data(await agent.call('get_task', { project_id: projectA, task_id: taskId }));
      return t.end ? t : undefined;
    });
    expect(done.status).toBe('success');

    const output = data(await agent.call('read_task_output', { project_id: projectA, task_id: taskId }));
    expect(output.lines.map((l: { output: string }) => l.output).join('\n')).toContain('deployed with');
    expect(output.next_after).toBeNull();
    const first = data(
      await agent.call('read_task_output', { project_id: projectA, task_id: taskId, limit: 1 }),
    );
    expect(first.lines).toHaveLength(1);
    const rest = data(
      await agent.call('read_task_output', {
        project_id: projectA,
        task_id: taskId,
        after: first.next_after,
      }),
    );
    expect(rest.lines[0].id).toBeGreaterThan(first.lines[0].id);
    const found = data(
      await agent.call('read_task_output', { project_id: projectA, task_id: taskId, search: 'LINE TWO' }),
    );
    expect(found.lines.map((l: { output: string }) => l.output)).toEqual(['line two']);
    const tooMany = await agent.call('read_task_output', {
      project_id: projectA,
      task_id: taskId,
      limit: 501,
    });
    expect(tooMany.isError).toBe(true);

    const resource = await agent.client.readResource({
      uri: `signalbox://project/${projectA}/task/${taskId}/output`,
    });
    seen.push(JSON.stringify(resource));
    const [content] = resource.contents;
    expect(content && 'text' in content ? content.text : '').toContain('line two');
    await agent.close();
  });

  it('refuses an answer the survey forbids, naming the field, and starts nothing', async () => {
    const agent = await connect(tokenA);
    const before = (await owner.get(`/api/project/${projectA}/tasks`)).json().length;
    const bad = await agent.call('run_template', {
      project_id: projectA,
      template_id: deploy,
      answers: { region: 'mars' },
    });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain('survey.region');
    expect(text(bad)).toMatch(/region must be one of/i);
    const missing = await agent.call('run_template', {
      project_id: projectA,
      template_id: deploy,
      answers: {},
    });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('survey.region');
    expect((await owner.get(`/api/project/${projectA}/tasks`)).json().length).toBe(before);
    await agent.close();
  });

  it('refuses running and stopping to a read-only token, saying the scope', async () => {
    const agent = await connect(readOnlyA);
    const refused = await agent.call('run_template', {
      project_id: projectA,
      template_id: deploy,
      answers: { region: 'us' },
    });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe('This API token does not have the run scope');
    expect(data(await agent.call('list_projects'))[0]).toMatchObject({ id: projectA, can_run: false });
    const guest = await connect(await tokenOf(members.guest));
    const noRight = await guest.call('run_template', {
      project_id: projectA,
      template_id: deploy,
      answers: { region: 'us' },
    });
    expect(text(noRight)).toBe('You need the runProjectTasks permission in this project');
    await Promise.all([agent.close(), guest.close()]);
  });

  it('stops a run waiting for approval', async () => {
    const agent = await connect(tokenA);
    const started = data(
      await agent.call('run_template', {
        project_id: projectA,
        template_id: deploy,
        answers: { region: 'us' },
      }),
    );
    const stopped = data(await agent.call('stop_task', { project_id: projectA, task_id: started.task_id }));
    expect(stopped.status).toBe('stopped');
    await agent.close();
  });

  it("keeps two users' concurrent agents apart", async () => {
    const [a, b] = await Promise.all([connect(tokenA), connect(tokenB)]);
    const bTemplates = data(await b.call('list_templates', { project_id: projectB }));
    const [aRun, bRun] = await Promise.all([
      a.call('run_template', { project_id: projectA, template_id: deploy, answers: { region: 'eu' } }),
      b.call('run_template', { project_id: projectB, template_id: bTemplates[0].id, answers: {} }),
    ]);
    const aTask = data(aRun).task_id as number;
    const bTask = data(bRun).task_id as number;
    for (let round = 0; round < 3; round += 1) {
      const [aProjects, bProjects, aWaiting, bWaiting, aSeesB, bSeesA, bListsA] = await Promise.all([
        a.call('list_projects'),
        b.call('list_projects'),
        a.call('list_waiting_approvals'),
        b.call('list_waiting_approvals'),
        a.call('get_task', { project_id: projectB, task_id: bTask }),
        b.call('get_task', { project_id: projectA, task_id: aTask }),
        b.call('list_templates', { project_id: projectA }),
      ]);
      expect(data(aProjects).map((p: { id: number }) => p.id)).toEqual([projectA]);
      expect(data(bProjects).map((p: { id: number }) => p.id)).toEqual([projectB]);
      const aIds = data(aWaiting).map((t: { id: number }) => t.id);
      const bIds = data(bWaiting).map((t: { id: number }) => t.id);
      expect(aIds).toContain(aTask);
      expect(aIds).not.toContain(bTask);
      expect(bIds).toContain(bTask);
      expect(bIds).not.toContain(aTask);
      for (const refused of [aSeesB, bSeesA, bListsA]) {
        expect(refused.isError).toBe(true);
        expect(text(refused)).toMatch(/^Project \d+ not found$/);
      }
    }
    await Promise.all([a.close(), b.close()]);
  });

  it("runs a workflow whose tasks wait for a person's approval, as the project asks", async () => {
    const wf = await owner.post(`/api/project/${projectA}/workflows`, {
      name: 'Agent pipeline',
      survey_vars: [{ name: 'where', title: 'Where', type: 'string', required: true }],
      nodes: [
        {
          id: 'deploy',
          type: 'template',
          template_id: deploy,
          survey: { region: { from: 'survey', name: 'where' } },
        },
      ],
    });
    expect(wf.statusCode, wf.body).toBe(201);
    const agent = await connect(tokenA);
    const listed = data(await agent.call('list_workflows', { project_id: projectA }));
    expect(listed).toEqual([expect.objectContaining({ id: wf.json().id, name: 'Agent pipeline' })]);
    const readOnly = await connect(readOnlyA);
    const refused = await readOnly.call('run_workflow', { project_id: projectA, workflow_id: wf.json().id });
    expect(refused.isError).toBe(true);
    const started = data(
      await agent.call('run_workflow', {
        project_id: projectA,
        workflow_id: wf.json().id,
        answers: { where: 'eu' },
      }),
    );
    const run = await waitFor(async () => {
      const r = data(await agent.call('get_workflow_run', { project_id: projectA, run_id: started.run_id }));
      return r.nodes[0].task_id ? r : undefined;
    });
    const task = (await owner.get(`/api/project/${projectA}/tasks/${run.nodes[0].task_id}`)).json();
    expect(task).toMatchObject({
      status: 'waiting_approval',
      source: 'mcp',
      workflow_run_id: started.run_id,
    });
    // The token that started the run cannot approve its tasks.
    const own = await h.app.inject({
      method: 'POST',
      url: `/api/project/${projectA}/tasks/${task.id}/approve`,
      headers: { authorization: `Bearer ${tokenA}` },
    });
    expect(own.json().code).toBe('own_run_approval');
    expect((await members.manager.post(`/api/project/${projectA}/tasks/${task.id}/approve`)).statusCode).toBe(
      204,
    );
    await waitFor(async () => {
      const r = data(await agent.call('get_workflow_run', { project_id: projectA, run_id: started.run_id }));
      return r.status === 'success' ? r : undefined;
    });
    await Promise.all([agent.close(), readOnly.close()]);
  });

  it('returns no secret in any tool or resource answer', () => {
    expect(seen.length).toBeGreaterThan(20);
    for (const answer of seen) expect(answer).not.toContain(SECRET_ANSWER);
  });
});

describe('MCP calls per token', () => {
  let h: Harness;
  let base: string;
  beforeAll(async () => {
    h = await createHarness(testDialects()[0]!, { mcpRateLimit: 2 });
    const address = await h.app.listen({ port: 0, host: '127.0.0.1' });
    base = `${address}/api/mcp`;
  });
  afterAll(async () => h?.close());

  it("answers 429 once a token's calls per minute are spent; another token still gets through", async () => {
    const tokens: string[] = [];
    for (const client of [await h.userClient(), await h.userClient()]) {
      const res = await client.post('/api/user/tokens', { name: 'agent' });
      tokens.push(res.json().token);
    }
    const post = (token: string) =>
      fetch(base, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
    expect((await post(tokens[0]!)).status).toBe(200);
    expect((await post(tokens[0]!)).status).toBe(200);
    const limited = await post(tokens[0]!);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as { error: { message: string } }).error.message).toMatch(
      /^Too many requests/,
    );
    expect((await post(tokens[1]!)).status).toBe(200);
  });
});

describe('an MCP call whose client left before it reached the endpoint', () => {
  let h: Harness;
  afterAll(async () => h?.close());

  it('runs nothing for it', async () => {
    h = await createHarness(testDialects()[0]!);
    const owner = await h.userClient({ can_create_project: true });
    const projectId = (await owner.post('/api/projects', { name: 'Left' })).json().id as number;
    const repo = await insertRepository(h.deps, projectId, { git_url: gitRepo({ 'run.sh': 'echo ran\n' }) });
    const template = await insertTemplate(h.deps, projectId, { name: 'Job', repository_id: repo });
    const user = await h.deps.db
      .selectFrom('user')
      .selectAll()
      .where('id', '=', owner.userId)
      .executeTakeFirstOrThrow();

    // The endpoint alone, signed in as the owner's token; its last hook before the handler waits until the client has
    // left (as a slow sign-in or the SDK's first load would).
    const app = Fastify();
    app.decorateRequest('user', null);
    app.decorateRequest('apiToken', null);
    app.decorateRequest('tokenLimits', null);
    const signIns: { gone: Promise<unknown>; go: () => void }[] = [];
    app.addHook('onRequest', async (request) => {
      request.user = user;
      request.apiToken = { id: 'left-token', name: 'agent' };
    });
    app.addHook('preHandler', async (_request, reply) => {
      const gone = new Promise((resolve) => reply.raw.once('close', resolve));
      await new Promise<void>((go) => signIns.push({ gone, go }));
    });
    const handled: Promise<void>[] = [];
    app.addHook('onRoute', (route) => {
      const handler = route.handler;
      route.handler = function (this: unknown, request, reply) {
        const run = Promise.resolve(handler.call(this as never, request, reply));
        handled.push(run.then(() => undefined));
        return run;
      } as typeof handler;
    });
    mcpRoutes(app, h.deps);
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'run_template', arguments: { project_id: projectId, template_id: template } },
      });
      const request = http.request(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/mcp`, {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      });
      request.on('error', () => {});
      request.end(body);
      await expect.poll(() => signIns.length).toBe(1);
      const signIn = signIns[0]!;
      request.destroy();
      await signIn.gone;
      signIn.go();
      await expect.poll(() => handled.length).toBe(1);
      await handled[0];
      const tasks = await h.deps.db
        .selectFrom('task')
        .select('id')
        .where('template_id', '=', template)
        .execute();
      expect(tasks).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
