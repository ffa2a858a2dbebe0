import type { ProjectRole } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { answeredError, type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  gitRepo,
  insertRepository,
  insertTemplate,
  outputOf,
  waitForStatus,
} from '../../../test/support/task-fixtures';

const target = (extra: Record<string, unknown> = {}) => ({
  name: 'target',
  title: 'Target host',
  type: 'string',
  required: true,
  ...extra,
});

describe.each(testDialects())('required survey answers on $name', (dialect) => {
  let h: Harness;
  let members: Record<ProjectRole, Client>;
  let projectId: number;
  let repositoryId: number;
  const p = (path: string) => `/api/project/${projectId}${path}`;

  beforeAll(async () => {
    h = await createHarness(dialect);
    const owner = await h.userClient({ can_create_project: true });
    ({ projectId, members } = await h.projectWithTeam(owner));
    repositoryId = await insertRepository(h.deps, projectId, {
      git_url: gitRepo({ 'run.sh': 'echo "ran for [$*]"\n' }),
    });
  });
  afterAll(async () => h?.close());

  const template = (surveyVars: object[]) =>
    insertTemplate(h.deps, projectId, {
      name: 'Survey',
      repository_id: repositoryId,
      playbook: 'run.sh',
      allow_parallel_tasks: 1,
      survey_vars: JSON.stringify(surveyVars),
    });

  it('refuses a task through the API that leaves a required survey variable unanswered', async () => {
    const tpl = await template([target(), { name: 'note', title: 'Note', type: 'string', required: false }]);
    for (const environment of [undefined, '{}', '{"target": ""}', '{"target": "  "}', '{"target": null}']) {
      const res = await members.task_runner.post(p('/tasks'), { template_id: tpl, environment });
      expect(res.statusCode, String(environment)).toBe(400);
      expect(res.json()).toMatchObject(
        answeredError(res, {
          error: 'Target host is required',
          fields: { 'survey.target': 'Target host is required' },
        }),
      );
    }
    const ok = await members.task_runner.post(p('/tasks'), {
      template_id: tpl,
      environment: '{"target": "web1"}',
    });
    expect(ok.statusCode, ok.body).toBe(201);
    await waitForStatus(h.deps, ok.json().id, ['success']);
  });

  it("fills a required variable's default and accepts a secret variable answered in the secret values", async () => {
    const tpl = await template([
      target({ default_value: 'db1' }),
      { name: 'token', title: 'Token', type: 'secret', required: true },
    ]);
    const refused = await members.task_runner.post(p('/tasks'), { template_id: tpl });
    expect(refused.json().error).toBe('Token is required');
    const res = await members.task_runner.post(p('/tasks'), { template_id: tpl, secret: '{"token": "t0k"}' });
    expect(res.statusCode, res.body).toBe(201);
    expect(JSON.parse(res.json().environment)).toEqual({ target: 'db1' });
    await waitForStatus(h.deps, res.json().id, ['success']);
    expect((await outputOf(h.deps, res.json().id)).join('\n')).toContain('ran for [target=db1]');
  });

  it('fails, without running it, a task started by no one that leaves a required variable unanswered', async () => {
    const tpl = await template([target()]);
    // As a schedule, an integration or an autorun starts it: nobody to answer a 400.
    const id = await h.deps.startTask(projectId, { template_id: tpl }, { userId: null });
    const task = await waitForStatus(h.deps, id, ['success', 'error']);
    expect(task.status).toBe('error');
    const output = (await outputOf(h.deps, id)).join('\n');
    expect(output).toContain('Required survey variable "Target host" (target) has no value');
    expect(output).not.toContain('ran for');

    const answered = await h.deps.startTask(
      projectId,
      { template_id: tpl, environment: '{"target": "web2"}' },
      { userId: null },
    );
    expect((await waitForStatus(h.deps, answered, ['success', 'error'])).status).toBe('success');
  });

  it('refuses to save a schedule of a template whose required variable has no default', async () => {
    const tpl = await template([target()]);
    const body = { template_id: tpl, cron_format: '0 3 * * *', name: 'Nightly', active: true };
    const res = await members.manager.post(p('/schedules'), body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe(
      'A schedule cannot answer the template\'s required survey variable "Target host": give it a default in the template, make it optional, or set it in the schedule\'s extra variables (not a secret one)',
    );
    expect(res.json().fields).toHaveProperty('template_id');
    const runOnce = await members.manager.post(p('/schedules'), {
      type: 'run_at',
      template_id: tpl,
      run_at: new Date(Date.now() + 3_600_000).toISOString(),
      active: true,
    });
    expect(runOnce.statusCode, runOnce.body).toBe(400);

    // With a default the schedule's runs have an answer.
    const withDefault = await template([target({ default_value: 'web3' })]);
    const saved = await members.manager.post(p('/schedules'), { ...body, template_id: withDefault });
    expect(saved.statusCode, saved.body).toBe(201);
    // Moving it to a template it cannot answer is refused too.
    const moved = await members.manager.put(p(`/schedules/${saved.json().id}`), {
      ...body,
      id: saved.json().id,
      template_id: tpl,
    });
    expect(moved.statusCode, moved.body).toBe(400);
  });

  it('accepts a schedule whose extra variables answer the required variable, never a secret one', async () => {
    const tpl = await template([target(), target({ name: 'token', title: 'Token', type: 'secret' })]);
    const body = { template_id: tpl, cron_format: '0 3 * * *', name: 'Nightly', active: true };
    // Both answered in the schedule's extra variables: the secret one is not taken from there.
    const secretToo = await members.manager.post(p('/schedules'), {
      ...body,
      task_params: { environment: '{"target":"web2","token":"s3cret"}' },
    });
    expect(secretToo.statusCode, secretToo.body).toBe(400);
    expect(secretToo.json().error).toContain('"Token"');
    expect(secretToo.json().error).not.toContain('"Target host"');

    const plain = await template([target()]);
    const saved = await members.manager.post(p('/schedules'), {
      ...body,
      template_id: plain,
      task_params: { environment: '{"target":"web2"}' },
    });
    expect(saved.statusCode, saved.body).toBe(201);
    expect(saved.json().task_params).toMatchObject({ environment: '{"target":"web2"}', message: '' });
  });
});
