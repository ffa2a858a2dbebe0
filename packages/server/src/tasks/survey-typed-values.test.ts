import { emptySurveyVar, type TemplateSurveyVar } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import {
  gitRepo,
  insertInventory,
  insertLocalInventory,
  insertRepository,
  insertTemplate,
  outputOf,
  toolsOnPath,
  waitForStatus,
} from '../../test/support/task-fixtures';
import { harnessWithProject } from '../../test/support/task-runs';

const v = (name: string, extra: Partial<TemplateSurveyVar>): TemplateSurveyVar => ({
  ...emptySurveyVar,
  name,
  title: name,
  ...extra,
});

/** A survey of typed answers, and the answers every app gets. */
const survey = [
  v('flag', { type: 'boolean' }),
  v('tags', {
    type: 'multiselect',
    values: [
      { name: 'A', value: 'a' },
      { name: 'B', value: 'b' },
    ],
  }),
  v('labels', { type: 'kv' }),
  v('count', { type: 'int', min: 1 }),
  v('ratio', { type: 'number' }),
  v('host', { type: 'string' }),
  v('token', { type: 'secret' }),
];
const environment = {
  flag: true,
  tags: ['a', 'b'],
  labels: { team: 'ops' },
  count: 3,
  ratio: 0.5,
  host: 'web 1',
};
const token = 'typed-s3cret-token';

/** A terraform stand-in: prints the TF_VAR_ variables it got when it plans, and finds no changes. */
const tfScript = () => `#!/bin/bash
case "$1" in
  workspace) echo "* default" ;;
  plan) env | grep '^TF_VAR_' | sort; echo "No changes. Your infrastructure matches the configuration." ;;
esac
`;

describe.each(testDialects())('typed survey answers reaching the apps on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let repositoryId: number;
  let restorePath = () => {};

  beforeAll(async () => {
    ({ restore: restorePath } = toolsOnPath({ terraform: tfScript }));
    ({ h, owner, projectId } = await harnessWithProject(dialect));
    repositoryId = await insertRepository(h.deps, projectId, {
      git_url: gitRepo({
        'site.yml': `- hosts: all
  gather_facts: false
  tasks:
    - debug:
        msg: "types flag={{ flag | type_debug }} tags={{ tags | type_debug }} labels={{ labels | type_debug }} count={{ count | type_debug }} ratio={{ ratio | type_debug }} first={{ tags[0] }} team={{ labels.team }} token={{ token | length }}"
`,
        'env.sh':
          'echo "env flag=[$flag] tags=[$tags] labels=[$labels] count=[$count] ratio=[$ratio] host=[$host] token=[$(expr length "$token")]"\necho "args [$*]"\n',
        'infra/main.tf': '# nothing\n',
      }),
    });
  });
  afterAll(async () => {
    restorePath();
    await h?.close();
  });

  async function run(tpl: Record<string, unknown>) {
    const templateId = await insertTemplate(h.deps, projectId, {
      repository_id: repositoryId,
      allow_parallel_tasks: 1,
      survey_vars: JSON.stringify(survey),
      ...tpl,
    });
    const res = await owner.post(`/api/project/${projectId}/tasks`, {
      template_id: templateId,
      environment: JSON.stringify(environment),
      secret: JSON.stringify({ token }),
    });
    expect(res.statusCode, res.body).toBe(201);
    const done = await waitForStatus(h.deps, res.json().id, ['success', 'error']);
    const output = (await outputOf(h.deps, res.json().id)).join('\n');
    expect(done.status, output).toBe('success');
    expect(output).not.toContain(token);
    return output;
  }

  it('gives ansible-playbook booleans, lists, dicts and numbers with their types', async () => {
    const inventoryId = await insertLocalInventory(h.deps, projectId);
    const output = await run({ app: 'ansible', playbook: 'site.yml', inventory_id: inventoryId });
    expect(output).toContain(
      `types flag=bool tags=list labels=dict count=int ratio=float first=a team=ops token=${token.length}`,
    );
  });

  it('gives bash each answer as an environment variable: text as it is, lists and maps as JSON', async () => {
    const output = await run({ app: 'bash', playbook: 'env.sh' });
    expect(output).toContain(
      `env flag=[true] tags=[["a","b"]] labels=[{"team":"ops"}] count=[3] ratio=[0.5] host=[web 1] token=[${token.length}]`,
    );
    // The NAME=VALUE arguments as before, the secret never among them.
    expect(output).toContain(
      'args [flag=true tags=["a","b"] labels={"team":"ops"} count=3 ratio=0.5 host=web 1]',
    );
  });

  it('gives terraform each answer as TF_VAR_<name> in HCL form', async () => {
    const inventoryId = await insertInventory(h.deps, projectId, {
      type: 'terraform-workspace',
      inventory: 'default',
    });
    const output = await run({ app: 'terraform', playbook: 'infra', inventory_id: inventoryId });
    for (const line of [
      'TF_VAR_count=3',
      'TF_VAR_flag=true',
      'TF_VAR_host=web 1',
      'TF_VAR_labels={"team":"ops"}',
      'TF_VAR_ratio=0.5',
      'TF_VAR_tags=["a","b"]',
    ])
      expect(output).toContain(line);
    // The secret is there too (masked in the output).
    expect(output).toMatch(/TF_VAR_token=\S/);
  });
});
