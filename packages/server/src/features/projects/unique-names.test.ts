import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { createTemplatesProject, type TemplatesProject } from '../../../test/support/template-fixtures';

/** The answer to a name already taken: 400 naming the field, with the code clients translate. */
function expectNameTaken(
  res: { statusCode: number; json(): Record<string, unknown> },
  message: string,
  field = 'name',
) {
  expect(res.statusCode).toBe(400);
  const body = res.json() as {
    error: string;
    code: string;
    fields: Record<string, string>;
    field_errors: Record<string, { code: string }>;
  };
  expect(body.error).toBe(message);
  // Each kind has its own code (a project's name is taken among the user's projects, the others' in the project).
  expect(body.code).toMatch(/^(key|inventory|environment|repository|project)_name_taken$|^view_title_taken$/);
  expect(body.fields).toEqual({ [field]: message });
  expect(body.field_errors[field]?.code).toBe(body.code);
}

describe.each(testDialects())('unique names on $name', (dialect) => {
  let h: Harness;
  let project: TemplatesProject;

  beforeAll(async () => {
    h = await createHarness(dialect);
    project = await createTemplatesProject(h);
  });
  afterAll(async () => h?.close());

  const kinds = (p: TemplatesProject): [string, string, (name: string) => Record<string, unknown>][] => [
    ['keys', 'A key with this name already exists in this project', (name) => ({ name, type: 'none' })],
    [
      'inventory',
      'An inventory with this name already exists in this project',
      (name) => ({ name, type: 'static', inventory: '[all]\nhost\n', ssh_key_id: p.fx.key }),
    ],
    [
      'environment',
      'An environment with this name already exists in this project',
      (name) => ({ name, json: '{}', env: '{}' }),
    ],
    [
      'repositories',
      'A repository with this name already exists in this project',
      (name) => ({ name, git_url: 'https://example.test/app.git', git_branch: 'main', ssh_key_id: p.fx.key }),
    ],
    ['views', 'A view with this title already exists in this project', (name) => ({ title: name })],
  ];

  it('refuses a second key, inventory, environment, repository or view of one name in a project', async () => {
    const { admin, base } = project;
    for (const [path, message, body] of kinds(project)) {
      const field = path === 'views' ? 'title' : 'name';
      const first = await admin.post(`${base}/${path}`, body('Shared name'));
      expect(first.statusCode, `${path}: ${first.body}`).toBe(201);
      expectNameTaken(await admin.post(`${base}/${path}`, body(' shared NAME ')), message, field);
      const second = await admin.post(`${base}/${path}`, body('Other name'));
      expect(second.statusCode, path).toBe(201);
      const url = `${base}/${path}/${second.json().id}`;
      expectNameTaken(await admin.put(url, { ...body('SHARED name'), id: second.json().id }), message, field);
      // Saving an object under its own name is not a clash.
      expect((await admin.put(url, { ...body('Other name'), id: second.json().id })).statusCode, path).toBe(
        204,
      );
      // The other project keeps its own names.
      const other = project.other;
      const elsewhere = path === 'views' || path === 'environment' || path === 'keys';
      if (elsewhere)
        expect(
          (await other.owner.post(`/api/project/${other.projectId}/${path}`, body('Shared name'))).statusCode,
        ).toBe(201);
    }
  });

  it('keeps environment secret names apart from key names', async () => {
    const { admin, base } = project;
    const env = await admin.post(`${base}/environment`, {
      name: 'With secret',
      json: '{}',
      env: '{}',
      secrets: [{ type: 'env', name: 'Deploy token', secret: 's3cret', operation: 'create' }],
    });
    expect(env.statusCode).toBe(201);
    expect((await admin.post(`${base}/keys`, { name: 'Deploy token', type: 'none' })).statusCode).toBe(201);
  });

  it('restores a backup that repeats a name within a kind, the repeats suffixed', async () => {
    const owner: Client = project.clients.owner;
    const backup = (await owner.get(`${project.base}/backup`)).json();
    // A backup (from the peer, say) that repeats a name within a kind.
    backup.views = [
      ...(backup.views ?? []),
      { title: 'Twice', position: 5 },
      { title: 'twice', position: 6 },
    ];
    const restored = await owner.post('/api/projects/restore', backup);
    expect(restored.statusCode, restored.body).toBe(200);
    const views = (await owner.get(`/api/project/${restored.json().id}/views`)).json();
    expect(views.map((v: { title: string }) => v.title)).toEqual(
      expect.arrayContaining(['Twice', 'twice (2)']),
    );
  });

  it("refuses a project name another of the user's projects has, on create and rename", async () => {
    const message = 'You already have a project with this name';
    const maker = await h.userClient({ can_create_project: true });
    const first = await maker.post('/api/projects', { name: 'Payments' });
    expect(first.statusCode, first.body).toBe(201);
    expectNameTaken(await maker.post('/api/projects', { name: '  PAYMENTS ' }), message);
    const second = await maker.post('/api/projects', { name: 'Billing' });
    expect(second.statusCode, second.body).toBe(201);
    const id = second.json().id as number;
    expectNameTaken(await maker.put(`/api/project/${id}`, { id, name: 'payments' }), message);
    // Keeping its own name (in another case) is not a clash.
    expect((await maker.put(`/api/project/${id}`, { id, name: 'BILLING' })).statusCode).toBe(204);

    // Another user's projects are not in this user's switcher: the name is free for them, and for an admin who is
    // not a member of the first one.
    const stranger = await h.userClient({ can_create_project: true });
    expect((await stranger.post('/api/projects', { name: 'Payments' })).statusCode).toBe(201);
    const admin = await h.userClient({ admin: true });
    const adminsFirst = await admin.post('/api/projects', { name: 'Payments' });
    expect(adminsFirst.statusCode, adminsFirst.body).toBe(201);
    expectNameTaken(await admin.post('/api/projects', { name: 'payments' }), message);

    // The names a user may not reuse are those of all their memberships, whatever the role.
    const ledger = await admin.post('/api/projects', { name: 'Ledger' });
    const ledgerId = ledger.json().id as number;
    const joined = await admin.post(`/api/project/${ledgerId}/users`, {
      user_id: maker.userId,
      role: 'guest',
    });
    expect(joined.statusCode, joined.body).toBeLessThan(300);
    expectNameTaken(await maker.post('/api/projects', { name: 'ledger' }), message);
  });
});
