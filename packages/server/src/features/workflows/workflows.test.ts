import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { commitFiles, insertEnvironment, outputOf, waitFor } from '../../../test/support/task-fixtures';
import {
  createWorkflow,
  edge,
  getRun,
  nodeOf,
  startRun,
  templateNode,
  waitForRun,
  workflowTemplates,
} from '../../../test/support/workflow-fixtures';
import { createRetention } from '../../tasks/retention';

describe.each(testDialects())('workflows on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let members: Record<'manager' | 'task_runner' | 'guest', Client>;
  let projectId: number;
  let otherProject: number;
  let tpl: Awaited<ReturnType<typeof workflowTemplates>>;
  let foreignTemplate: number;
  const p = (path = '') => `/api/project/${projectId}${path}`;

  beforeAll(async () => {
    h = await createHarness(dialect);
    owner = await h.userClient({ can_create_project: true });
    ({ projectId, members } = await h.projectWithTeam(owner, 'Pipelines'));
    tpl = await workflowTemplates(h, projectId);
    const other = await owner.post('/api/projects', { name: 'Elsewhere' });
    otherProject = other.json().id;
    foreignTemplate = (await workflowTemplates(h, otherProject)).ok;
  });
  afterAll(async () => h?.close());

  describe('a definition', () => {
    const base = () => ({
      name: `Checked ${Math.random().toString(36).slice(2, 8)}`,
      nodes: [templateNode('a', tpl.ok), templateNode('b', tpl.ok), templateNode('c', tpl.ok)],
      edges: [edge('a', 'b'), edge('b', 'c')],
    });
    const refused = async (body: unknown) => {
      const res = await members.manager.post(p('/workflows'), body);
      expect(res.statusCode, res.body).toBe(400);
      return res.json() as { code: string; params?: Record<string, unknown> };
    };

    it('is refused with a code naming the problem', async () => {
      expect(
        await refused({ ...base(), edges: [edge('a', 'b'), edge('b', 'c'), edge('c', 'a')] }),
      ).toMatchObject({
        code: 'workflow_cycle',
        params: { nodes: 'a → b → c → a' },
      });
      expect((await refused({ ...base(), edges: [edge('a', 'a')] })).code).toBe('workflow_cycle');
      // A definition is read by every member: no secret is written into it.
      const fixedSecret = {
        ...base(),
        nodes: [
          ...base().nodes.slice(0, 2),
          templateNode('c', tpl.deploy, { survey: { api_token: { from: 'fixed', value: 'tok-5ecret' } } }),
        ],
      };
      const secretRes = await members.manager.post(p('/workflows'), fixedSecret);
      expect(secretRes.statusCode, secretRes.body).toBe(400);
      expect(secretRes.json()).toMatchObject({
        code: 'workflow_fixed_secret_answer',
        params: { node: 'c', name: 'api_token' },
      });
      expect(secretRes.body).not.toContain('tok-5ecret');
      expect(
        await refused({
          ...base(),
          nodes: [...base().nodes.slice(0, 2), templateNode('c', foreignTemplate)],
        }),
      ).toMatchObject({
        code: 'workflow_template_not_in_project',
        params: { node: 'c', id: foreignTemplate },
      });
      expect((await refused({ ...base(), edges: [edge('a', 'b', 'sometimes'), edge('b', 'c')] })).code).toBe(
        'workflow_edge_condition',
      );
      expect(await refused({ ...base(), edges: [edge('a', 'x'), edge('b', 'c')] })).toMatchObject({
        code: 'workflow_edge_unknown_node',
        params: { node: 'x' },
      });
      expect(await refused({ ...base(), edges: [edge('a', 'b')] })).toMatchObject({
        code: 'workflow_node_unreachable',
        params: { node: 'c' },
      });
      expect(
        await refused({
          ...base(),
          edges: [edge('a', 'b', 'failure'), edge('b', 'c'), edge('a', 'c', 'success')],
        }),
      ).toMatchObject({ code: 'workflow_node_never_runs', params: { node: 'c', needs: 'a' } });
      expect(
        (await refused({ ...base(), edges: [edge('a', 'b'), edge('a', 'b'), edge('b', 'c')] })).code,
      ).toBe('workflow_edge_repeated');
      const fromDownstream = base();
      fromDownstream.nodes[0] = templateNode('a', tpl.ok, {
        extra_vars: { v: { from: 'output', node: 'c', name: 'version' } },
      });
      expect(await refused(fromDownstream)).toMatchObject({
        code: 'workflow_mapping_not_upstream',
        params: { node: 'a', from: 'c', output: 'version' },
      });
      const unknownSurvey = base();
      unknownSurvey.nodes[1] = templateNode('b', tpl.ok, { survey: { v: { from: 'survey', name: 'nope' } } });
      expect((await refused(unknownSurvey)).code).toBe('workflow_mapping_unknown_survey');
      expect(
        (
          await refused({
            ...base(),
            nodes: [...base().nodes, { id: 'ok', type: 'approval', roles: [], user_ids: [] }],
            edges: [edge('a', 'b'), edge('b', 'c'), edge('c', 'ok')],
          })
        ).code,
      ).toBe('workflow_approval_no_approvers');
      const stranger = await h.userClient();
      expect(
        await refused({
          ...base(),
          nodes: [...base().nodes, { id: 'ok', type: 'approval', user_ids: [stranger.userId] }],
          edges: [edge('a', 'b'), edge('b', 'c'), edge('c', 'ok')],
        }),
      ).toMatchObject({ code: 'workflow_approver_not_member', params: { id: stranger.userId } });
      expect(
        (
          await refused({
            ...base(),
            nodes: [...base().nodes, { id: 'wait', type: 'delay', seconds: 1 }],
            edges: [edge('a', 'b'), edge('b', 'c'), edge('c', 'wait'), edge('wait', 'a', 'failure')],
          })
        ).code,
      ).toBe('workflow_cycle');
      expect(
        (
          await refused({
            ...base(),
            nodes: [...base().nodes, { id: 'wait', type: 'delay', seconds: 1 }, templateNode('d', tpl.ok)],
            edges: [edge('a', 'b'), edge('b', 'c'), edge('c', 'wait'), edge('wait', 'd', 'failure')],
          })
        ).code,
      ).toBe('workflow_condition_never');
      expect((await refused({ ...base(), nodes: [{ id: 'bad id!', type: 'delay', seconds: 1 }] })).code).toBe(
        'workflow_node_id_format',
      );
      expect((await refused({ ...base(), nodes: [{ id: 'x', type: 'script' }] })).code).toBe(
        'workflow_node_type',
      );
      expect((await refused({ ...base(), nodes: [] })).code).toBe('too_few');
      expect((await refused('[]')).code).toBe('body_not_object');
    });

    it('is edited by managers and owners, read by everyone, and checked again on update', async () => {
      expect((await members.task_runner.post(p('/workflows'), base())).json().code).toBe(
        'missing_permission',
      );
      expect((await members.guest.post(p('/workflows'), base())).statusCode).toBe(403);
      const id = await createWorkflow(members.manager, projectId, base());
      const read = await members.guest.get(p(`/workflows/${id}`));
      expect(read.statusCode).toBe(200);
      expect(read.json().id).toBe(id);
      expect(read.json().nodes[0]).toMatchObject({
        id: 'a',
        type: 'template',
        template_id: tpl.ok,
        survey: {},
      });
      expect((await members.guest.get(p('/workflows'))).json().some((w: { id: number }) => w.id === id)).toBe(
        true,
      );
      const cyclic = { ...base(), edges: [edge('a', 'b'), edge('b', 'c'), edge('c', 'a')] };
      expect((await owner.put(p(`/workflows/${id}`), cyclic)).json().code).toBe('workflow_cycle');
      // Another project's id never reaches it.
      expect((await owner.get(`/api/project/${otherProject}/workflows/${id}`)).statusCode).toBe(404);
      const again = await owner.post(p('/workflows'), { ...base(), name: read.json().name.toUpperCase() });
      expect(again.json().code).toBe('workflow_name_taken');
      expect((await members.manager.del(p(`/workflows/${id}`))).statusCode).toBe(204);
      expect((await owner.get(p(`/workflows/${id}`))).statusCode).toBe(404);
    });
  });

  it('runs parallel branches and a join, passing outputs downstream with a secret output kept masked', async () => {
    const wf = await createWorkflow(owner, projectId, {
      name: 'Build and deploy',
      nodes: [
        templateNode('build', tpl.build),
        ...['deploy_a', 'deploy_b'].map((id) =>
          templateNode(id, tpl.deploy, {
            survey: {
              version: { from: 'output', node: 'build', name: 'version' },
              api_token: { from: 'output', node: 'build', name: 'token' },
            },
            extra_vars: { target: { from: 'fixed', value: id } },
          }),
        ),
        templateNode('smoke', tpl.ok),
      ],
      edges: [
        edge('build', 'deploy_a'),
        edge('build', 'deploy_b'),
        edge('deploy_a', 'smoke'),
        edge('deploy_b', 'smoke'),
      ],
    });
    // Guests see; task runners run.
    expect((await members.guest.post(p(`/workflows/${wf}/runs`), {})).statusCode).toBe(403);
    const runId = await startRun(members.task_runner, projectId, wf, { message: 'release' });
    const run = await waitForRun(owner, projectId, runId, ['success', 'failed']);
    expect(run.status, JSON.stringify(run.node_states)).toBe('success');
    const build = nodeOf(run, 'build');
    const buildTask = (await owner.get(p(`/tasks/${build.task_id}`))).json();
    expect(buildTask).toMatchObject({
      workflow_run_id: runId,
      workflow_node_id: 'build',
      source: 'workflow',
    });
    expect(buildTask.secret_outputs).toEqual(['token']);
    expect(JSON.stringify(buildTask)).not.toContain('s3cr3t');
    const version = buildTask.outputs.version as string;
    expect(version).toBe(`1.4.${build.task_id}`);
    for (const id of ['deploy_a', 'deploy_b']) {
      const node = nodeOf(run, id);
      const log = (await outputOf(h.deps, node.task_id as number)).join('\n');
      expect(log).toContain(`deploying version ${version}`);
      // The secret reached the deploy (its line is there) but the log shows it masked.
      expect(log).toMatch(/using token \*+/);
      expect(log).not.toContain('s3cr3t');
      const task = (await owner.get(p(`/tasks/${node.task_id}`))).json();
      expect(task.outputs).toEqual({ deployed: version });
      expect(JSON.parse(task.environment)).toMatchObject({ version, target: id });
      expect(task.environment).not.toContain('s3cr3t');
      // The join started after both deploys ended.
      expect(new Date(task.end).getTime()).toBeLessThanOrEqual(
        new Date((await owner.get(p(`/tasks/${nodeOf(run, 'smoke').task_id}`))).json().created).getTime(),
      );
    }
    const runs = await owner.get(p(`/workflow-runs?workflow_id=${wf}`));
    expect(runs.json().map((r: { id: number }) => r.id)).toEqual([runId]);
    expect((await owner.get(`/api/project/${otherProject}/workflow-runs/${runId}`)).statusCode).toBe(404);
    const tasks = await h.deps.db
      .selectFrom('task')
      .select('id')
      .where('workflow_run_id', '=', runId)
      .execute();
    expect(tasks).toHaveLength(4);
  });

  it('runs a template node with an environment override, fixed or from the survey, checked at save', async () => {
    const staging = await insertEnvironment(h.deps, projectId, {
      name: 'wf-staging',
      env: { GREETING: 'hello-staging' },
    });
    const production = await insertEnvironment(h.deps, projectId, {
      name: 'wf-production',
      env: { GREETING: 'hello-production' },
    });
    const foreign = await insertEnvironment(h.deps, otherProject, {
      name: 'wf-foreign',
      env: { GREETING: 'hello-foreign' },
    });
    const body = (fixed: unknown, template = tpl.env) => ({
      name: `Environments ${Math.random().toString(36).slice(2, 8)}`,
      survey_vars: [{ name: 'target', title: 'Target', type: 'int', required: true }],
      nodes: [
        templateNode('fixed', template, { environment_id: { from: 'fixed', value: fixed } }),
        templateNode('chosen', tpl.env, { environment_id: { from: 'survey', name: 'target' } }),
      ],
      edges: [edge('fixed', 'chosen')],
    });
    const refused = async (b: unknown) => {
      const res = await owner.post(p('/workflows'), b);
      expect(res.statusCode, res.body).toBe(400);
      return res.json();
    };
    expect(await refused(body(foreign))).toMatchObject({
      code: 'workflow_environment_not_in_project',
      params: { node: 'fixed', id: String(foreign) },
    });
    expect((await refused(body(999_999))).code).toBe('workflow_environment_not_in_project');
    expect((await refused(body('staging'))).code).toBe('workflow_environment_not_in_project');
    expect(await refused(body(staging, tpl.ok))).toMatchObject({
      code: 'workflow_environment_override_not_allowed',
      params: { node: 'fixed' },
    });

    const wf = await createWorkflow(owner, projectId, body(staging));
    expect((await owner.get(p(`/workflows/${wf}`))).json().nodes[0].environment_id).toEqual({
      from: 'fixed',
      value: staging,
    });
    const run = await waitForRun(
      owner,
      projectId,
      await startRun(owner, projectId, wf, { survey: { target: production } }),
      ['success', 'failed'],
    );
    expect(run.status, JSON.stringify(run.node_states)).toBe('success');
    for (const [node, envId, greeting] of [
      ['fixed', staging, 'hello-staging'],
      ['chosen', production, 'hello-production'],
    ] as const) {
      const taskId = nodeOf(run, node).task_id as number;
      expect((await owner.get(p(`/tasks/${taskId}`))).json().environment_id).toBe(envId);
      expect((await outputOf(h.deps, taskId)).join('\n')).toContain(`greeting=${greeting}`);
    }

    // Another project's environment from the survey is never used: the node fails, saying why.
    const failed = await waitForRun(
      owner,
      projectId,
      await startRun(owner, projectId, wf, { survey: { target: foreign } }),
      ['success', 'failed'],
    );
    expect(failed.status).toBe('failed');
    expect(nodeOf(failed, 'chosen')).toMatchObject({ status: 'failed', task_id: null });
    expect(nodeOf(failed, 'chosen').detail).toContain(
      `Environment ${foreign} does not exist in this project`,
    );
  });

  it('takes success, failure and always edges; a handled failure does not fail the run', async () => {
    const wf = await createWorkflow(owner, projectId, {
      name: 'Edges',
      nodes: [
        templateNode('deploy', tpl.fail),
        templateNode('rollback', tpl.ok),
        templateNode('announce', tpl.ok),
        templateNode('cleanup', tpl.ok),
        templateNode('after_announce', tpl.ok),
      ],
      edges: [
        edge('deploy', 'rollback', 'failure'),
        edge('deploy', 'announce', 'success'),
        edge('deploy', 'cleanup', 'always'),
        edge('announce', 'after_announce', 'always'),
      ],
    });
    const run = await waitForRun(owner, projectId, await startRun(owner, projectId, wf), [
      'success',
      'failed',
    ]);
    expect(Object.fromEntries(run.node_states.map((n) => [n.node_id, n.status]))).toEqual({
      deploy: 'failed',
      rollback: 'success',
      announce: 'skipped',
      cleanup: 'success',
      after_announce: 'skipped',
    });
    expect(run.status).toBe('success');

    const unhandled = await createWorkflow(owner, projectId, {
      name: 'Unhandled',
      nodes: [templateNode('deploy', tpl.fail), templateNode('next', tpl.ok)],
      edges: [edge('deploy', 'next')],
    });
    const failed = await waitForRun(owner, projectId, await startRun(owner, projectId, unhandled), [
      'success',
      'failed',
    ]);
    expect(failed.status).toBe('failed');
    expect(nodeOf(failed, 'next').status).toBe('skipped');
  });

  it('re-runs from a failed node, keeping the results of the nodes before it', async () => {
    const wf = await createWorkflow(owner, projectId, {
      name: 'Flaky',
      nodes: [templateNode('first', tpl.ok), templateNode('flaky', tpl.flaky), templateNode('last', tpl.ok)],
      edges: [edge('first', 'flaky'), edge('flaky', 'last')],
    });
    const runId = await startRun(owner, projectId, wf);
    const failed = await waitForRun(owner, projectId, runId, ['success', 'failed']);
    expect(failed.status).toBe('failed');
    const first = nodeOf(failed, 'first').task_id;
    const flakyTask = nodeOf(failed, 'flaky').task_id;
    expect(
      (await members.guest.post(p(`/workflow-runs/${runId}/rerun`), { node_id: 'flaky' })).statusCode,
    ).toBe(403);
    expect((await owner.post(p(`/workflow-runs/${runId}/rerun`), { node_id: 'nope' })).json().code).toBe(
      'workflow_node_unknown',
    );
    expect((await owner.post(p(`/workflow-runs/${runId}/rerun`), { node_id: 'last' })).json().code).toBe(
      'workflow_rerun_node_not_run',
    );
    commitFiles(tpl.repo, { 'flaky.sh': 'echo fixed\n' }, 'fix flaky');
    const res = await members.task_runner.post(p(`/workflow-runs/${runId}/rerun`), { node_id: 'flaky' });
    expect(res.statusCode, res.body).toBe(200);
    const done = await waitForRun(owner, projectId, runId, ['success', 'failed']);
    expect(done.status).toBe('success');
    expect(nodeOf(done, 'first')).toMatchObject({ task_id: first, attempt: 1 });
    expect(nodeOf(done, 'flaky').attempt).toBe(2);
    expect(nodeOf(done, 'flaky').task_id).not.toBe(flakyTask);
    const firstTasks = await h.deps.db
      .selectFrom('task')
      .select('id')
      .where('workflow_run_id', '=', runId)
      .where('workflow_node_id', '=', 'first')
      .execute();
    expect(firstTasks).toHaveLength(1);
  });

  it('stops a run: its running task stops and pending nodes never start', async () => {
    const wf = await createWorkflow(owner, projectId, {
      name: 'Slow',
      nodes: [
        templateNode('slow', tpl.slow),
        { id: 'wait', type: 'delay', seconds: 3600 },
        templateNode('after', tpl.ok),
      ],
      edges: [edge('slow', 'after'), edge('wait', 'after')],
    });
    const runId = await startRun(owner, projectId, wf);
    const running = await waitForRun(owner, projectId, runId, ['running'], 'slow');
    await waitFor(async () => {
      const t = await h.deps.db
        .selectFrom('task')
        .select('status')
        .where('id', '=', nodeOf(running, 'slow').task_id as number)
        .executeTakeFirst();
      return t?.status === 'running';
    });
    expect((await members.guest.post(p(`/workflow-runs/${runId}/stop`))).statusCode).toBe(403);
    const stopped = await members.task_runner.post(p(`/workflow-runs/${runId}/stop`));
    expect(stopped.statusCode, stopped.body).toBe(200);
    expect(stopped.json().status).toBe('stopped');
    expect((await owner.post(p(`/workflow-runs/${runId}/stop`))).json().code).toBe('workflow_run_finished');
    const task = nodeOf(running, 'slow').task_id as number;
    await waitFor(async () => {
      const t = await h.deps.db.selectFrom('task').select('status').where('id', '=', task).executeTakeFirst();
      return t?.status === 'stopped';
    });
    const after = await getRun(owner, projectId, runId);
    expect(Object.fromEntries(after.node_states.map((n) => [n.node_id, n.status]))).toEqual({
      slow: 'stopped',
      wait: 'stopped',
      after: 'stopped',
    });
    expect(nodeOf(after, 'after').task_id).toBeNull();
  });

  it('is kept in the project backup, its templates by name, and restored with the new ids', async () => {
    await createWorkflow(owner, projectId, {
      name: 'Backed up',
      survey_vars: [{ name: 'target', title: 'Target', type: 'string' }],
      nodes: [
        templateNode('build', tpl.build),
        { id: 'gate', type: 'approval', roles: ['manager'], user_ids: [members.guest.userId], required: 1 },
        templateNode('deploy', tpl.deploy, {
          survey: { version: { from: 'output', node: 'build', name: 'version' } },
        }),
      ],
      edges: [edge('build', 'gate'), edge('gate', 'deploy', 'always')],
    });
    const backup = (await owner.get(p('/backup'))).json();
    const saved = backup.workflows.find((w: { name: string }) => w.name === 'Backed up');
    expect(saved.nodes[0]).toMatchObject({ id: 'build', template: 'build' });
    expect(saved.nodes[0].template_id).toBeUndefined();
    expect(saved.nodes[1]).toMatchObject({ id: 'gate', users: [members.guest.username] });
    const restored = await owner.post('/api/projects/restore', {
      ...backup,
      meta: { ...backup.meta, name: 'Restored' },
    });
    expect(restored.statusCode, restored.body).toBe(200);
    const newId = restored.json().id as number;
    const list = (await owner.get(`/api/project/${newId}/workflows`)).json() as {
      name: string;
      nodes: { id: string; template_id?: number; roles?: string[]; user_ids?: number[] }[];
      edges: unknown[];
    }[];
    const copy = list.find((w) => w.name === 'Backed up')!;
    const templates = (await owner.get(`/api/project/${newId}/templates`)).json() as {
      id: number;
      name: string;
    }[];
    expect(copy.nodes[0]?.template_id).toBe(templates.find((t) => t.name === 'build')?.id);
    // The named approver is no member of the new project: the node keeps its roles only.
    expect(copy.nodes[1]).toMatchObject({ roles: ['manager'], user_ids: [] });
    expect(copy.edges).toHaveLength(2);
    const cyclic = {
      ...backup,
      meta: { ...backup.meta, name: 'Broken' },
      workflows: [{ ...saved, edges: [...saved.edges, { from: 'deploy', to: 'build' }] }],
    };
    const refused = await owner.post('/api/projects/restore', cyclic);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toContain('workflows[0]');
  });

  it('keeps the schedules and integrations that start a workflow, and its fixed environment, in the backup', async () => {
    const environment = await insertEnvironment(h.deps, projectId, { name: 'backed-up-env' });
    const wf = await createWorkflow(owner, projectId, {
      name: 'Started by others',
      survey_vars: [{ name: 'target', title: 'Target', type: 'string' }],
      nodes: [
        templateNode('deploy', tpl.env, {
          environment_id: { from: 'fixed', value: environment },
          extra_vars: { target: { from: 'survey', name: 'target' } },
        }),
      ],
    });
    const schedule = await owner.post(p('/schedules'), {
      workflow_id: wf,
      cron_format: '@daily',
      name: 'Daily release',
      active: false,
      task_params: { environment: '{"target":"nightly"}' },
    });
    expect(schedule.statusCode, schedule.body).toBe(201);
    const integration = await owner.post(p('/integrations'), { name: 'Release hook', workflow_id: wf });
    expect(integration.statusCode, integration.body).toBe(201);
    const matcher = await owner.post(p(`/integrations/${integration.json().id}/matchers`), {
      name: 'main only',
      match_type: 'body',
      body_data_type: 'json',
      key: 'ref',
      method: 'equals',
      value: 'main',
    });
    expect(matcher.statusCode, matcher.body).toBe(200);

    const backup = (await owner.get(p('/backup'))).json();
    expect(backup.schedules.find((s: { name: string }) => s.name === 'Daily release')).toMatchObject({
      template: null,
      workflow: 'Started by others',
      task_params: { environment: '{"target":"nightly"}' },
    });
    expect(backup.integrations.find((i: { name: string }) => i.name === 'Release hook')).toMatchObject({
      template: null,
      workflow: 'Started by others',
      matchers: [{ name: 'main only', key: 'ref', value: 'main' }],
    });
    const saved = backup.workflows.find((w: { name: string }) => w.name === 'Started by others');
    expect(saved.nodes[0]).toMatchObject({ template: 'env', environment: 'backed-up-env' });

    const restored = await owner.post('/api/projects/restore', {
      ...backup,
      meta: { ...backup.meta, name: 'Restored starters' },
    });
    expect(restored.statusCode, restored.body).toBe(200);
    const newId = restored.json().id as number;
    const copy = (
      (await owner.get(`/api/project/${newId}/workflows`)).json() as { id: number; name: string }[]
    ).find((w) => w.name === 'Started by others')!;
    expect(copy.id).not.toBe(wf);
    const newEnv = (
      (await owner.get(`/api/project/${newId}/environment`)).json() as { id: number; name: string }[]
    ).find((e) => e.name === 'backed-up-env')!;
    expect(newEnv.id).not.toBe(environment);
    const copied = (await owner.get(`/api/project/${newId}/workflows/${copy.id}`)).json();
    expect(copied.nodes[0].environment_id).toEqual({ from: 'fixed', value: newEnv.id });
    const schedules = (await owner.get(`/api/project/${newId}/schedules`)).json() as Record<
      string,
      unknown
    >[];
    expect(schedules.find((s) => s.name === 'Daily release')).toMatchObject({
      template_id: 0,
      workflow_id: copy.id,
      active: false,
      cron_format: '@daily',
    });
    const integrations = (await owner.get(`/api/project/${newId}/integrations`)).json() as Record<
      string,
      unknown
    >[];
    const hook = integrations.find((i) => i.name === 'Release hook');
    expect(hook).toMatchObject({ template_id: 0, workflow_id: copy.id });
    const matchers = (await owner.get(`/api/project/${newId}/integrations/${hook?.id}/matchers`)).json();
    expect(matchers).toMatchObject([{ name: 'main only', value: 'main' }]);
    // The restored project's schedule starts the restored workflow: its own run, with the new environment.
    const rerunnable = await owner.post(`/api/project/${newId}/workflows/${copy.id}/runs`, {
      survey: { target: 'x' },
    });
    expect(rerunnable.statusCode, rerunnable.body).toBe(201);

    // A backup naming a workflow it does not hold is refused, naming where.
    const unknown = await owner.post('/api/projects/restore', {
      ...backup,
      meta: { ...backup.meta, name: 'Broken starters' },
      schedules: [{ name: 'lost', workflow: 'No such workflow', cron_format: '@daily' }],
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toContain('schedules[0].workflow');
    const both = await owner.post('/api/projects/restore', {
      ...backup,
      meta: { ...backup.meta, name: 'Both starters' },
      integrations: [{ name: 'both', template: 'ok', workflow: 'Started by others' }],
    });
    expect(both.statusCode).toBe(400);
    // Old backups (and Semaphore's) name a template only: still restored as before.
    const { workflow: _w, ...templateSchedule } = backup.schedules.find(
      (s: { template: string | null }) => s.template,
    ) ?? { template: 'ok', name: 'plain', cron_format: '@daily' };
    const old = await owner.post('/api/projects/restore', {
      ...backup,
      meta: { ...backup.meta, name: 'Old starters' },
      schedules: [templateSchedule],
    });
    expect(old.statusCode, old.body).toBe(200);
  });

  it("keeps runs as long as tasks: retention deletes ended runs past the project's days, never active ones", async () => {
    const wf = await createWorkflow(owner, projectId, {
      name: 'Old runs',
      nodes: [templateNode('only', tpl.ok), { id: 'wait', type: 'delay', seconds: 3600 }],
      edges: [edge('only', 'wait')],
    });
    const old = await startRun(owner, projectId, wf);
    await waitForRun(owner, projectId, old, ['running'], 'wait');
    await owner.post(p(`/workflow-runs/${old}/stop`));
    const active = await startRun(owner, projectId, wf);
    await h.deps.db
      .updateTable('workflow_run')
      .set({ created: '2000-01-01T00:00:00.000Z', end: '2000-01-01T00:00:00.000Z' })
      .where('id', 'in', [old, active])
      .execute();
    await h.deps.db
      .updateTable('project')
      .set({ task_retention_days: 30 })
      .where('id', '=', projectId)
      .execute();
    const retention = createRetention(h.deps);
    await retention.run();
    await retention.close();
    expect((await owner.get(p(`/workflow-runs/${old}`))).statusCode).toBe(404);
    expect(
      await h.deps.db.selectFrom('workflow_run_node').select('id').where('run_id', '=', old).execute(),
    ).toEqual([]);
    expect((await getRun(owner, projectId, active)).status).toBe('running');
    await owner.post(p(`/workflow-runs/${active}/stop`));
    await h.deps.db
      .updateTable('project')
      .set({ task_retention_days: 0 })
      .where('id', '=', projectId)
      .execute();
  });

  it('waits in a delay node and checks the survey of a run', async () => {
    const wf = await createWorkflow(owner, projectId, {
      name: 'Delayed',
      survey_vars: [
        { name: 'target', title: 'Target', type: 'string', required: true },
        { name: 'password', title: 'Password', type: 'secret' },
      ],
      nodes: [
        { id: 'wait', type: 'delay', seconds: 1 },
        templateNode('deploy', tpl.deploy, {
          survey: {
            version: { from: 'survey', name: 'target' },
            api_token: { from: 'survey', name: 'password' },
          },
        }),
      ],
      edges: [edge('wait', 'deploy')],
    });
    const missing = await owner.post(p(`/workflows/${wf}/runs`), { survey: {} });
    expect(missing.statusCode).toBe(400);
    const runId = await startRun(owner, projectId, wf, {
      survey: { target: 'blue', password: 'hunter2-pw' },
    });
    const early = await getRun(owner, projectId, runId);
    expect(early.survey).toEqual({ target: 'blue', password: '**********' });
    expect(nodeOf(early, 'deploy').status).toBe('pending');
    const done = await waitForRun(owner, projectId, runId, ['success', 'failed']);
    expect(done.status).toBe('success');
    const log = (await outputOf(h.deps, nodeOf(done, 'deploy').task_id as number)).join('\n');
    expect(log).toContain('deploying version blue');
    expect(log).not.toContain('hunter2-pw');
  });
});

describe.each(testDialects())('workflows started by schedules and integrations on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let workflowId: number;
  const p = (path = '') => `/api/project/${projectId}${path}`;

  beforeAll(async () => {
    h = await createHarness(dialect);
    owner = await h.userClient({ can_create_project: true });
    ({ projectId } = await h.projectWithTeam(owner, 'Triggered'));
    const tpl = await workflowTemplates(h, projectId);
    workflowId = await createWorkflow(owner, projectId, {
      name: 'Triggered',
      survey_vars: [
        { name: 'target', title: 'Target', type: 'string', required: true, default_value: 'default-target' },
      ],
      nodes: [
        templateNode('deploy', tpl.deploy, { survey: { version: { from: 'survey', name: 'target' } } }),
      ],
      edges: [],
    });
  });
  afterAll(async () => h?.close());

  const runsOf = async (source: string) =>
    (
      (await owner.get(p(`/workflow-runs?workflow_id=${workflowId}`))).json() as {
        id: number;
        source: string;
      }[]
    ).filter((r) => r.source === source);

  it('a run-once schedule starts a run of the workflow, its extra variables answering the survey', async () => {
    const runAt = new Date(Date.now() + 1500).toISOString();
    const created = await owner.post(p('/schedules'), {
      workflow_id: workflowId,
      type: 'run_at',
      run_at: runAt,
      name: 'Nightly release',
      task_params: { environment: '{"target":"from-schedule"}' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ template_id: 0, workflow_id: workflowId, tpl_name: 'Triggered' });
    const both = await owner.post(p('/schedules'), {
      workflow_id: workflowId,
      template_id: 1,
      cron_format: '@daily',
    });
    expect(both.json().code).toBe('template_or_workflow');
    const [run] = await waitFor(async () => {
      const runs = await runsOf('schedule');
      return runs.length ? runs : undefined;
    });
    const done = await waitForRun(owner, projectId, run!.id, ['success', 'failed']);
    expect(done.status).toBe('success');
    const log = (await outputOf(h.deps, nodeOf(done, 'deploy').task_id as number)).join('\n');
    expect(log).toContain('deploying version from-schedule');
    // A workflow a schedule starts cannot be deleted under it.
    expect((await owner.del(p(`/workflows/${workflowId}`))).json().code).toBe('workflow_in_use');
  });

  it('an integration starts a run, the extracted values answering the survey', async () => {
    const created = await owner.post(p('/integrations'), { name: 'Push', workflow_id: workflowId });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as number;
    expect(
      (
        await owner.post(p(`/integrations/${id}/values`), {
          name: 'target',
          value_source: 'body',
          body_data_type: 'json',
          key: 'release.target',
          variable: 'target',
          variable_type: 'environment',
        })
      ).statusCode,
    ).toBe(201);
    const alias = (await owner.post(p(`/integrations/${id}/aliases`))).json().alias as string;
    const hook = await h.app.inject({
      method: 'POST',
      url: `/api/integrations/${alias}`,
      payload: { release: { target: 'from-webhook' } },
    });
    expect(hook.statusCode).toBe(204);
    const [run] = await waitFor(async () => {
      const runs = await runsOf('integration');
      return runs.length ? runs : undefined;
    });
    const done = await waitForRun(owner, projectId, run!.id, ['success', 'failed']);
    expect(done.status).toBe('success');
    const log = (await outputOf(h.deps, nodeOf(done, 'deploy').task_id as number)).join('\n');
    expect(log).toContain('deploying version from-webhook');
  });
});
