import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  type Actor,
  createProjectActors,
  expectCodesByActor,
  memberCodes,
  ownerCodes,
  type ProjectActors,
} from '../../../test/support/project-actors';
import { insertRunner as insertRunnerRow } from '../../../test/support/runner-rows';
import { now } from '../../db/values';
import { sha256 } from '../../lib/crypto';

/** Admin only: admins may, every other signed-in user is refused, anonymous callers must sign in. */
const adminCodes = (ok: number): Record<Actor, number> => ({
  admin: ok,
  owner: 403,
  manager: 403,
  task_runner: 403,
  guest: 403,
  'non-member': 403,
  anonymous: 401,
});

describe.each(testDialects())('remote runner management on $name', (dialect) => {
  let h: Harness;
  let team: ProjectActors;
  let other: ProjectActors;
  let admin: Client;

  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createProjectActors(h, 'Runners A');
    other = await createProjectActors(h, 'Runners B');
    admin = team.admin;
  });
  afterAll(async () => h?.close());

  const insertRunner = (values: Parameters<typeof insertRunnerRow>[1]) => insertRunnerRow(h.deps.db, values);

  it('lists global runners to admins without secrets, with online state and running slots', async () => {
    const id = await insertRunner({
      project_id: null,
      name: 'global-one',
      tags: ['linux', 'gpu'],
      online: true,
    });
    const projectRunner = await insertRunner({ project_id: team.projectId, name: 'project-one' });
    // A task of the runner holding a slot, and a finished one that does not.
    for (const status of ['running', 'success']) {
      await h.deps.db
        .insertInto('task')
        .values({
          project_id: team.projectId,
          template_id: 0,
          status,
          message: '',
          user_id: null,
          integration_id: null,
          schedule_id: null,
          created: now(),
          start: null,
          end: null,
          version: null,
          build_task_id: null,
          commit_hash: null,
          commit_message: null,
          playbook: '',
          environment: '',
          secret: null,
          arguments: null,
          git_branch: null,
          inventory_id: null,
          params: '{}',
          debug: 0,
          dry_run: 0,
          diff: 0,
          runner: null,
          control: null,
          remote_runner_id: id,
        })
        .execute();
    }

    const res = await admin.get('/api/runners');
    expect(res.statusCode).toBe(200);
    const list = res.json();
    const one = list.find((r: { id: number }) => r.id === id);
    expect(one).toEqual({
      id,
      project_id: null,
      name: 'global-one',
      tags: ['linux', 'gpu'],
      version: '1.2.3',
      max_parallel_tasks: 2,
      active: true,
      online: true,
      touched: expect.any(String),
      started_at: expect.any(String),
      running_tasks: 1,
      created: expect.any(String),
      sandbox: null,
      protocol: null,
      incompatible: false,
    });
    expect(list.some((r: { id: number }) => r.id === projectRunner)).toBe(false);
    expect(res.body).not.toContain('token_hash');
    expect(res.body).not.toContain('PUBLIC KEY');

    const all = (await admin.get('/api/runners?all=1')).json();
    const listed = all.find((r: { id: number }) => r.id === projectRunner);
    expect(listed).toMatchObject({ project_id: team.projectId, project_name: 'Runners A', online: false });
    expect(listed.touched).toBeNull();
    expect((await admin.get('/api/runners?all=yes')).statusCode).toBe(400);
  });

  it('keeps the global runner routes to admins', async () => {
    const id = await insertRunner({ project_id: null });
    await expectCodesByActor(h, team, adminCodes(200), (c) => c.get('/api/runners'));
    await expectCodesByActor(h, team, adminCodes(200), (c) => c.get(`/api/runners/${id}`));
    await expectCodesByActor(h, team, adminCodes(200), (c) => c.put(`/api/runners/${id}`, { active: false }));
    await expectCodesByActor(h, team, adminCodes(201), (c) => c.post('/api/runners/registration-tokens'));
    await expectCodesByActor(h, team, adminCodes(204), async (c, actor) =>
      c.del(`/api/runners/${actor === 'admin' ? id : await insertRunner({ project_id: null })}`),
    );
  });

  it('edits a global runner: name, tags (trimmed, de-duplicated), max parallel, enabled', async () => {
    const id = await insertRunner({ project_id: null, name: 'edit-me' });
    const res = await admin.put(`/api/runners/${id}`, {
      name: '  renamed  ',
      tags: [' linux ', 'linux', 'arm64'],
      max_parallel_tasks: 5,
      active: false,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id,
      name: 'renamed',
      tags: ['linux', 'arm64'],
      max_parallel_tasks: 5,
      active: false,
    });
    // Absent fields stay.
    expect((await admin.put(`/api/runners/${id}`, { active: true })).json()).toMatchObject({
      name: 'renamed',
      tags: ['linux', 'arm64'],
      active: true,
    });
    const event = await h.deps.db
      .selectFrom('event')
      .select('description')
      .where('object_type', '=', 'runner')
      .where('object_id', '=', id)
      .execute();
    expect(event.map((e) => e.description)).toContain('Runner renamed updated');
  });

  it('refuses hostile input with a 400 naming the problem', async () => {
    const id = await insertRunner({ project_id: null });
    const bad: [unknown, string][] = [
      [{ name: '' }, 'Name is required'],
      [{ name: 'x'.repeat(256) }, 'Name must be at most 255 characters'],
      [{ name: 'a\u0007b' }, 'Name must not contain control characters'],
      [{ tags: ['ok', ''] }, 'Tags is required'],
      [{ tags: ['x'.repeat(65)] }, 'Tags must be at most 64 characters'],
      [{ tags: ['a\nb'] }, 'Tags must not contain control characters'],
      [{ tags: Array.from({ length: 33 }, (_, i) => `t${i}`) }, 'Tags must have at most 32 entries'],
      [{ tags: 'linux' }, 'Tags must be a list'],
      [{ tags: [7] }, 'Tags must be a string'],
      [{ max_parallel_tasks: 0 }, 'Max parallel tasks must be 1 or greater'],
      [{ max_parallel_tasks: 1001 }, 'Max parallel tasks must be at most 1000'],
      [{ max_parallel_tasks: 1.5 }, 'Max parallel tasks must be an integer'],
      [{ active: 'yes' }, 'Active must be true or false'],
    ];
    for (const [body, message] of bad) {
      const res = await admin.put(`/api/runners/${id}`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error, JSON.stringify(body)).toContain(message);
    }
    expect((await admin.put('/api/runners/999999', { active: true })).statusCode).toBe(404);
    expect((await admin.put('/api/runners/abc', { active: true })).statusCode).toBe(400);
  });

  it('refuses a name another runner of the same scope has, but not one of another scope', async () => {
    await insertRunner({ project_id: null, name: 'taken' });
    await insertRunner({ project_id: team.projectId, name: 'taken-in-project' });
    const id = await insertRunner({ project_id: null });
    const res = await admin.put(`/api/runners/${id}`, { name: 'taken' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('A runner named taken already exists');
    expect((await admin.put(`/api/runners/${id}`, { name: 'taken-in-project' })).statusCode).toBe(200);
    const pr = await insertRunner({ project_id: team.projectId });
    const base = `/api/project/${team.projectId}`;
    expect((await team.creator.put(`${base}/runners/${pr}`, { name: 'taken-in-project' })).statusCode).toBe(
      409,
    );
    expect((await team.creator.put(`${base}/runners/${pr}`, { name: 'taken' })).statusCode).toBe(200);
  });

  it('does not reach project runners through the global routes', async () => {
    const pr = await insertRunner({ project_id: team.projectId });
    expect((await admin.get(`/api/runners/${pr}`)).statusCode).toBe(404);
    expect((await admin.put(`/api/runners/${pr}`, { active: false })).statusCode).toBe(404);
    expect((await admin.del(`/api/runners/${pr}`)).statusCode).toBe(404);
    const row = await h.deps.db
      .selectFrom('remote_runner')
      .select('active')
      .where('id', '=', pr)
      .executeTakeFirst();
    expect(Number(row?.active)).toBe(1);
  });

  it('makes one-time registration tokens stored only as their SHA-256', async () => {
    const res = await admin.post('/api/runners/registration-tokens');
    expect(res.statusCode).toBe(201);
    const { token, expires_at, project_id } = res.json();
    expect(project_id).toBeNull();
    expect(token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const hour = Date.parse(expires_at) - Date.now();
    expect(hour).toBeGreaterThan(59 * 60_000);
    expect(hour).toBeLessThanOrEqual(60 * 60_000);
    const rows = await h.deps.db.selectFrom('runner_registration_token').selectAll().execute();
    const row = rows.find((r) => r.token_hash === sha256(token));
    expect(row).toMatchObject({ project_id: null, used_at: null, expires_at });
    expect(JSON.stringify(rows)).not.toContain(token);
    // A second call makes another token.
    const again = (await admin.post('/api/runners/registration-tokens')).json();
    expect(again.token).not.toBe(token);
    expect(h.logLines.join('\n')).not.toContain(token);

    const base = `/api/project/${team.projectId}`;
    const projectToken = await team.creator.post(`${base}/runners/registration-tokens`);
    expect(projectToken.statusCode).toBe(201);
    expect(projectToken.json().project_id).toBe(team.projectId);
    const stored = await h.deps.db
      .selectFrom('runner_registration_token')
      .select(['project_id', 'user_id'])
      .where('token_hash', '=', sha256(projectToken.json().token))
      .executeTakeFirst();
    expect(stored).toEqual({ project_id: team.projectId, user_id: team.creator.userId });
  });

  describe('project runners', () => {
    const base = () => `/api/project/${team.projectId}`;

    it('lets members list them and their tags, and only owners (and admins) change them', async () => {
      const id = await insertRunner({
        project_id: team.projectId,
        name: 'proj-list',
        tags: ['zeta', 'alpha'],
      });
      await insertRunner({ project_id: null, tags: ['global-tag', 'alpha'] });
      await insertRunner({ project_id: other.projectId, tags: ['foreign-tag'] });

      await expectCodesByActor(h, team, memberCodes(200), (c) => c.get(`${base()}/runners`));
      await expectCodesByActor(h, team, memberCodes(200), (c) => c.get(`${base()}/runner_tags`));
      await expectCodesByActor(h, team, ownerCodes(200), (c) =>
        c.put(`${base()}/runners/${id}`, { max_parallel_tasks: 3 }),
      );
      await expectCodesByActor(h, team, ownerCodes(201), (c) =>
        c.post(`${base()}/runners/registration-tokens`),
      );
      await expectCodesByActor(h, team, ownerCodes(204), async (c, actor) =>
        c.del(
          `${base()}/runners/${['admin', 'owner'].includes(actor) ? await insertRunner({ project_id: team.projectId }) : id}`,
        ),
      );

      const list = (await team.members.guest.get(`${base()}/runners`)).json();
      expect(list.every((r: { project_id: number }) => r.project_id === team.projectId)).toBe(true);
      expect(list.find((r: { id: number }) => r.id === id)).toMatchObject({
        name: 'proj-list',
        max_parallel_tasks: 3,
      });
      expect(JSON.stringify(list)).not.toContain('PUBLIC KEY');

      const tags = (await team.members.guest.get(`${base()}/runner_tags`)).json();
      expect(tags).toEqual([...tags].sort((a: string, b: string) => a.localeCompare(b)));
      expect(tags).toEqual(expect.arrayContaining(['alpha', 'global-tag', 'zeta']));
      expect(tags).not.toContain('foreign-tag');
      expect(tags.filter((t: string) => t === 'alpha')).toHaveLength(1);
    });

    it("answers 404 for another project's runner and for a global one", async () => {
      const foreign = await insertRunner({ project_id: other.projectId, name: 'foreign' });
      const global = await insertRunner({ project_id: null, name: 'global-x' });
      for (const id of [foreign, global]) {
        expect((await team.creator.get(`${base()}/runners/${id}`)).statusCode).toBe(404);
        expect((await team.creator.put(`${base()}/runners/${id}`, { active: false })).statusCode).toBe(404);
        expect((await team.creator.del(`${base()}/runners/${id}`)).statusCode).toBe(404);
        expect((await admin.put(`${base()}/runners/${id}`, { active: false })).statusCode).toBe(404);
      }
      const rows = await h.deps.db
        .selectFrom('remote_runner')
        .select('active')
        .where('id', 'in', [foreign, global])
        .execute();
      expect(rows.map((r) => Number(r.active))).toEqual([1, 1]);
      // The other project's owner can, in their project.
      const ok = await other.creator.put(`/api/project/${other.projectId}/runners/${foreign}`, {
        active: false,
      });
      expect(ok.statusCode).toBe(200);
    });

    it('deletes the project runners with the project', async () => {
      const doomed = await createProjectActors(h, 'Doomed');
      const id = await insertRunner({ project_id: doomed.projectId });
      await doomed.creator.post(`/api/project/${doomed.projectId}/runners/registration-tokens`);
      expect((await doomed.creator.del(`/api/project/${doomed.projectId}`)).statusCode).toBe(204);
      const left = await h.deps.db.selectFrom('remote_runner').select('id').where('id', '=', id).execute();
      expect(left).toEqual([]);
      const tokens = await h.deps.db
        .selectFrom('runner_registration_token')
        .select('id')
        .where('project_id', '=', doomed.projectId)
        .execute();
      expect(tokens).toEqual([]);
    });
  });
});
