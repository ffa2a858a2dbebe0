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

/** Branch names git would read as an option, a revision range or a pattern; never stored. */
const badBranches = ['--upload-pack=touch /tmp/x', '-b', 'ma\nin', 'a..b', 'a b', 'x:y', 'main.lock', 'a~1'];

describe.each(testDialects())('branch names and repository URLs wherever they enter, on $name', (dialect) => {
  let h: Harness;
  let clients: Team;
  let fx: TemplateFixtures;
  let base: string;
  let templateId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    clients = await createTeam(h, 'Templates project');
    const projectId = clients.projectId;
    fx = await templateFixtures(h, projectId);
    base = `/api/project/${projectId}`;
    const res = await clients.owner.post(
      `${base}/templates`,
      ansibleBody(fx, { git_branch: 'release/1.0', allow_override_branch_in_task: true }),
    );
    expect(res.statusCode, res.body).toBe(201);
    templateId = res.json().id;
  });
  afterAll(async () => h?.close());

  it('refuses a bad template branch on create and update, and keeps a good one', async () => {
    expect((await clients.owner.get(`${base}/templates/${templateId}`)).json().git_branch).toBe(
      'release/1.0',
    );
    const before = await snapshot(h);
    for (const git_branch of badBranches) {
      for (const res of [
        await clients.manager.post(`${base}/templates`, ansibleBody(fx, { git_branch })),
        await clients.owner.put(`${base}/templates/${templateId}`, {
          ...ansibleBody(fx, { git_branch }),
          id: templateId,
        }),
      ]) {
        expect(res.statusCode, git_branch).toBe(400);
        expect(res.json().fields?.git_branch, git_branch).toBe('Incorrect branch name');
      }
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('refuses a bad branch override when a task is started', async () => {
    const before = await snapshot(h);
    for (const git_branch of badBranches) {
      const res = await clients.task_runner.post(`${base}/tasks`, { template_id: templateId, git_branch });
      expect(res.statusCode, git_branch).toBe(400);
      expect(res.json().fields?.git_branch, git_branch).toBe('Incorrect branch name');
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('refuses a backup whose repository URL or branch git would misread, restoring nothing', async () => {
    const backup = (await clients.owner.get(`${base}/backup`)).json();
    const projects = await h.deps.db.selectFrom('project').select('id').execute();
    const repository = {
      name: 'Evil',
      git_url: 'https://example.test/r.git',
      git_branch: 'main',
      ssh_key: null,
    };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ repositories: [{ ...repository, git_url: 'ext::sh -c touch% /tmp/x' }] }, 'repositories[0].git_url'],
      [{ repositories: [{ ...repository, git_url: '--upload-pack=x' }] }, 'repositories[0].git_url'],
      [{ repositories: [{ ...repository, git_url: '../repo_1.git' }] }, 'repositories[0].git_url'],
      [{ repositories: [{ ...repository, git_branch: '--upload-pack=x' }] }, 'repositories[0].git_branch'],
      [
        { templates: [{ name: 'T', app: 'bash', playbook: 'run.sh', git_branch: '-b' }] },
        'templates[0].git_branch',
      ],
    ];
    for (const [change, where] of cases) {
      const res = await clients.admin.post('/api/projects/restore', { ...backup, ...change });
      expect(res.statusCode, where).toBe(400);
      expect(res.json().error, where).toContain(where);
    }
    expect(await h.deps.db.selectFrom('project').select('id').execute()).toEqual(projects);
  });
});
