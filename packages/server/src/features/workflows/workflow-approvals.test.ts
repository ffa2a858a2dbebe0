import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { insertEnvironment } from '../../../test/support/task-fixtures';
import {
  createWorkflow,
  edge,
  getRun,
  nodeOf,
  type RunView,
  startRun,
  templateNode,
  waitForRun,
  workflowTemplates,
} from '../../../test/support/workflow-fixtures';
import { alertsIdle } from '../../alerts/alerts';
import { now } from '../../db/values';

describe.each(testDialects())('workflow approvals on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let members: Record<'manager' | 'task_runner' | 'guest', Client>;
  let manager2: Client;
  let named: Client;
  let projectId: number;
  let otherProject: number;
  let tpl: Awaited<ReturnType<typeof workflowTemplates>>;
  const p = (path = '') => `/api/project/${projectId}${path}`;
  const approve = (c: Client, runId: number, digest: string, project = projectId) =>
    c.post(`/api/project/${project}/workflow-runs/${runId}/nodes/gate/approve`, { digest });
  const reject = (c: Client, runId: number, reason?: string) =>
    c.post(p(`/workflow-runs/${runId}/nodes/gate/reject`), reason === undefined ? {} : { reason });
  const inbox = async (c: Client) => {
    const res = await c.get('/api/approvals');
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as {
      kind: string;
      run_id: number | null;
      node_id: string | null;
      input_digest: string;
    }[];
  };
  const addMember = async (role: string) => {
    const c = await h.userClient();
    await h.deps.db
      .insertInto('project_user')
      .values({ project_id: projectId, user_id: c.userId, role, created: now() })
      .execute();
    return c;
  };

  /** build → gate → deploy, the gate as `gate` says. */
  const gated = (name: string, gate: Record<string, unknown>) =>
    createWorkflow(owner, projectId, {
      name,
      nodes: [
        templateNode('build', tpl.build),
        { id: 'gate', type: 'approval', message: 'Ship it?', ...gate },
        templateNode('deploy', tpl.deploy, {
          survey: { version: { from: 'output', node: 'build', name: 'version' } },
        }),
      ],
      edges: [edge('build', 'gate'), edge('gate', 'deploy')],
    });

  beforeAll(async () => {
    h = await createHarness(dialect);
    owner = await h.userClient({ can_create_project: true });
    ({ projectId, members } = await h.projectWithTeam(owner, 'Gated'));
    manager2 = await addMember('manager');
    named = await addMember('guest');
    tpl = await workflowTemplates(h, projectId);
    otherProject = (await owner.post('/api/projects', { name: 'Other' })).json().id;
  });
  afterAll(async () => h?.close());

  it('shows the approvers the inputs the next nodes run with, secret ones masked, beside their digest', async () => {
    const production = await insertEnvironment(h.deps, projectId, { name: 'gate-production' });
    const wf = await createWorkflow(owner, projectId, {
      name: 'Reviewed inputs',
      survey_vars: [
        { name: 'region', title: 'Region', type: 'string' },
        { name: 'password', title: 'Password', type: 'secret' },
      ],
      nodes: [
        templateNode('build', tpl.build),
        { id: 'gate', type: 'approval', message: 'Ship it?' },
        templateNode('deploy', tpl.deploy, {
          survey: {
            version: { from: 'output', node: 'build', name: 'version' },
            api_token: { from: 'output', node: 'build', name: 'token' },
          },
          extra_vars: {
            region: { from: 'survey', name: 'region' },
            password: { from: 'survey', name: 'password' },
            tier: { from: 'fixed', value: 'gold' },
          },
          limit: { from: 'fixed', value: 'web1,web2' },
          git_branch: { from: 'survey', name: 'region' },
        }),
        templateNode('smoke', tpl.env, {
          environment_id: { from: 'fixed', value: production },
          extra_vars: { deployed: { from: 'output', node: 'deploy', name: 'deployed' } },
        }),
      ],
      edges: [edge('build', 'gate'), edge('gate', 'deploy'), edge('deploy', 'smoke')],
    });
    const runId = await startRun(owner, projectId, wf, {
      survey: { region: 'eu-west', password: 'hunter2-very-secret' },
    });
    await waitForRun(owner, projectId, runId, ['waiting_approval']);
    const res = await members.guest.get(p(`/workflow-runs/${runId}`));
    expect(res.statusCode).toBe(200);
    // Neither the secret survey answer nor the secret output is ever answered.
    expect(res.body).not.toContain('hunter2');
    expect(res.body).not.toContain('s3cr3t');
    type Shown = { node_id: string; input_digest: string; inputs: Record<string, unknown>[] | null };
    const run = res.json() as Omit<RunView, 'node_states'> & {
      node_states: (RunView['node_states'][0] & Shown)[];
    };
    const gate = run.node_states.find((n) => n.node_id === 'gate') as Shown & {
      inputs: Record<string, unknown>[];
    };
    expect(gate.input_digest).toMatch(/^[0-9a-f]{64}$/);
    const buildTask = nodeOf(run, 'build').task_id as number;
    const version = `1.4.${buildTask}`;
    const shown = Object.fromEntries(
      gate.inputs.map((i) => [`${i.node_id}.${i.field}${i.name ? `.${i.name}` : ''}`, i]),
    );
    expect(Object.keys(shown).sort()).toEqual(
      [
        'deploy.extra_vars.password',
        'deploy.extra_vars.region',
        'deploy.extra_vars.tier',
        'deploy.git_branch',
        'deploy.limit',
        'deploy.survey.api_token',
        'deploy.survey.version',
        'smoke.environment_id',
        'smoke.extra_vars.deployed',
      ].sort(),
    );
    expect(shown['deploy.survey.version']).toMatchObject({
      state: 'value',
      value: version,
      secret: false,
      source: { from: 'output', node: 'build', name: 'version' },
    });
    expect(shown['deploy.survey.api_token']).toMatchObject({
      state: 'value',
      value: '**********',
      secret: true,
    });
    expect(shown['deploy.extra_vars.password']).toMatchObject({ value: '**********', secret: true });
    expect(shown['deploy.extra_vars.region']).toMatchObject({ value: 'eu-west', secret: false });
    expect(shown['deploy.extra_vars.tier']).toMatchObject({ value: 'gold', source: { from: 'fixed' } });
    expect(shown['deploy.limit']).toMatchObject({ field: 'limit', name: null, value: 'web1,web2' });
    expect(shown['deploy.git_branch']).toMatchObject({ value: 'eu-west' });
    expect(shown['smoke.environment_id']).toMatchObject({ value: production, label: 'gate-production' });
    // The deploy has not run: what it will publish is not known yet.
    expect(shown['smoke.extra_vars.deployed']).toMatchObject({ state: 'pending', value: null });
    // Other nodes show none; the run lists none.
    expect(run.node_states.find((n) => n.node_id === 'build')?.inputs).toBeNull();
    const listed = (await owner.get(p(`/workflow-runs?workflow_id=${wf}`))).json();
    expect(listed[0].node_states.find((n: { node_id: string }) => n.node_id === 'gate').inputs).toBeNull();
    expect((await owner.post(p(`/workflow-runs/${runId}/stop`), {})).statusCode).toBe(200);
  });

  it('lets only the roles and named users approve, never the starter, counts approvals, and binds them to inputs', async () => {
    const wf = await gated('Two approvals', {
      roles: ['manager'],
      user_ids: [named.userId],
      required: 2,
    });
    // Started by a manager: the other manager and the named guest may approve, the starter may not.
    const runId = await startRun(members.manager, projectId, wf);
    const waiting = await waitForRun(owner, projectId, runId, ['waiting_approval']);
    const digest = nodeOf(waiting, 'gate').input_digest as string;
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(nodeOf(waiting, 'deploy').status).toBe('pending');

    expect((await approve(members.manager, runId, digest)).json().code).toBe('workflow_self_approval');
    expect((await approve(owner, runId, digest)).json().code).toBe('workflow_not_approver');
    expect((await approve(members.task_runner, runId, digest)).json().code).toBe('workflow_not_approver');
    expect((await approve(members.guest, runId, digest)).statusCode).toBe(403);
    // Another project's id never reaches the run, even for a member of both.
    expect((await approve(owner, runId, digest, otherProject)).statusCode).toBe(404);
    // A token limited to reading may not decide.
    const readToken = (await named.post('/api/user/tokens', { name: 'read only', scopes: ['read'] })).json()
      .token;
    const byReadToken = await h.app.inject({
      method: 'POST',
      url: p(`/workflow-runs/${runId}/nodes/gate/approve`),
      headers: { authorization: `Bearer ${readToken}` },
      payload: { digest },
    });
    expect(byReadToken.json().code).toBe('missing_token_scope');
    const stranger = await h.userClient();
    expect((await approve(stranger, runId, digest)).statusCode).toBe(403);
    // An approval names the inputs the approver saw.
    expect((await approve(manager2, runId, 'a'.repeat(64))).json().code).toBe(
      'workflow_approval_inputs_changed',
    );
    expect((await approve(manager2, runId, 'not hex')).json().code).toBe('workflow_digest_format');

    // The inbox lists it for those who may approve it.
    expect((await inbox(manager2)).some((i) => i.run_id === runId && i.input_digest === digest)).toBe(true);
    expect((await inbox(named)).some((i) => i.run_id === runId)).toBe(true);
    expect((await inbox(members.manager)).some((i) => i.run_id === runId)).toBe(false);
    expect((await inbox(owner)).some((i) => i.run_id === runId)).toBe(false);

    const first = await approve(named, runId, digest);
    expect(first.statusCode, first.body).toBe(200);
    expect(nodeOf(first.json(), 'gate')).toMatchObject({ status: 'waiting_approval', approvals_given: 1 });
    expect((await approve(named, runId, digest)).json().code).toBe('workflow_already_answered');
    expect((await inbox(named)).some((i) => i.run_id === runId)).toBe(false);
    expect((await approve(manager2, runId, digest)).statusCode).toBe(200);
    const done = await waitForRun(owner, projectId, runId, ['success', 'failed']);
    expect(done.status).toBe('success');
    expect(done.approvals.map((a) => [a.user_id, a.decision, a.valid])).toEqual([
      [named.userId, 'approved', true],
      [manager2.userId, 'approved', true],
    ]);
    expect((await approve(manager2, runId, digest)).json().code).toBe('workflow_node_not_waiting_approval');
    const events = (await owner.get(p('/events?limit=100'))).json() as { kind: string; object_id: number }[];
    expect(events.filter((e) => e.kind === 'workflow.approved' && e.object_id === runId)).toHaveLength(2);

    // A re-run of the build changes the inputs: the earlier approvals are void and the gate waits again.
    expect(
      (await members.task_runner.post(p(`/workflow-runs/${runId}/rerun`), { node_id: 'build' })).statusCode,
    ).toBe(200);
    const again = await waitForRun(owner, projectId, runId, ['waiting_approval']);
    const newDigest = nodeOf(again, 'gate').input_digest as string;
    expect(newDigest).not.toBe(digest);
    expect(nodeOf(again, 'gate').approvals_given).toBe(0);
    expect(again.approvals.every((a) => !a.valid)).toBe(true);
    expect((await approve(named, runId, digest)).json().code).toBe('workflow_approval_inputs_changed');
    expect((await approve(named, runId, newDigest)).statusCode).toBe(200);
    expect(nodeOf(await getRun(owner, projectId, runId), 'gate').status).toBe('waiting_approval');
    await owner.post(p(`/workflow-runs/${runId}/stop`));
  });

  it('allows self-approval only when the node says so, and with one approval', async () => {
    const wf = await gated('Self', { roles: ['owner'], allow_self_approval: true });
    const runId = await startRun(owner, projectId, wf);
    const waiting = await waitForRun(owner, projectId, runId, ['waiting_approval']);
    expect((await approve(owner, runId, nodeOf(waiting, 'gate').input_digest as string)).statusCode).toBe(
      200,
    );
    expect((await waitForRun(owner, projectId, runId, ['success', 'failed'])).status).toBe('success');
  });

  it('ends rejected when an approver rejects with a reason; the next nodes never run', async () => {
    const wf = await gated('Rejected', { roles: ['manager'] });
    const runId = await startRun(owner, projectId, wf);
    await waitForRun(owner, projectId, runId, ['waiting_approval']);
    expect((await reject(manager2, runId)).json().code).toBe('required');
    expect((await reject(members.task_runner, runId, 'no')).json().code).toBe('workflow_not_approver');
    const res = await reject(manager2, runId, 'not on a Friday');
    expect(res.statusCode, res.body).toBe(200);
    const run = await waitForRun(owner, projectId, runId, ['rejected', 'failed', 'success']);
    expect(run.status).toBe('rejected');
    expect(nodeOf(run, 'gate')).toMatchObject({ status: 'rejected', detail: 'Rejected: not on a Friday' });
    expect(nodeOf(run, 'deploy')).toMatchObject({ status: 'skipped', task_id: null });
    const events = (await owner.get(p('/events?limit=100'))).json() as {
      kind: string;
      object_id: number;
      params: Record<string, unknown>;
    }[];
    expect(events.find((e) => e.kind === 'workflow.rejected' && e.object_id === runId)?.params).toMatchObject(
      {
        reason: 'not on a Friday',
        node: 'gate',
      },
    );
  });

  it('times out once: with fail the run fails, with skip the rest is skipped and the run succeeds', async () => {
    const failing = await gated('Timeout fail', {
      roles: ['manager'],
      timeout_seconds: 1,
      on_timeout: 'fail',
    });
    const skipping = await gated('Timeout skip', {
      roles: ['manager'],
      timeout_seconds: 1,
      on_timeout: 'skip',
    });
    const failRun = await startRun(owner, projectId, failing);
    const skipRun = await startRun(owner, projectId, skipping);
    const failed = await waitForRun(owner, projectId, failRun, ['failed', 'success', 'rejected']);
    expect(failed.status).toBe('failed');
    expect(nodeOf(failed, 'gate').status).toBe('failed');
    expect(nodeOf(failed, 'deploy').status).toBe('skipped');
    const skipped = await waitForRun(owner, projectId, skipRun, ['failed', 'success', 'rejected']);
    expect(skipped.status).toBe('success');
    expect(nodeOf(skipped, 'gate').status).toBe('skipped');
    expect(nodeOf(skipped, 'deploy')).toMatchObject({ status: 'skipped', task_id: null });
    const events = (await owner.get(p('/events?limit=200'))).json() as { kind: string; object_id: number }[];
    for (const id of [failRun, skipRun])
      expect(
        events.filter((e) => e.kind === 'workflow.approval_timed_out' && e.object_id === id),
      ).toHaveLength(1);
    // Metrics: runs by status, and how long approvals waited, by outcome.
    const metrics = await h.deps.metrics.exposition();
    expect(metrics).toMatch(/signalbox_workflow_runs\{status="failed"\} [1-9]/);
    expect(metrics).toMatch(/signalbox_workflow_approval_wait_seconds_count\{outcome="timed_out"\} 2/);
    expect(metrics).toMatch(/signalbox_workflow_runs_finished_total\{status="success"\} [1-9]/);
    await alertsIdle(h.deps);
  });

  it('lists agent runs waiting for approval in the same inbox', async () => {
    expect((await h.anonymous().get('/api/approvals')).statusCode).toBe(401);
    const task = await h.deps.db
      .insertInto('task')
      .values({
        project_id: projectId,
        template_id: tpl.ok,
        status: 'waiting_approval',
        message: 'agent run',
        created: now(),
        playbook: '',
        environment: '{}',
        params: '{}',
        debug: 0,
        dry_run: 0,
        diff: 0,
        source: 'mcp',
      })
      .executeTakeFirst();
    const items = await inbox(members.task_runner);
    expect(items.some((i) => i.kind === 'task')).toBe(true);
    expect((await inbox(members.guest)).some((i) => i.kind === 'task')).toBe(false);
    expect(task).toBeTruthy();
  });
});
