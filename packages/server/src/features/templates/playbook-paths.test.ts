import {
  codeOfIssue,
  errorMessage,
  playbookPathMessages,
  playbookPathProblem,
  templateInput,
} from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { createTeam, type Team } from '../../../test/support/permission-matrix';
import {
  ansibleBody,
  snapshot,
  type TemplateFixtures,
  templateFixtures,
} from '../../../test/support/template-fixtures';

/** The English wording of a path problem, as the API answers it. */
const said = (problem: ReturnType<typeof playbookPathProblem>) => (problem ? errorMessage(problem) : null);

/** Playbook values that must never be saved, with the message each gets. */
const badPaths: Array<[string, string]> = [
  ['-c', errorMessage(playbookPathMessages.option)],
  ['--version', errorMessage(playbookPathMessages.option)],
  ['/etc/passwd', errorMessage(playbookPathMessages.absolute)],
  ['../x', errorMessage(playbookPathMessages.outside)],
  ['roles/../../x', errorMessage(playbookPathMessages.outside)],
  ['a/./../../b', errorMessage(playbookPathMessages.outside)],
  ['site.yml\nrm -rf /', errorMessage(playbookPathMessages.control)],
  ['site\u0000.yml', errorMessage(playbookPathMessages.control)],
  ['site\t.yml', errorMessage(playbookPathMessages.control)],
  ['x\u2028y', errorMessage(playbookPathMessages.control)],
];
/** Through the API a NUL never reaches the path rule: the request guard refuses it first, naming the field. */
const apiBadPaths = badPaths.filter(([path]) => !path.includes('\u0000'));

describe('the playbook path rule', () => {
  it('accepts paths inside the repository and names the problem of every other', () => {
    for (const good of [
      'site.yml',
      'playbooks/site.yml',
      'a/../site.yml',
      './infra',
      'infra/',
      '',
      'x-y/-z.yml',
    ])
      expect(playbookPathProblem(good), good).toBeNull();
    for (const [bad, message] of badPaths)
      expect(said(playbookPathProblem(bad)), JSON.stringify(bad)).toBe(message);
    expect(said(playbookPathProblem('a'.repeat(256)))).toBe(
      'Playbook filename must be at most 255 characters',
    );
  });

  it('is the rule the template form checks (the same schema runs in the browser)', () => {
    const base = { name: 'T', repository_id: 1, environment_id: 1, inventory_id: 1 };
    for (const app of ['ansible', 'bash', 'terraform', 'tofu', 'pulumi'])
      for (const [playbook, message] of badPaths) {
        const r = templateInput.safeParse({
          ...base,
          app,
          playbook,
          inventory_id: app === 'ansible' ? 1 : null,
        });
        expect(r.success, `${app} ${JSON.stringify(playbook)}`).toBe(false);
        const issue = r.error?.issues.find((i) => i.path[0] === 'playbook');
        expect(issue && errorMessage(codeOfIssue(issue))).toBe(
          playbook.trim() === playbook ? message : said(playbookPathProblem(playbook.trim())),
        );
      }
  });
});

describe.each(testDialects())('playbook paths at template save and backup restore on $name', (dialect) => {
  let h: Harness;
  let projectId: number;
  let clients: Team;
  let fx: TemplateFixtures;
  let base: string;

  beforeAll(async () => {
    h = await createHarness(dialect);
    clients = await createTeam(h, 'Templates project');
    projectId = clients.projectId;
    fx = await templateFixtures(h, projectId);
    base = `/api/project/${projectId}`;
  });
  afterAll(async () => h?.close());

  const bodyFor = (app: string, playbook: string) =>
    ansibleBody(fx, {
      app,
      playbook,
      inventory_id: app === 'ansible' ? fx.inventory : app === 'terraform' ? fx.workspace : null,
    });

  it('refuses every bad path with a 400 naming playbook, on create and on update, for every app', async () => {
    const before = await snapshot(h);
    const existing = (await clients.owner.post(`${base}/templates`, bodyFor('bash', 'run.sh'))).json();
    const afterCreate = await snapshot(h);
    for (const app of ['ansible', 'bash', 'terraform', 'pulumi'])
      for (const [playbook] of apiBadPaths) {
        const expected = said(playbookPathProblem(playbook.trim()));
        for (const res of [
          await clients.manager.post(`${base}/templates`, bodyFor(app, playbook)),
          await clients.owner.put(`${base}/templates/${existing.id}`, {
            ...bodyFor(app, playbook),
            id: existing.id,
          }),
        ]) {
          expect(res.statusCode, `${app} ${JSON.stringify(playbook)}`).toBe(400);
          expect(res.json().fields.playbook).toBe(expected);
        }
      }
    expect(await snapshot(h)).toEqual(afterCreate);
    expect(afterCreate).not.toEqual(before);
    // Terraform, tofu and pulumi take a sub-directory, which may be empty.
    for (const app of ['terraform', 'pulumi']) {
      const ok = await clients.manager.post(`${base}/templates`, bodyFor(app, ''));
      expect(ok.statusCode, ok.body).toBe(201);
    }
  });

  it('refuses a backup whose template playbook leaves the repository, restoring nothing', async () => {
    const backup = (await clients.owner.get(`${base}/backup`)).json();
    const projects = await h.deps.db.selectFrom('project').select('id').execute();
    for (const [playbook, message] of apiBadPaths) {
      const bad = {
        ...backup,
        templates: [{ name: 'Evil', app: 'bash', playbook, repository: null, environment: null }],
      };
      const res = await clients.admin.post('/api/projects/restore', bad);
      expect(res.statusCode, JSON.stringify(playbook)).toBe(400);
      expect(res.json().error).toBe(`Invalid backup: templates[0].playbook: ${message}`);
    }
    expect(await h.deps.db.selectFrom('project').select('id').execute()).toEqual(projects);
  });

  it('refuses a workspace inventory whose name would read as an option', async () => {
    for (const name of ['-chdir=/etc', '.hidden', 'a b', 'a/b', 'x'.repeat(91)]) {
      const res = await clients.manager.post(`${base}/inventory`, {
        name: 'Workspace',
        type: 'terraform-workspace',
        inventory: name,
      });
      expect(res.statusCode, name).toBe(400);
      expect(res.json().fields.inventory).toMatch(/^Workspace name may contain only letters, digits/);
    }
    const ok = await clients.manager.post(`${base}/inventory`, {
      name: 'Workspace with a valid name',
      type: 'terraform-workspace',
      inventory: 'prod_eu-1.a',
    });
    expect(ok.statusCode, ok.body).toBe(201);
  });
});
