import { expect } from 'vitest';
import type { Client, Harness } from './harness';
import { gitRepo, insertRepository, insertTemplate, waitFor } from './task-fixtures';

/** Bash scripts the workflow tests run: a build that publishes a version and a secret, deploys that print them. */
export const workflowScripts = {
  'build.sh':
    'echo "building"\necho "version=1.4.$SIGNALBOX_TASK_ID" > "$SIGNALBOX_OUTPUTS"\n' +
    'printf \'{"token":"s3cr3t-%s-token"}\' "$SIGNALBOX_TASK_ID" > "$SIGNALBOX_SECRET_OUTPUTS"\n',
  'deploy.sh':
    'echo "deploying version $version"\necho "using token $api_token"\necho "deployed=$version" > "$SIGNALBOX_OUTPUTS"\n',
  'ok.sh': 'echo ok\n',
  'env.sh': 'echo "greeting=$GREETING"\n',
  'fail.sh': 'echo failing\nexit 3\n',
  'flaky.sh': 'echo not yet\nexit 1\n',
  'slow.sh': 'echo slow\nsleep 60\n',
};

export const deploySurvey = JSON.stringify([
  { name: 'version', title: 'Version', type: 'string', required: true },
  { name: 'api_token', title: 'Token', type: 'secret', required: false },
]);

/** A git repository of the scripts and one template per script, in a project. */
export async function workflowTemplates(h: Harness, projectId: number) {
  const repo = gitRepo(workflowScripts);
  const repository_id = await insertRepository(h.deps, projectId, { git_url: repo });
  const tpl = (playbook: string, extra: Record<string, unknown> = {}) =>
    insertTemplate(h.deps, projectId, {
      name: playbook.replace('.sh', ''),
      repository_id,
      playbook,
      allow_parallel_tasks: 1,
      ...extra,
    });
  return {
    repo,
    build: await tpl('build.sh'),
    deploy: await tpl('deploy.sh', { survey_vars: deploySurvey }),
    ok: await tpl('ok.sh'),
    fail: await tpl('fail.sh'),
    flaky: await tpl('flaky.sh'),
    slow: await tpl('slow.sh'),
    /** Prints its environment's GREETING; allows a task to change its environment. */
    env: await tpl('env.sh', { task_params: { allow_override_environment: true } }),
  };
}

type Json = Record<string, unknown>;

/** Creates a workflow (as `client`, who must be allowed to) and returns its id. */
export async function createWorkflow(client: Client, projectId: number, body: Json): Promise<number> {
  const res = await client.post(`/api/project/${projectId}/workflows`, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as number;
}

/** Starts a run and returns its id. */
export async function startRun(client: Client, projectId: number, workflowId: number, body: Json = {}) {
  const res = await client.post(`/api/project/${projectId}/workflows/${workflowId}/runs`, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as number;
}

export type RunView = {
  id: number;
  status: string;
  survey: Json;
  node_states: {
    node_id: string;
    status: string;
    task_id: number | null;
    attempt: number;
    input_digest: string | null;
    approvals_given: number | null;
    detail: string | null;
  }[];
  approvals: { node_id: string; user_id: number; decision: string; valid: boolean; digest: string }[];
};

export async function getRun(client: Client, projectId: number, runId: number): Promise<RunView> {
  const res = await client.get(`/api/project/${projectId}/workflow-runs/${runId}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as RunView;
}

/** Waits until the run's status is one of `statuses` (or, with `node`, that node's). */
export function waitForRun(
  client: Client,
  projectId: number,
  runId: number,
  statuses: string[],
  node?: string,
  timeoutMs = 30_000,
) {
  return waitFor(
    async () => {
      const run = await getRun(client, projectId, runId);
      const status = node ? run.node_states.find((n) => n.node_id === node)?.status : run.status;
      return status && statuses.includes(status) ? run : undefined;
    },
    timeoutMs,
    `run ${runId}${node ? ` node ${node}` : ''} to reach ${statuses.join('/')}`,
  );
}

export const nodeOf = (run: RunView, id: string) => {
  const node = run.node_states.find((n) => n.node_id === id);
  if (!node) throw new Error(`no node ${id}`);
  return node;
};

/** The template node of a workflow definition. */
export const templateNode = (id: string, template_id: number, extra: Json = {}) => ({
  id,
  type: 'template',
  template_id,
  ...extra,
});
export const edge = (from: string, to: string, condition = 'success') => ({ from, to, condition });
