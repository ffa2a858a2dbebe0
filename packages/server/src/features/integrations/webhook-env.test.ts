import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { createTeam, type Team } from '../../../test/support/permission-matrix';
import {
  gitRepo,
  insertRepository,
  insertTemplate,
  outputOf,
  waitFor,
  waitForStatus,
} from '../../../test/support/task-fixtures';

describe.each(testDialects())(
  'values an integration extracts, in the task it starts, on $name',
  (dialect) => {
    let h: Harness;
    let team: Team;
    let templateId: number;

    beforeAll(async () => {
      h = await createHarness(dialect);
      team = await createTeam(h, 'Extracted values');
      const repo = gitRepo({
        'show.sh': 'echo "env COMMIT=[$COMMIT] REF=[$REF]"\necho "args [$*]"\n',
      });
      templateId = await insertTemplate(h.deps, team.projectId, {
        name: 'Show',
        repository_id: await insertRepository(h.deps, team.projectId, { git_url: repo }),
        playbook: 'show.sh',
        allow_parallel_tasks: 1,
      });
    });
    afterAll(async () => h?.close());

    const taskOf = (integrationId: number) =>
      waitFor(
        () =>
          h.deps.db
            .selectFrom('task')
            .select('id')
            .where('integration_id', '=', integrationId)
            .executeTakeFirst(),
        20_000,
        'the integration task',
      );

    it('passes an environment variable value as an environment variable of the task process', async () => {
      const created = await team.owner.post(`${team.base}/integrations`, {
        name: 'Env',
        template_id: templateId,
      });
      const id = created.json().id as number;
      const base = `${team.base}/integrations/${id}`;
      for (const value of [
        { key: 'after', variable: 'COMMIT', variable_type: 'environment' },
        { key: 'ref', variable: 'REF', variable_type: 'task' },
      ]) {
        const res = await team.owner.post(`${base}/values`, {
          name: value.variable,
          value_source: 'body',
          body_data_type: 'json',
          ...value,
        });
        expect(res.statusCode, res.body).toBe(201);
      }
      const alias = (await team.owner.post(`${base}/aliases`)).json().alias as string;
      const delivered = await h.app.inject({
        method: 'POST',
        url: `/api/integrations/${alias}`,
        payload: JSON.stringify({ after: 'abc123', ref: 'refs/heads/main' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(delivered.statusCode).toBe(204);
      const task = await taskOf(id);
      expect((await waitForStatus(h.deps, task.id, ['success', 'error'])).status).toBe('success');
      const output = (await outputOf(h.deps, task.id)).join('\n');
      // An environment variable; a task value is not one.
      expect(output).toContain('env COMMIT=[abc123] REF=[]');
    });

    it('gives a task started through the API no environment variable from its values', async () => {
      const res = await team.owner.post(`${team.base}/tasks`, {
        template_id: templateId,
        environment: '{"COMMIT": "from-api"}',
      });
      expect(res.statusCode, res.body).toBe(201);
      expect((await waitForStatus(h.deps, res.json().id, ['success', 'error'])).status).toBe('success');
      const output = (await outputOf(h.deps, res.json().id)).join('\n');
      expect(output).toContain('env COMMIT=[]');
      expect(output).toContain('args [COMMIT=from-api]');
    });
  },
);
