import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dataDirDbUrl, postForId, serverChild, serverDb } from '../../../test/support/server-child';
import { cookieApi, localUrl, serverProcessEnv } from '../../../test/support/server-process';
import { insertLocalInventory, insertTemplate, waitFor } from '../../../test/support/task-fixtures';
import { insertGitRepository } from '../../../test/support/task-runs';
import { sharedTempDir } from '../../../test/support/task-shared';

/**
 * A real `signalbox server` process runs build → approval by a second user → two parallel deploys (bash, and an
 * ansible-playbook against localhost) → a 2 s delay → a smoke test, and is SIGKILLed while the run waits for the
 * approval and again while a deploy runs. After each restart the run goes on from where it was: the build never
 * runs again, each deploy and the smoke test complete once, and the deploys get the build's version.
 */
describe('a workflow run across server restarts', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-wf-restart-'));
  const server = serverChild(serverProcessEnv(dataDir));
  const record = sharedTempDir('sb-wf-record-');
  const log = join(record, 'steps.log');

  afterAll(async () => {
    if (server.running()) server.process!.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  const lines = () => {
    try {
      return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };

  it('completes after being killed while waiting for approval and while a deploy runs, running no node twice', async () => {
    const cookie = await server.startAndSignIn();
    let api = cookieApi(server.port, cookie);
    const projectId = await postForId(api, '/api/projects', { name: 'Release' });
    const p = (path: string) => `/api/project/${projectId}${path}`;

    // The approver: a second user, manager of the project.
    const approver = { username: 'approver', password: 'approver-password-1' };
    const created = await api('POST', '/api/users', {
      name: 'Approver',
      username: approver.username,
      email: 'approver@example.test',
      password: approver.password,
    });
    expect(created.status).toBe(201);
    const approverId = ((await created.json()) as { id: number }).id;
    expect((await api('POST', p('/users'), { user_id: approverId, role: 'manager' })).status).toBe(204);
    const signIn = async () => {
      const res = await fetch(localUrl(server.port, '/api/auth/login'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ auth: approver.username, password: approver.password }),
      });
      expect(res.status).toBe(204);
      return cookieApi(server.port, String(res.headers.get('set-cookie')).split(';')[0]);
    };

    const { handle, rows } = serverDb(dataDirDbUrl(dataDir));
    const { id: repo } = await insertGitRepository(
      rows,
      projectId,
      {
        'build.sh': `echo "version=3.1.$SIGNALBOX_TASK_ID" > "$SIGNALBOX_OUTPUTS"\necho "build 3.1.$SIGNALBOX_TASK_ID" >> ${log}\n`,
        'deploy.sh': `echo "deploy-bash $version start" >> ${log}\nsleep 4\necho "deploy-bash $version done" >> ${log}\n`,
        'deploy.yml': `- hosts: all
  gather_facts: false
  tasks:
    - name: deploy
      shell: echo "deploy-ansible {{ version }} done" >> ${log}
`,
        'smoke.sh': `echo "smoke" >> ${log}\n`,
      },
      { fileUrl: true },
    );
    const survey = JSON.stringify([{ name: 'version', title: 'Version', type: 'string', required: true }]);
    const tpl = (extra: Record<string, unknown>) =>
      insertTemplate(rows, projectId, { repository_id: repo, allow_parallel_tasks: 1, ...extra });
    const build = await tpl({ name: 'build', playbook: 'build.sh' });
    const deployBash = await tpl({ name: 'deploy-bash', playbook: 'deploy.sh', survey_vars: survey });
    const inventory = await insertLocalInventory(rows, projectId);
    const deployAnsible = await tpl({
      name: 'deploy-ansible',
      app: 'ansible',
      playbook: 'deploy.yml',
      inventory_id: inventory,
    });
    const smoke = await tpl({ name: 'smoke', playbook: 'smoke.sh' });
    const version = { from: 'output', node: 'build', name: 'version' };
    const wf = await postForId(api, p('/workflows'), {
      name: 'Release',
      nodes: [
        { id: 'build', type: 'template', template_id: build },
        { id: 'approve', type: 'approval', roles: ['manager'], message: 'Release?' },
        { id: 'deploy_bash', type: 'template', template_id: deployBash, survey: { version } },
        { id: 'deploy_ansible', type: 'template', template_id: deployAnsible, extra_vars: { version } },
        { id: 'wait', type: 'delay', seconds: 2 },
        { id: 'smoke', type: 'template', template_id: smoke },
      ],
      edges: [
        { from: 'build', to: 'approve' },
        { from: 'approve', to: 'deploy_bash' },
        { from: 'approve', to: 'deploy_ansible' },
        { from: 'deploy_bash', to: 'wait' },
        { from: 'deploy_ansible', to: 'wait' },
        { from: 'wait', to: 'smoke' },
      ],
    });
    expect(wf).toBeGreaterThan(0);
    const runId = await postForId(api, p(`/workflows/${wf}/runs`), { message: 'v3' });
    type Run = {
      status: string;
      node_states: {
        node_id: string;
        status: string;
        task_id: number | null;
        input_digest: string | null;
        start: string | null;
        end: string | null;
      }[];
    };
    const readRun = async () => (await (await api('GET', p(`/workflow-runs/${runId}`))).json()) as Run;
    const untilRun = (statuses: string[], timeoutMs = 60_000) =>
      waitFor(
        async () => {
          try {
            const run = await readRun();
            return statuses.includes(run.status) ? run : undefined;
          } catch {
            return undefined;
          }
        },
        timeoutMs,
        `run to reach ${statuses.join('/')}`,
      );
    const node = (run: Run, id: string) => run.node_states.find((n) => n.node_id === id)!;

    const waiting = await untilRun(['waiting_approval']);
    const buildTask = node(waiting, 'build').task_id;
    const buildVersion = `3.1.${buildTask}`;

    // Killed while the run waits for the approval.
    await server.stop('SIGKILL');
    await server.start();
    api = cookieApi(server.port, cookie);
    const resumed = await untilRun(['waiting_approval']);
    expect(node(resumed, 'build').task_id).toBe(buildTask);
    const digest = node(resumed, 'approve').input_digest!;
    expect(node(waiting, 'approve').input_digest).toBe(digest);

    const asApprover = await signIn();
    const approved = await asApprover('POST', p(`/workflow-runs/${runId}/nodes/approve/approve`), { digest });
    expect(approved.status, await approved.clone().text()).toBe(200);

    // Killed while the bash deploy runs.
    await waitFor(
      async () => lines().some((l) => l.startsWith('deploy-bash') && l.endsWith('start')),
      60_000,
      'the deploy to start',
    );
    await server.stop('SIGKILL');
    await server.start();
    api = cookieApi(server.port, cookie);

    const done = await untilRun(['success', 'failed', 'stopped', 'rejected'], 120_000);
    expect(done.status).toBe('success');
    const steps = lines();
    expect(steps.filter((l) => l.startsWith('build'))).toEqual([`build ${buildVersion}`]);
    expect(steps.filter((l) => l === `deploy-bash ${buildVersion} done`)).toHaveLength(1);
    expect(steps.filter((l) => l.startsWith('deploy-ansible'))).toEqual([
      `deploy-ansible ${buildVersion} done`,
    ]);
    expect(steps.filter((l) => l === 'smoke')).toHaveLength(1);
    // Every node ended with one task that ran to its end; the only other tasks are those the restart cut short.
    const tasks = await handle.db
      .selectFrom('task')
      .select(['workflow_node_id', 'status', 'message'])
      .where('workflow_run_id', '=', runId)
      .execute();
    for (const id of ['build', 'deploy_bash', 'deploy_ansible', 'smoke'])
      expect(
        tasks.filter((t) => t.workflow_node_id === id && t.status === 'success'),
        id,
      ).toHaveLength(1);
    for (const t of tasks.filter((t) => t.status !== 'success'))
      expect(t.message, String(t.workflow_node_id)).toBe('Interrupted by server restart');
    expect(tasks.filter((t) => t.workflow_node_id === 'build')).toHaveLength(1);
    // The bash deploy was cut short by the second kill: its node started one new task, which completed.
    expect(tasks.filter((t) => t.workflow_node_id === 'deploy_bash')).toHaveLength(2);
    // The smoke test started at least 2 s after both deploys ended.
    const lastDeploy = Math.max(
      ...['deploy_bash', 'deploy_ansible'].map((id) => new Date(node(done, id).end!).getTime()),
    );
    expect(new Date(node(done, 'smoke').start!).getTime() - lastDeploy).toBeGreaterThanOrEqual(2000);
    await handle.destroy();
    await server.stop('SIGTERM');
  }, 300_000);
});
