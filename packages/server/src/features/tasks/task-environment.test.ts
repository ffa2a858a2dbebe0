import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import type { Client, Harness } from '../../../test/support/harness';
import {
  insertEnvironment,
  insertTemplate,
  outputOf,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import {
  ENDED,
  harnessWithProject,
  insertGitRepository,
  insertSecretEnvironment,
  runTask,
} from '../../../test/support/task-runs';

describe.each(testDialects())('a task environment override on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let runner: Client;
  let projectId: number;
  let staging: number;
  let production: number;
  let foreign: number;
  let allowing: number;
  let strict: number;
  const p = (path: string) => `/api/project/${projectId}${path}`;

  beforeAll(async () => {
    const made = await harnessWithProject(dialect, { maxParallelTasks: 10 });
    ({ h, owner, projectId } = made);
    runner = made.members.task_runner;
    const repo = await insertGitRepository(h.deps, projectId, {
      // Bash gets extra variables as NAME=value arguments, environment variables as such.
      'env.sh': 'echo "greeting=$GREETING token=$API_TOKEN vars=$*"\n',
    });
    staging = await insertEnvironment(h.deps, projectId, {
      name: 'staging',
      json: { region: 'staging-1' },
      env: { GREETING: 'hello-staging' },
    });
    production = await insertSecretEnvironment(
      h.deps,
      projectId,
      { name: 'production', json: { region: 'prod-1' }, env: { GREETING: 'hello-prod' } },
      { env: { API_TOKEN: 'prod-token-very-secret' } },
    );
    const other = await owner.post('/api/projects', { name: 'Other environments' });
    expect(other.statusCode, other.body).toBe(201);
    foreign = await insertSecretEnvironment(
      h.deps,
      other.json().id,
      { name: 'theirs', env: { GREETING: 'hello-foreign' } },
      { env: { API_TOKEN: 'foreign-token-secret' } },
    );
    const template = (name: string, task_params: Record<string, unknown>) =>
      insertTemplate(h.deps, projectId, {
        name,
        repository_id: repo.id,
        playbook: 'env.sh',
        environment_id: staging,
        allow_parallel_tasks: 1,
        task_params,
      });
    allowing = await template('allowing', { allow_override_environment: true });
    strict = await template('strict', {});
  });
  afterAll(async () => h?.close());

  it("runs with the overriding environment's variables and secrets, and shows it on the task", async () => {
    const { done: task, out } = await runTask(h, runner, projectId, {
      template_id: allowing,
      environment_id: production,
    });
    const log = out.join('\n');
    expect(task.status, log).toBe('success');
    expect(log).toContain('greeting=hello-prod');
    expect(log).toContain('vars=region=prod-1');
    expect(log).not.toContain('staging');
    // The overriding environment's secret reaches the run, masked in its log.
    expect(log).toMatch(/token=\*+/);
    expect(log).not.toContain('prod-token-very-secret');
    const view = (await owner.get(p(`/tasks/${task.id}`))).json();
    expect(view.environment_id).toBe(production);

    // Without an override the template's environment is used, and the task says it has none of its own.
    const plain = await runTask(h, runner, projectId, { template_id: allowing });
    expect(plain.out.join('\n')).toContain('greeting=hello-staging token= vars=region=staging-1');
    expect((await owner.get(p(`/tasks/${plain.done.id}`))).json().environment_id).toBeNull();
    // Echoing the template's own environment is no override.
    const echoed = await runner.post(p('/tasks'), { template_id: strict, environment_id: staging });
    expect(echoed.statusCode, echoed.body).toBe(201);
    expect(echoed.json().environment_id).toBeNull();
  });

  it('keeps the override on a re-run', async () => {
    const { done: task } = await runTask(h, runner, projectId, {
      template_id: allowing,
      environment_id: production,
    });
    const res = await runner.post(p(`/tasks/${task.id}/rerun`), {});
    expect(res.statusCode, res.body).toBeLessThan(300);
    const again = res.json();
    expect(again.environment_id).toBe(production);
    await waitForStatus(h.deps, again.id, ENDED);
    expect((await outputOf(h.deps, again.id)).join('\n')).toContain('greeting=hello-prod');
  });

  it("refuses another project's environment, an unknown one, and an override the template does not allow", async () => {
    const before = await h.deps.db.selectFrom('task').select('id').execute();
    const foreignRes = await runner.post(p('/tasks'), { template_id: allowing, environment_id: foreign });
    expect(foreignRes.statusCode, foreignRes.body).toBe(400);
    expect(foreignRes.json()).toMatchObject({
      code: 'not_in_project',
      params: { what: 'environment', id: foreign },
      field_errors: { environment_id: { code: 'not_found' } },
    });
    expect(foreignRes.body).not.toContain('foreign-token-secret');
    const unknown = await runner.post(p('/tasks'), { template_id: allowing, environment_id: 999_999 });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().code).toBe('not_in_project');
    const bad = await runner.post(p('/tasks'), { template_id: allowing, environment_id: 'prod' });
    expect(bad.statusCode).toBe(400);
    const notAllowed = await runner.post(p('/tasks'), { template_id: strict, environment_id: production });
    expect(notAllowed.statusCode, notAllowed.body).toBe(403);
    expect(notAllowed.json()).toMatchObject({
      code: 'environment_override_not_allowed',
      field_errors: { environment_id: { code: 'environment_override_not_allowed' } },
    });
    // A refused task is never stored.
    expect(await h.deps.db.selectFrom('task').select('id').execute()).toHaveLength(before.length);
  });

  it('is a template option that round-trips through the template API', async () => {
    const tpl = (await owner.get(p(`/templates/${allowing}`))).json();
    expect(tpl.task_params.allow_override_environment).toBe(true);
    const current = (await owner.get(p(`/templates/${strict}`))).json() as Record<string, unknown>;
    const res = await owner.put(p(`/templates/${strict}`), {
      ...current,
      task_params: { allow_override_environment: true },
    });
    expect(res.statusCode, res.body).toBe(204);
    expect((await owner.get(p(`/templates/${strict}`))).json().task_params.allow_override_environment).toBe(
      true,
    );
  });
});
