import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import {
  expectStatusByCaller,
  manageResourceStatusTests,
  readCodes,
  writeCodes,
} from '../../../test/support/permission-matrix';
import {
  ansibleBody,
  createTemplatesProject,
  expectBodiesRefused,
  snapshot,
  type TemplatesProject,
} from '../../../test/support/template-fixtures';

const MB = 'x'.repeat(1024 * 1024);

describe.each(testDialects())('views on $name', (dialect) => {
  let h: Harness;
  let project: TemplatesProject;
  let otherProjectId: number;
  let otherViewId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    project = await createTemplatesProject(h);
    const other = project.other;
    otherProjectId = other.projectId;
    const res = await other.owner.post(`/api/project/${otherProjectId}/views`, { title: 'Foreign' });
    otherViewId = res.json().id;
  });
  afterAll(async () => h?.close());

  const newView = async (title = 'View') => {
    const res = await project.admin.post(`${project.base}/views`, { title });
    expect(res.statusCode).toBe(201);
    return res.json().id as number;
  };

  it('creates views at the end, lists them by position then id, and reads one', async () => {
    const a = await project.admin.post(`${project.base}/views`, { title: '  Build  ' });
    expect(a.statusCode).toBe(201);
    expect(a.json()).toEqual({
      id: expect.any(Number),
      project_id: project.projectId,
      title: 'Build',
      position: 0,
    });
    const b = await project.admin.post(`${project.base}/views`, {
      title: 'Deploy',
      project_id: project.projectId,
    });
    expect(b.json().position).toBe(1);
    const c = await project.admin.post(`${project.base}/views`, { title: 'Tools', position: 0 });
    expect(c.json().position).toBe(0);

    const list = await project.clients.guest.get(`${project.base}/views`);
    expect(list.statusCode).toBe(200);
    expect(list.json().map((v: { title: string }) => v.title)).toEqual(['Build', 'Tools', 'Deploy']);

    const one = await project.clients.guest.get(`${project.base}/views/${b.json().id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(b.json());
  });

  it('updates the title and keeps the position unless given', async () => {
    const id = await newView('Old');
    const before = (await project.admin.get(`${project.base}/views/${id}`)).json();
    const res = await project.clients.manager.put(`${project.base}/views/${id}`, { title: 'New' });
    expect(res.statusCode).toBe(204);
    expect((await project.admin.get(`${project.base}/views/${id}`)).json()).toEqual({
      ...before,
      title: 'New',
    });
    expect(
      (await project.admin.put(`${project.base}/views/${id}`, { title: 'New', position: 7 })).statusCode,
    ).toBe(204);
    expect((await project.admin.get(`${project.base}/views/${id}`)).json().position).toBe(7);
  });

  it('deletes a view and moves its templates out of any view', async () => {
    const id = await newView('Doomed');
    const tpl = await project.admin.post(
      `${project.base}/templates`,
      ansibleBody(project.fx, { name: 'In view', view_id: id }),
    );
    expect(tpl.statusCode).toBe(201);
    const inView = await project.admin.get(`${project.base}/views/${id}/templates`);
    expect(inView.statusCode).toBe(200);
    expect(inView.json().map((t: { id: number }) => t.id)).toEqual([tpl.json().id]);

    expect((await project.admin.del(`${project.base}/views/${id}`)).statusCode).toBe(204);
    expect((await project.admin.get(`${project.base}/views/${id}`)).statusCode).toBe(404);
    const after = await project.admin.get(`${project.base}/templates/${tpl.json().id}`);
    expect(after.json().view_id).toBeNull();
  });

  it('lists only the templates of the view', async () => {
    const v1 = await newView('One');
    const v2 = await newView('Two');
    await project.admin.post(
      `${project.base}/templates`,
      ansibleBody(project.fx, { name: 'B in one', view_id: v1 }),
    );
    await project.admin.post(
      `${project.base}/templates`,
      ansibleBody(project.fx, { name: 'A in one', view_id: v1 }),
    );
    await project.admin.post(
      `${project.base}/templates`,
      ansibleBody(project.fx, { name: 'In two', view_id: v2 }),
    );
    const res = await project.clients.guest.get(`${project.base}/views/${v1}/templates`);
    expect(res.json().map((t: { name: string }) => t.name)).toEqual(['A in one', 'B in one']);
    expect(res.json()[0]).toHaveProperty('last_task', null);
  });

  it('reorders views with a map of id to position', async () => {
    const x = await newView('X');
    const y = await newView('Y');
    const res = await project.clients.owner.post(`${project.base}/views/positions`, { [x]: 1000, [y]: 999 });
    expect(res.statusCode).toBe(204);
    expect((await project.admin.get(`${project.base}/views/${x}`)).json().position).toBe(1000);
    const titles = (await project.admin.get(`${project.base}/views`))
      .json()
      .map((v: { title: string }) => v.title);
    expect(titles.slice(-2)).toEqual(['Y', 'X']);
    expect((await project.admin.post(`${project.base}/views/positions`, {})).statusCode).toBe(204);
  });

  it('refuses positions naming a view of another project or a non-id, changing nothing', async () => {
    const x = await newView('Stay');
    const before = await snapshot(h);
    const foreign = await project.admin.post(`${project.base}/views/positions`, { [x]: 5, [otherViewId]: 6 });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().error).toBe(`View ${otherViewId} does not exist in this project`);
    for (const body of [{ abc: 1 }, { [x]: -1 }, { [x]: 1.5 }, { [x]: 'x' }, [1, 2], { [x]: MB }]) {
      const res = await project.admin.post(`${project.base}/views/positions`, body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toHaveProperty('error');
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('requires a title', async () => {
    const id = await newView('Keep');
    const before = await snapshot(h);
    for (const body of [{}, { title: '' }, { title: '   ' }, { title: null }]) {
      for (const res of [
        await project.admin.post(`${project.base}/views`, body),
        await project.admin.put(`${project.base}/views/${id}`, body),
      ]) {
        expect(res.statusCode).toBe(400);
        expect(res.json().error).toBe('Title is required');
      }
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('refuses wrong types, malformed JSON, 1 MB strings and a foreign project_id, changing nothing', async () => {
    const id = await newView('Keep too');
    const before = await snapshot(h);
    const bodies: unknown[] = [
      { title: 5 },
      { title: ['a'] },
      { title: 'ok', position: 'first' },
      { title: 'ok', position: -1 },
      { title: MB },
      { title: 'ok', project_id: otherProjectId },
      '{"title": "broken"',
      'null',
      '[]',
    ];
    await expectBodiesRefused(project.admin, `${project.base}/views`, `${project.base}/views/${id}`, bodies);
    expect(await project.admin.post(`${project.base}/views`, { title: MB }).then((r) => r.json().error)).toBe(
      'Title must be at most 100 characters',
    );
    expect(await snapshot(h)).toEqual(before);
  });

  it('answers 404 for a view of another project or an unknown id', async () => {
    const before = await snapshot(h);
    for (const id of [otherViewId, 999999]) {
      expect((await project.admin.get(`${project.base}/views/${id}`)).json()).toMatchObject({
        error: 'View not found',
      });
      expect((await project.admin.get(`${project.base}/views/${id}/templates`)).statusCode).toBe(404);
      expect((await project.admin.put(`${project.base}/views/${id}`, { title: 'Hijack' })).statusCode).toBe(
        404,
      );
      expect((await project.admin.del(`${project.base}/views/${id}`)).statusCode).toBe(404);
    }
    expect((await project.admin.get(`${project.base}/views/abc`)).statusCode).toBe(400);
    expect(await snapshot(h)).toEqual(before);
  });

  it('records an event for every change', async () => {
    const id = await newView('Audited');
    await project.admin.put(`${project.base}/views/${id}`, { title: 'Audited 2' });
    await project.admin.post(`${project.base}/views/positions`, { [id]: 3 });
    await project.admin.del(`${project.base}/views/${id}`);
    const events = await h.deps.db
      .selectFrom('event')
      .select(['description', 'object_type', 'user_id'])
      .where('project_id', '=', project.projectId)
      .where('object_type', '=', 'view')
      .orderBy('id', 'desc')
      .limit(4)
      .execute();
    expect(events.map((e) => e.description)).toEqual([
      'View Audited 2 deleted',
      'Views reordered',
      'View Audited 2 updated',
      'View Audited created',
    ]);
    expect(events.every((e) => e.user_id === project.admin.userId)).toBe(true);
  });

  describe('permission matrix', () => {
    it('GET views and views/{id} and views/{id}/templates: members read', async () => {
      const id = await newView('Matrix');
      for (const path of ['/views', `/views/${id}`, `/views/${id}/templates`]) {
        await expectStatusByCaller(project.clients, readCodes(), (c) => c.get(`${project.base}${path}`));
      }
    });

    manageResourceStatusTests(() => project, 'views', {
      body: (caller, method) => ({ title: method === 'POST' ? `By ${caller}` : caller }),
      updated: () => newView('Matrix put'),
      deleted: (caller) => newView(`Matrix del ${caller}`),
    });

    it('POST views/positions needs manageProjectResources', async () => {
      const id = await newView('Matrix pos');
      await expectStatusByCaller(project.clients, writeCodes(204), (c) =>
        c.post(`${project.base}/views/positions`, { [id]: 2 }),
      );
    });
  });
});
